/// Sends the reads of concurrent callers to the database together: every caller that asks while a batch is on
/// its way goes in the next one, one pipeline on one connection.
///
/// The worker's jobs start in bursts (a lease hands out dozens at once) and each begins with a small read. Read
/// one by one, every job woke a connection's thread and its server process for one round trip of its own, and
/// on a busy host those wake-ups, not the statements, were most of what the reads cost. Batched, a burst costs
/// a few round trips, and an idle worker's lone read still goes at once, with no delay added.
///
/// Only for reads: when any statement of a batch fails, every caller's statements run again on their own, so
/// each caller gets exactly the answer or the error it would have got alone.
public actor PostgresReadBatcher {
    private struct Pending {
        let statements: [PostgresStatement]
        let reply: CheckedContinuation<Result<[PostgresRows], any Error>, Never>
    }

    private let pool: PostgresPool
    private let maxFlushes: Int
    private let maxStatements: Int
    private var pending: [Pending] = []
    private var flushes = 0
    private var sending = 0

    /// - Parameters:
    ///   - maxFlushes: batches on their way at once, each on a connection of its own.
    ///   - maxStatements: the most statements one batch carries (a caller's statements are never split).
    public init(pool: PostgresPool, maxFlushes: Int = 2, maxStatements: Int = 400) {
        self.pool = pool
        self.maxFlushes = max(1, maxFlushes)
        self.maxStatements = max(1, maxStatements)
    }

    /// Runs `statements` in order, in one round trip with other callers' reads; returns their rows in order, or
    /// throws what running them alone on a pooled connection (`PostgresConnection.query(_:)`) would throw.
    public func read(_ statements: [PostgresStatement]) async throws -> [PostgresRows] {
        guard !statements.isEmpty else { return [] }
        return try await withCheckedContinuation { reply in
            pending.append(Pending(statements: statements, reply: reply))
            if flushes < maxFlushes {
                flushes += 1
                Task { await flush() }
            }
        }.get()
    }

    /// Callers not answered yet: waiting for a batch, or in one on its way.
    var waiting: Int { pending.count + sending }

    /// Sends what is pending, batch after batch, until nothing is.
    private func flush() async {
        while !pending.isEmpty {
            var count = 0
            let taken = pending.prefix { item in
                defer { count += item.statements.count }
                return count == 0 || count + item.statements.count <= maxStatements
            }
            pending.removeFirst(taken.count)
            let batch = Array(taken)
            sending += batch.count
            let answers = await Self.run(batch.map(\.statements), pool: pool)
            sending -= batch.count
            for (item, answer) in zip(batch, answers) { item.reply.resume(returning: answer) }
        }
        flushes -= 1
    }

    /// Each caller's answer: all statements in one pipeline, or, if that fails, each caller's alone.
    private static func run(_ reads: [[PostgresStatement]], pool: PostgresPool) async -> [Result<[PostgresRows], any Error>] {
        do {
            return try await pool.run { db in
                guard reads.count > 1 else { return [Result { try db.query(reads[0]) }] }
                guard let rows = try? db.query(reads.flatMap { $0 }) else {
                    return reads.map { read in Result { try db.query(read) } }
                }
                var start = 0
                return reads.map { read in
                    defer { start += read.count }
                    return .success(Array(rows[start..<start + read.count]))
                }
            }
        } catch {
            return Array(repeating: .failure(error), count: reads.count)
        }
    }

    /// Runs two or more queries in order in one round trip with other callers' reads and returns their answers,
    /// each read its own way (as `PostgresConnection.query(_:_:_:)` does for one caller).
    public nonisolated func query<First, Second, each Rest>(
        _ first: PostgresQuery<First>, _ second: PostgresQuery<Second>, _ rest: repeat PostgresQuery<each Rest>
    ) async throws -> (First, Second, repeat each Rest) {
        try answers(await read(statements(first, second, repeat each rest)), first, second, repeat each rest)
    }
}
