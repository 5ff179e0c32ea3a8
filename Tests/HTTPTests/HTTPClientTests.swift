import Foundation
import HTTP
import TestSupport
import Testing

@Suite struct HTTPClientTests {
    @Test func twoHundredConcurrentRequestsAllSucceed() async throws {
        let (server, base) = try startServer { router in
            router.route("POST", "/echo") { request in HTTPResponse(status: 200, body: request.body) }
        }
        let client = try HTTPClient()

        let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<200 {
                group.addTask {
                    let response = try await client.send(HTTPClientRequest(
                        method: "POST", url: "\(base)/echo", body: Data("request \(index)".utf8), timeout: .seconds(30)))
                    #expect(response.status == 200)
                    return (index, String(decoding: response.body, as: UTF8.self))
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(bodies.count == 200)
        #expect(bodies.allSatisfy { $0.value == "request \($0.key)" })
        #expect(server.connectionsAccepted <= 32)  // the per-host connection cap

        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test func theConfiguredPerHostCapHolds() async throws {
        let (server, base, gate, entered) = try startHoldingServer("/held", answer: "released")
        var configuration = HTTPClientConfiguration()
        configuration.maxRequestsPerHost = 40
        let client = try HTTPClient(configuration: configuration)
        defer { gate.open() }

        let held = (0..<41).map { _ in Task { try await client.send(get("\(base)/held", timeout: .seconds(30))) } }
        try await eventually("40 requests to hold every connection slot") { entered.value == 40 }
        let code = await clientErrorCode { try await client.send(get("\(base)/held", timeout: .milliseconds(300))) }
        #expect(code == .timeout)
        #expect(entered.value == 40)

        gate.open()
        for task in held { #expect(try await task.value.status == 200) }
        #expect(server.connectionsAccepted == 40)
        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test func requestsBeyondThePerHostCapWaitTheirTurnWithinTheirTimeout() async throws {
        let (server, base, gate, entered) = try startHoldingServer("/held", answer: "released")
        let client = try HTTPClient()
        defer { gate.open() }

        let held = (0..<32).map { _ in Task { try await client.send(get("\(base)/held", timeout: .seconds(30))) } }
        try await eventually("32 requests to hold every connection slot") { entered.value == 32 }

        // The 33rd waits for a slot; its timeout runs while it waits.
        let started = ContinuousClock.now
        let code = await clientErrorCode { try await client.send(get("\(base)/held", timeout: .milliseconds(300))) }
        #expect(code == .timeout)
        // The handler never answers before the gate opens, so any answer at all is the client's own timeout;
        // the bound is generous because a loaded 2-core machine may run the transfer thread late.
        #expect(ContinuousClock.now - started < .seconds(30))

        // A waiting request can be cancelled.
        let waiting = Task { try await client.send(get("\(base)/held", timeout: .seconds(30))) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(entered.value == 32)

        // Freed slots go to the next waiting request.
        let queued = Task { try await client.send(get("\(base)/held", timeout: .seconds(30))) }
        gate.open()
        for task in held { #expect(try await task.value.status == 200) }
        #expect(try await queued.value.status == 200)
        #expect(server.connectionsAccepted == 32)

        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test func sequentialRequestsReuseKeptAliveConnections() async throws {
        let (server, base) = try startServer { router in
            router.route("GET", "/") { _ in .text(200, "ok") }
        }
        let client = try HTTPClient()
        for _ in 0..<50 {
            #expect(try await client.send(get("\(base)/")).status == 200)
        }
        #expect(server.connectionsAccepted >= 1)
        #expect(server.connectionsAccepted <= 2)

        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test func requestTimeoutAgainstASlowHandler() async throws {
        let (server, base, gate, _) = try startHoldingServer("/slow", answer: "late")
        let client = try HTTPClient()
        defer { gate.open() }

        let started = ContinuousClock.now
        let code = await clientErrorCode { try await client.send(get("\(base)/slow", timeout: .milliseconds(300))) }
        #expect(code == .timeout)
        // The handler never answers before the gate opens, so any answer at all is the client's own timeout;
        // the bound is generous because a loaded 2-core machine may run the transfer thread late.
        #expect(ContinuousClock.now - started < .seconds(30))

        gate.open()
        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test func oversizedResponseBodyFails() async throws {
        let (server, base) = try startServer { router in
            router.route("GET", "/big") { _ in HTTPResponse(status: 200, body: Data(count: 300_000)) }
            router.route("GET", "/fits") { _ in HTTPResponse(status: 200, body: Data(count: 100_000)) }
        }
        var configuration = HTTPClientConfiguration()
        configuration.maxResponseBytes = 100_000
        let client = try HTTPClient(configuration: configuration)

        #expect(try await client.send(get("\(base)/fits")).body.count == 100_000)
        let code = await clientErrorCode { try await client.send(get("\(base)/big")) }
        #expect(code == .bodyTooLarge)

        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test func connectionRefusedOnAStoppedServer() async throws {
        let (server, base) = try startServer { _ in }
        await server.stop(grace: .zero)
        let client = try HTTPClient()

        let code = await clientErrorCode { try await client.send(get("\(base)/")) }
        #expect(code == .connectionRefused)
        await client.shutdown()
    }

    @Test func cancellingSendAbortsTheTransfer() async throws {
        let (server, base, gate, entered) = try startHoldingServer("/slow", answer: "late") { router in
            router.route("GET", "/fast") { _ in .text(200, "fast") }
        }
        let client = try HTTPClient()
        defer { gate.open() }

        let task = Task { try await client.send(get("\(base)/slow")) }
        try await eventually("the handler to start") { entered.value == 1 }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }

        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(get("\(base)/fast"))
        }
        await #expect(throws: CancellationError.self) { try await cancelledFirst.value }

        #expect(try await client.send(get("\(base)/fast")).status == 200)  // the client still works
        gate.open()
        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test func shutdownFailsRequestsInFlightAndLaterSends() async throws {
        let (server, base, gate, entered) = try startHoldingServer("/slow", answer: "late")
        let client = try HTTPClient()
        defer { gate.open() }

        let pending = Task { await clientErrorCode { try await client.send(get("\(base)/slow")) } }
        try await eventually("the handler to start") { entered.value == 1 }
        await client.shutdown()
        #expect(await pending.value == .shutdown)
        #expect(await clientErrorCode { try await client.send(get("\(base)/slow")) } == .shutdown)

        gate.open()
        await server.stop(grace: .seconds(1))
    }

    @Test func unusableRequestsAreRejected() async throws {
        let client = try HTTPClient()
        #expect(await clientErrorCode { try await client.send(get("file:///etc/passwd")) } == .invalidRequest)
        #expect(await clientErrorCode { try await client.send(get("not a url")) } == .invalidRequest)
        #expect(await clientErrorCode {
            try await client.send(HTTPClientRequest(url: "http://127.0.0.1:1/", headers: [("X-Evil", "a\r\nInjected: 1")]))
        } == .invalidRequest)
        #expect(await clientErrorCode { try await client.send(get("http://name.invalid/")) } == .dns)
        await client.shutdown()
    }
}
