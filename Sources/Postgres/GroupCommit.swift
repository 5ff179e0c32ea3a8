/// Group commit: items submitted while a commit is in flight wait and go together in the next one.
///
/// A commit per item caps throughput at the disk's fsync rate. Here, under load one durable commit carries
/// hundreds of items, and when idle a single item commits at once, with no artificial delay. Several
/// flushers may run so commits overlap. Used for job outcomes and for ingested notifications.
public actor GroupCommit<Item: Sendable, Outcome: Sendable> {
    private var buffer: [(item: Item, reply: CheckedContinuation<Outcome, Never>)] = []
    private var idleFlushers: [CheckedContinuation<Void, Never>] = []
    private var closed = false
    private let maxBatch: Int
    private let commit: @Sendable ([Item]) async -> [Outcome]

    /// - Parameter commit: commits a batch and returns one outcome per item, in order.
    public init(maxBatch: Int, commit: @escaping @Sendable ([Item]) async -> [Outcome]) {
        self.maxBatch = maxBatch
        self.commit = commit
    }

    /// Adds `item` to the next batch and returns its outcome once that batch has committed.
    public func submit(_ item: Item) async -> Outcome {
        await withCheckedContinuation { reply in
            buffer.append((item, reply))
            if !idleFlushers.isEmpty { idleFlushers.removeFirst().resume() }
        }
    }

    /// Commits batches until `close()` has been called and the buffer is empty.
    public func runFlusher() async {
        while true {
            if buffer.isEmpty {
                if closed { return }
                await withCheckedContinuation { idleFlushers.append($0) }
                continue
            }
            let batch = Array(buffer.prefix(maxBatch))
            buffer.removeFirst(batch.count)
            let outcomes = await commit(batch.map(\.item))
            for (entry, outcome) in zip(batch, outcomes) { entry.reply.resume(returning: outcome) }
        }
    }

    /// Lets the flushers commit what is buffered and return.
    public func close() {
        closed = true
        for flusher in idleFlushers { flusher.resume() }
        idleFlushers.removeAll()
    }
}
