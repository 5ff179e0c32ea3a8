import Foundation
import HTTP
import TestSupport
import Testing

@Suite struct HTTPServerStopTests {
    @Test func gracefulStopFinishesRequestsInFlightAndRefusesNewConnections() async throws {
        let (server, base, gate, entered) = try startHoldingServer("/slow", answer: "finished") { router in
            router.route("GET", "/fast") { _ in .text(200, "fast") }
        }
        let client = try HTTPClient()
        defer { gate.open() }

        let inFlight = Task { try await client.send(get("\(base)/slow")) }
        try await eventually("the handler to start") { entered.value == 1 }
        let stopping = Task { await server.stop(grace: .seconds(20)) }

        // New connections are refused while the request in flight is still being handled.
        let latecomer = try HTTPClient()
        try await eventually("new connections to be refused") {
            await clientErrorCode { try await latecomer.send(get("\(base)/fast", timeout: .seconds(2))) }
                == .connectionRefused
        }
        try await eventually("only the held request to be in flight") { server.requestsInFlight == 1 }

        gate.open()
        let response = try await inFlight.value
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "finished")
        #expect(response.header("connection") == "close")
        await stopping.value

        let afterStop = await clientErrorCode { try await latecomer.send(get("\(base)/fast")) }
        #expect(afterStop == .connectionRefused)
        await latecomer.shutdown()
        await client.shutdown()
    }

    @Test func stopClosesRequestsStillUnansweredWhenGraceRunsOut() async throws {
        let gate = Gate()
        let entered = Counter()
        let answered = Counter()
        let (server, base) = try startServer { router in
            router.route("GET", "/stuck") { _ in
                entered.increment()
                await gate.wait()
                answered.increment()
                return .text(200, "never sent")
            }
        }
        let client = try HTTPClient()
        defer { gate.open() }

        let stuck = Task { await clientErrorCode { try await client.send(get("\(base)/stuck")) } }
        try await eventually("the handler to start") { entered.value == 1 }

        let started = ContinuousClock.now
        await server.stop(grace: .milliseconds(200))
        #expect(ContinuousClock.now - started < .seconds(15), "stop must not wait for the stuck handler")
        let code = await stuck.value
        #expect(code == .connectionReset)

        // The handler finishes after its connection is gone; its response is dropped, nothing breaks.
        gate.open()
        try await eventually("the abandoned handler to finish") { answered.value == 1 }
        await client.shutdown()
    }

    @Test func repeatedAndConcurrentStopsReturnOnceStopped() async throws {
        let (server, base) = try startServer { router in
            router.route("GET", "/") { _ in .text(200, "ok") }
        }
        async let first: Void = server.stop(grace: .seconds(1))
        async let second: Void = server.stop(grace: .seconds(1))
        _ = await (first, second)
        await server.stop(grace: .seconds(1))

        let client = try HTTPClient()
        let code = await clientErrorCode { try await client.send(get("\(base)/")) }
        #expect(code == .connectionRefused)
        await client.shutdown()
    }
}
