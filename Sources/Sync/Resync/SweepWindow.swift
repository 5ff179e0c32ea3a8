import Accounts
import Foundation
import Logging
import Postgres
import Queue

/// The stretch of store history one sweep run reads, and where it stands in it. A fresh run reads from the
/// last watermark (less an overlap for what the store reports late, never earlier than the store keeps) to
/// now; a run after a crash resumes exactly the window its saved page token belongs to, since a store's page
/// token is only valid with the query that produced it.
struct SweepWindow {
    let connection: StoreConnection
    let start: Date
    let end: Date
    /// The page to read next; `nil` for the first page.
    private(set) var cursor: String?
    /// The window was resumed from a saved page token, which the store may since have stopped taking.
    private(set) var isResumed = false

    /// Loads the sweep job's connection and watermark and chooses the window.
    static func load<Kinds>(_ args: SweepArgs<Kinds>, sweep: String, pool: PostgresPool, now: Date, overlap: TimeInterval,
                            retention: (StoreConnection) -> TimeInterval) async throws -> SweepWindow {
        let (connection, mark) = try await pool.transaction { db in
            (try StoreConnections.get(id: args.connectionID, on: db),
             try Watermark.read(connectionID: args.connectionID, sweep: sweep, on: db))
        }
        guard let connection else { throw JobFailure.permanent("store connection \(args.connectionID) no longer exists") }
        if let mark, let resumed = mark.cursor.flatMap(WindowCursor.init(text:)) {
            return SweepWindow(connection: connection, start: mark.watermark, end: resumed.end, cursor: resumed.token,
                               isResumed: true)
        }
        let start = max((mark?.watermark ?? now).addingTimeInterval(-overlap), now.addingTimeInterval(-retention(connection)))
        return SweepWindow(connection: connection, start: start, end: now, cursor: nil)
    }

    /// After the store refused the saved page this window resumed (an expired or invalid page token, or a start
    /// it no longer keeps), which would fail every later run: drops the token, keeping the window's start, and
    /// returns the fresh window `load` then chooses (less the overlap, never earlier than the store keeps), which
    /// is not resumed, so a run restarts at most once. What the new window lists twice is deduplicated downstream.
    static func restart(after refused: SweepWindow, sweep: String, pool: PostgresPool, logger: Logger, error: String,
                        load: () async throws -> SweepWindow) async throws -> SweepWindow {
        logger.warning("the store refused the sweep's saved page; sweeping the window again",
                       ["connection": .int(Int(refused.connection.id)), "sweep": .string(sweep), "error": .string(error)])
        let restart = Watermark(watermark: refused.start, cursor: nil)
        let connectionID = refused.connection.id
        try await pool.run { db in try Watermark.write(restart, connectionID: connectionID, sweep: sweep, on: db) }
        return try await load()
    }

    /// Moves to the page after the one just read (`next` is its token; `nil` after the last page) and returns
    /// the watermark to save with that page's work.
    mutating func advance(to next: String?) -> Watermark {
        cursor = next
        guard let next else { return Watermark(watermark: end, cursor: nil) }
        return Watermark(watermark: start, cursor: WindowCursor(end: end, token: next).text)
    }
}

/// A page token together with the end of the window it belongs to, as stored in `sweep_watermarks.cursor`.
struct WindowCursor {
    let end: Date
    let token: String

    init(end: Date, token: String) {
        self.end = end
        self.token = token
    }

    init?(text: String) {
        guard let colon = text.firstIndex(of: ":"), let milliseconds = Int64(text[..<colon]) else { return nil }
        end = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        token = String(text[text.index(after: colon)...])
    }

    var text: String { "\(Int64(end.timeIntervalSince1970 * 1000)):\(token)" }
}
