import Foundation
import GooglePlay
import HTTP
import Testing
import TestSupport

/// How concurrent jobs' order reads share requests of the Orders quota bucket: one request in flight, what
/// arrives meanwhile leaves together, and one job's unknown order never fails another's read. A gate holds
/// the first request inside the stand-in for Google until the test has queued the rest, so no timing decides
/// what is merged.
@Suite struct GooglePlayOrderBatcherTests {
    static let first = "GPA.0000-0000-0000-00001"
    static let others = (2...10).map { "GPA.0000-0000-0000-\(String(format: "%05d", $0))" }
    static let unknown = "GPA.9999-9999-9999-99999"

    @Test("reads arriving while a request is in flight leave together in one orders.batchGet, each answered its own ids")
    func merged() async throws {
        try await Self.with { google, batcher in
            // The last read repeats an id another read asks: Google is asked it once.
            let later = Self.others.map { [$0] } + [[Self.others[0], Self.first]]
            let answers = try await Self.read(later, google: google, batcher: batcher)
            for (ids, reads) in zip([[Self.first]] + later, answers) {
                #expect(reads.keys.sorted() == ids.sorted())
                for id in ids { #expect(Self.orderID(reads[id]) == id) }
            }
            #expect(google.server.apiRequests.requests.map(Self.describe) == [
                "orders/\(Self.first)", "orders:batchGet " + ([Self.first] + Self.others).sorted().joined(separator: ","),
            ])
        }
    }

    @Test("an unknown order fails the merged batch, whose halves are read again down to it: the other reads still get theirs")
    func unknownOrder() async throws {
        try await Self.with { google, batcher in
            let later = [[Self.others[0]], [Self.unknown], [Self.others[1]]]
            let answers = try await Self.read(later, google: google, batcher: batcher)
            #expect(Self.orderID(answers[1][Self.others[0]]) == Self.others[0])
            guard case .unknown(let error) = answers[2][Self.unknown] else {
                Issue.record("the unknown order was answered \(String(describing: answers[2][Self.unknown]))")
                return
            }
            #expect(error.code == .notFound)
            #expect(Self.orderID(answers[3][Self.others[1]]) == Self.others[1])
            let batch = [Self.others[0], Self.others[1], Self.unknown].sorted()
            #expect(google.server.apiRequests.requests.map(Self.describe) == [
                "orders/\(Self.first)", "orders:batchGet " + batch.joined(separator: ","), "orders/\(batch[0])",
                "orders:batchGet \(batch[1]),\(batch[2])", "orders/\(batch[1])", "orders/\(batch[2])",
            ])
        }
    }

    @Test("a refusal other than an unknown order fails every read that shared the request, and the next read is sent")
    func sharedFailure() async throws {
        try await Self.with(failing: Self.others[0]) { google, batcher in
            let first = Task { try await batcher.orders([Self.first]) }
            try await eventually("the first read reached Google") { google.server.apiRequests.requests.count == 1 }
            let waiting = [[Self.others[0]], [Self.others[1]]].map { ids in Task { try await batcher.orders(ids) } }
            try await eventually("two reads queued behind it") { await batcher.queued == 2 }
            google.gate.open()
            _ = try await first.value
            for task in waiting {
                let error = try await apiError { _ = try await task.value }
                #expect(error.code == .serverError)
            }
            #expect(Self.orderID(try await batcher.orders([Self.others[2]])[Self.others[2]]) == Self.others[2])
        }
    }

    @Test("a read cancelled while it waits throws CancellationError; the reads queued with it are still answered")
    func cancelledWhileWaiting() async throws {
        try await Self.with { google, batcher in
            let first = Task { try await batcher.orders([Self.first]) }
            try await eventually("the first read reached Google") { google.server.apiRequests.requests.count == 1 }
            let cancelled = Task { try await batcher.orders([Self.others[0]]) }
            let kept = Task { try await batcher.orders([Self.others[1]]) }
            try await eventually("two reads queued behind it") { await batcher.queued == 2 }
            cancelled.cancel()
            try await eventually("the cancelled read left the queue") { await batcher.queued == 1 }
            await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
            google.gate.open()
            _ = try await first.value
            #expect(Self.orderID(try await kept.value[Self.others[1]]) == Self.others[1])
            #expect(google.server.apiRequests.requests.map(Self.describe) == ["orders/\(Self.first)", "orders/\(Self.others[1])"])
        }
    }

    // MARK: The stand-in for Google

    /// A Play server that holds the read of `first` until its gate opens, answers 503 for any request naming
    /// `failing`, 404 for one naming `unknown`, and an order for every other id.
    struct Google {
        let server: PlayServer
        let gate: Gate
    }

    static func with(failing: String? = nil, _ body: (Google, GooglePlayOrderBatcher) async throws -> Void) async throws {
        let gate = Gate()
        let server = try PlayServer { request in
            if request.path.hasSuffix("/orders/\(first)") { await gate.wait() }
            let ids = Self.ids(request)
            if let failing, ids.contains(failing) {
                return .json(503, #"{"error":{"code":503,"message":"Backend Error","errors":[{"reason":"backendError"}]}}"#)
            }
            if ids.contains(unknown) {
                return .json(404, #"{"error":{"code":404,"message":"Not found","errors":[{"reason":"notFound"}]}}"#)
            }
            if request.path.hasSuffix("/orders:batchGet") {
                let orders = try! ids.map { try JSONSerialization.jsonObject(with: Play.order(id: $0)) }
                return .json(200, Play.text(Play.json(["orders": orders])))
            }
            return .json(200, Play.text(Play.order(id: ids[0])))
        }
        let http = try HTTPClient()
        let batcher = GooglePlayOrderBatcher(client: try ServiceAccount.client(server, http: http))
        let google = Google(server: server, gate: gate)
        let outcome: Result<Void, any Error>
        do {
            try await body(google, batcher)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        gate.open()
        await http.shutdown()
        await server.stop()
        try outcome.get()
    }

    /// Reads `first` and holds it at Google until every read of `later` has queued behind it; every answer,
    /// the first one's first.
    static func read(_ later: [[String]], google: Google, batcher: GooglePlayOrderBatcher) async throws
        -> [[String: GooglePlayOrderBatcher.Read]] {
        let first = Task { try await batcher.orders([Self.first]) }
        try await eventually("the first read reached Google") { google.server.apiRequests.requests.count == 1 }
        var tasks: [Task<[String: GooglePlayOrderBatcher.Read], any Error>] = []
        for ids in later {
            tasks.append(Task { try await batcher.orders(ids) })
            let queued = tasks.count
            try await eventually("\(queued) reads queued") { await batcher.queued == queued }
        }
        google.gate.open()
        var answers = [try await first.value]
        for task in tasks { answers.append(try await task.value) }
        return answers
    }

    /// The order ids a request names: its path's, or `batchGet`'s `orderIds` parameters.
    static func ids(_ request: HTTPRequest) -> [String] {
        guard request.path.hasSuffix("/orders:batchGet") else {
            return [String(request.path.split(separator: "/").last ?? "")]
        }
        return (request.query ?? "").split(separator: "&").compactMap { pair in
            pair.hasPrefix("orderIds=") ? String(pair.dropFirst("orderIds=".count)).removingPercentEncoding : nil
        }
    }

    static func describe(_ request: HTTPRequest) -> String {
        let name = String(request.path.split(separator: "/").last ?? "")
        return name == "orders:batchGet" ? "\(name) " + ids(request).joined(separator: ",") : "orders/\(name)"
    }

    static func orderID(_ read: GooglePlayOrderBatcher.Read?) -> String? {
        guard case .found(let order) = read else { return nil }
        return order.orderId
    }
}

/// How order ids are split into `orders.batchGet` requests: a query of at most 8 KB, since the ids travel in
/// the URL (which also keeps them under Google's 1,000: an id costs at least 11 bytes).
@Suite struct OrderBatchSplitTests {
    @Test("batches(of:) keeps the order and splits at 8 KB of query; an id longer than that goes alone",
          arguments: [(1, 25, [1]), (200, 25, [200]), (400, 37, [174, 174, 52]), (1000, 4, [585, 415]), (3, 4000, [2, 1]),
                      (2, 9000, [1, 1])])
    func split(count: Int, idLength: Int, expected: [Int]) {
        let ids = (0..<count).map { String(format: "%0\(idLength)d", $0) }
        let batches = GooglePlayAPIClient.batches(of: ids)
        #expect(batches.map(\.count) == expected)
        #expect(batches.flatMap { $0 } == ids)
        for batch in batches where batch.count > 1 {
            let query = batch.map { "orderIds=\($0)" }.joined(separator: "&")
            #expect(query.utf8.count <= GooglePlayAPIClient.maxBatchQueryBytes)
        }
    }
}
