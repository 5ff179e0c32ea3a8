/// Merges the order reads of jobs running at once on one Play app into `orders.batchGet` requests.
///
/// Google counts every request against the app's Orders quota bucket (3,000 a minute) whatever it carries, and
/// in a renewal burst each job reads the one new order it books: alone, a call per notification, and a large app
/// hits the bucket at about 50 notifications a second. So at most one request of this batcher is in flight; reads
/// that arrive meanwhile wait for it and leave together in the next. A read waits at most one round trip more
/// than alone, no timer delays a lone read, and under load a request carries every order asked during the last
/// round trip (as many as one request holds: `GooglePlayAPIClient.batches(of:)`).
///
/// Google fails a whole `batchGet` that names an unknown order, so a refused batch is read again in halves down to
/// the unknown ids: one job's missing order never fails the others' reads, and a guessed id that Google never
/// charged costs a few requests, not one per id of the batch.
public actor GooglePlayOrderBatcher {
    /// What Google answered for one order id.
    public enum Read: Sendable {
        case found(GooglePlayOrder)
        /// `orders.get` answered 404 for it alone.
        case unknown(GooglePlayAPIError)
    }

    private struct Waiter {
        let number: UInt64
        let ids: [String]
        let continuation: CheckedContinuation<[String: Read], any Error>
    }

    private let client: GooglePlayAPIClient
    private var waiting: [Waiter] = []
    private var sending = false
    private var lastNumber: UInt64 = 0

    public init(client: GooglePlayAPIClient) {
        self.client = client
    }

    /// Reads waiting for the request in flight to finish; what a gauge or a test watches.
    public var queued: Int { waiting.count }

    /// Google's answer for each of `ids` (distinct, and one request's worth: an element of
    /// `GooglePlayAPIClient.batches(of:)`), read in this app's next request. Throws
    /// `GooglePlayAPIError` when the request failed for another reason than an unknown order (every read that
    /// shared it fails alike, each job retrying on its own schedule), or `CancellationError` when the caller
    /// was cancelled while waiting; a request already sent is not cancelled, as other jobs share it.
    public func orders(_ ids: [String]) async throws -> [String: Read] {
        guard !ids.isEmpty, Set(ids).count == ids.count, GooglePlayAPIClient.batches(of: ids).count == 1 else {
            throw GooglePlayAPIError(.invalidRequest, "an order read takes one request's worth of distinct ids, not \(ids.count)")
        }
        lastNumber += 1
        let number = lastNumber
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard !Task.isCancelled else { return continuation.resume(throwing: CancellationError()) }
                waiting.append(Waiter(number: number, ids: ids, continuation: continuation))
                if !sending { sendNext() }
            }
        } onCancel: {
            Task { await self.cancel(number) }
        }
    }

    private func cancel(_ number: UInt64) {
        guard let index = waiting.firstIndex(where: { $0.number == number }) else { return }
        waiting.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    /// Sends every waiting read that fits in one request, oldest first.
    private func sendNext() {
        guard !waiting.isEmpty else {
            sending = false
            return
        }
        sending = true
        var ids = Set<String>()
        var bytes = 0
        var taken = 0
        while taken < waiting.count {
            let new = Set(waiting[taken].ids).subtracting(ids)
            let cost = new.reduce(0) { $0 + GooglePlayAPIClient.batchQueryBytes($1) }
            guard taken == 0 || GooglePlayAPIClient.batchFits(count: ids.count + new.count, bytes: bytes + cost) else { break }
            ids.formUnion(new)
            bytes += cost
            taken += 1
        }
        let batch = Array(waiting.prefix(taken))
        waiting.removeFirst(taken)
        let client = self.client
        Task {
            let answer = await Self.read(ids.sorted(), client: client)
            self.finish(batch, answer)
        }
    }

    private func finish(_ batch: [Waiter], _ answer: Result<[String: Read], any Error>) {
        for waiter in batch {
            waiter.continuation.resume(with: answer.map { reads in
                Dictionary(uniqueKeysWithValues: waiter.ids.compactMap { id in reads[id].map { (id, $0) } })
            })
        }
        sendNext()
    }

    /// One id with `orders.get`, several with `orders.batchGet`. When Google refuses a batch for an unknown id,
    /// each half is read again, so k unknown ids among n cost about 2k·log₂(n) requests rather than n.
    private static func read(_ ids: [String], client: GooglePlayAPIClient) async -> Result<[String: Read], any Error> {
        do {
            if ids.count == 1 {
                return .success([ids[0]: .found(try await client.order(id: ids[0]))])
            }
            let orders = try await client.orders(ids: ids)
            return .success(Dictionary(uniqueKeysWithValues: zip(ids, orders.map(Read.found))))
        } catch let error as GooglePlayAPIError where error.code == .notFound {
            guard ids.count > 1 else { return .success([ids[0]: .unknown(error)]) }
        } catch {
            return .failure(error)
        }
        let half = ids.count / 2
        var reads: [String: Read] = [:]
        for part in [Array(ids[..<half]), Array(ids[half...])] {
            switch await read(part, client: client) {
            case .success(let found): reads.merge(found) { first, _ in first }
            case .failure(let error): return .failure(error)
            }
        }
        return .success(reads)
    }
}
