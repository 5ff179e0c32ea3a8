import CPostgres
import Foundation
import Logging

/// A `NOTIFY` received on a listening connection.
public struct PostgresNotification: Sendable, Equatable {
    public let channel: String
    public let payload: String
}

/// One libpq connection, owned by an actor that runs on its own OS thread.
///
/// Every libpq call happens on that thread, so blocking network waits never occupy Swift's cooperative
/// pool, and the `PGconn` is never touched by two threads at once. Callers outside the actor `await` each
/// call; code running inside `transaction` is isolated to the connection and calls it synchronously,
/// so a whole transaction costs one hop onto the connection thread.
public actor PostgresConnection {
    private let executor: ThreadExecutor
    private var handle: OpaquePointer?
    private var statements = StatementCache()
    /// Transaction scopes, deferred statements and statements to deallocate.
    private var bookkeeping = TransactionStateMachine()
    /// See `PostgresReadAhead`.
    var readAheads = ReadAheadAnswers()

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private init(executor: ThreadExecutor) {
        self.executor = executor
    }

    isolated deinit {
        if let handle { PQfinish(handle) }
        executor.shutdown()
    }

    /// Opens a connection. `url` is a libpq connection URI or key=value string; a connect timeout, the
    /// application name, `gssencmode=disable` and TCP liveness settings are added as defaults the URL can
    /// override. Without `gssencmode=disable`, libpq asks Kerberos for credentials on every connect (its
    /// default is to prefer GSS encryption), which costs each connect a lookup and leaves Kerberos state a
    /// thread can still be tearing down at exit. Without the liveness settings (`keepalives=1`,
    /// `keepalives_idle=10`, `keepalives_interval=5`, `keepalives_count=3`, `tcp_user_timeout=10000`), a
    /// database host that vanishes (powered off, network cut) leaves a blocking libpq call waiting for the
    /// kernel's retransmission timeout, about 15 minutes: with them the statement fails within seconds, so
    /// the webhook endpoints can answer 503 as promised.
    /// A `url` libpq cannot parse fails with `.invalidConnectionString`; no error quotes its password.
    public static func connect(url: String, applicationName: String = "storesync") async throws -> PostgresConnection {
        let connection = PostgresConnection(executor: ThreadExecutor(name: "pg-conn"))
        try await connection.open(url: url, applicationName: applicationName)
        return connection
    }

    private func open(url: String, applicationName: String) throws {
        try ConnectionString.validate(url)
        let defaults = Self.defaultOptions(applicationName: applicationName)
        // `dbname` goes last and is expanded (PQconnectdbParams' `expand_dbname`), so the URL's own keys win.
        let keys = defaults.map(\.keyword) + ["dbname"]
        let values = defaults.map(\.value) + [url]
        let conn = withCStrings(keys) { keyPointers in
            withCStrings(values) { valuePointers in
                PQconnectdbParams(keyPointers, valuePointers, 1)
            }
        }
        guard let conn else { throw PostgresError(.connectionLost, message: "out of memory creating a connection") }
        guard PQstatus(conn) == CONNECTION_OK else {
            // libpq's message can quote the connection string, password and all.
            let message = ConnectionString.redact(Self.errorMessage(conn), secretsOf: url)
            PQfinish(conn)
            throw PostgresError(PostgresError.isLoginRefusal(message) ? .loginRefused : .connectionLost,
                                message: "cannot connect: \(message)")
        }
        PQsetNoticeProcessor(conn, { _, message in
            guard let message else { return }
            Logger(component: "postgres").debug("server notice", ["notice": .string(String(cString: message))])
        }, nil)
        handle = conn
        // `bytea` in escape format: a job's body (kilobytes of text, read by every lease) comes nearly as is, not as
        // twice as many hex digits (`Data(postgresText:)` reads both).
        try executeScript("SET DateStyle = ISO; SET TimeZone = 'UTC'; SET bytea_output = 'escape'")
    }

    /// The libpq settings `connect` adds unless the URL sets them; see `connect(url:applicationName:)`.
    static func defaultOptions(applicationName: String) -> [(keyword: String, value: String)] {
        [("connect_timeout", "5"), ("application_name", applicationName), ("gssencmode", "disable"),
         ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
         ("tcp_user_timeout", "10000")]
    }

    /// The value libpq holds for connection setting `keyword` on this open connection (`PQconninfo`), or nil
    /// when it is unset or unknown: shows which defaults and URL overrides are actually in effect.
    public func setting(_ keyword: String) -> String? {
        guard let handle, let options = PQconninfo(handle) else { return nil }
        defer { PQconninfoFree(options) }
        var option = options
        while let name = option.pointee.keyword {
            if String(cString: name) == keyword { return option.pointee.val.map { String(cString: $0) } }
            option += 1
        }
        return nil
    }

    /// Whether the connection has failed and must be replaced.
    public var isBroken: Bool {
        guard let handle else { return true }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// Whether an idle connection still reaches its server, found without blocking: a server that shut down
    /// or restarted has closed the socket (usually after a last FATAL message), so it reads as ready; an idle
    /// connection otherwise has nothing to read. Lets a pool drop connections an outage killed before a
    /// caller's statement fails on one.
    public func isStillConnected() -> Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return false }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        if ready < 0 { return false }
        if ready > 0 && PQconsumeInput(handle) != 1 { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Runs a parameterized statement (`$1…`).
    ///
    /// A statement with parameters is prepared on this connection the first time it runs and executed by
    /// name afterwards, so PostgreSQL parses and plans it once per connection instead of once per call: on
    /// the worker's hot path, parse and plan were most of the server's CPU. Statements deferred with
    /// `queryLater` go in the same round trip, ahead of this one.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresEncodable] = []) throws -> PostgresRows {
        guard !bookkeeping.hasPending else { return try pipeline([PostgresStatement(sql, parameters)])[0] }
        let conn = try liveHandle()
        deallocateUnused(conn)
        let preparedBefore = statements.name(for: sql) != nil
        guard !parameters.isEmpty, let name = try preparedName(sql, parameterCount: parameters.count) else {
            let result = withParameters(parameters) { values, lengths, formats in
                PQexecParams(conn, sql, Int32(parameters.count), nil, values, lengths, formats, 0)
            }
            return try consume(result)
        }
        let result = withParameters(parameters) { values, lengths, formats in
            PQexecPrepared(conn, name, Int32(parameters.count), values, lengths, formats, 0)
        }
        do {
            return try consume(result)
        } catch let error as PostgresError {
            // Only a statement prepared before this call can have gone stale.
            throw preparedBefore ? stale(error, sql: sql, name: name) : error
        }
    }

    /// Runs `statements` in order, as if one after another, but in one round trip: for reads that do not
    /// depend on each other's answers, or a lock followed by the read it guards. Returns their rows in order;
    /// the first failure is thrown, and the statements after it do not run.
    @discardableResult
    public func query(_ statements: [PostgresStatement]) throws -> [PostgresRows] {
        guard !statements.isEmpty else { return [] }
        return try pipeline(statements)
    }

    /// Queues a statement whose answer nobody needs — a write whose failure is all that matters — to go with
    /// the next statement that needs one, or with the end of the enclosing transaction or savepoint, saving a
    /// round trip. Its failure is thrown there, so it still fails the transaction (or savepoint) it is in.
    /// Outside a transaction it runs at once.
    public func queryLater(_ sql: String, _ parameters: [any PostgresEncodable] = []) throws {
        if !bookkeeping.later(PostgresStatement(sql, parameters)) { try query(sql, parameters) }
    }

    /// Sends what is pending, then `statements`, in one pipeline; returns the rows of `statements` only.
    private func pipeline(_ statements: [PostgresStatement]) throws -> [PostgresRows] {
        let conn = try liveHandle()
        deallocateUnused(conn)
        guard PQenterPipelineMode(conn) == 1 else {
            throw PostgresError(.connectionLost, message: "cannot start a pipeline: \(Self.errorMessage(conn))")
        }
        defer {
            // Still in pipeline mode means results were left unread: the connection is out of step for good.
            if PQexitPipelineMode(conn) != 1 { close() }
        }
        let all = bookkeeping.batch(statements)
        // A statement new to this connection is prepared inside the pipeline too, right before it runs, so a
        // failure to prepare fails where that statement would have, after the statements ahead of it.
        let plans: [(name: String?, prepare: Bool)] = all.map { item in
            guard !item.statement.parameters.isEmpty else { return (nil, false) }
            if let name = self.statements.name(for: item.statement.sql) { return (name, false) }
            let name = self.statements.add(item.statement.sql)
            return (name, name != nil)
        }
        let sent = zip(all, plans).allSatisfy { item, plan in
            let statement = item.statement
            let count = Int32(statement.parameters.count)
            if plan.prepare, PQsendPrepare(conn, plan.name, statement.sql, count, nil) != 1 { return false }
            return withParameters(statement.parameters) { values, lengths, formats in
                if let name = plan.name { PQsendQueryPrepared(conn, name, count, values, lengths, formats, 0) }
                else { PQsendQueryParams(conn, statement.sql, count, nil, values, lengths, formats, 0) }
            } == 1
        }
        guard sent, PQpipelineSync(conn) == 1 else {
            // Part of the batch may be on its way: nothing can tell which part ran, so the connection is done.
            let message = Self.errorMessage(conn)
            close()
            throw PostgresError(.connectionLost, message: message)
        }

        var rows: [PostgresRows] = []
        var failure: PostgresError?
        /// The next result: nil when the statement did not run because an earlier one failed.
        func next() throws -> Result<PostgresRows, PostgresError>? {
            guard let result = PQgetResult(conn) else {
                throw PostgresError(.connectionLost, message: Self.errorMessage(conn))
            }
            defer {
                PQclear(result)
                while let extra = PQgetResult(conn) { PQclear(extra) }
            }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return .success(Self.copyRows(result))
            case PGRES_PIPELINE_ABORTED: return nil
            default: return .failure(error(from: result))
            }
        }
        for (item, plan) in zip(all, plans) {
            let sql = item.statement.sql
            if plan.prepare {
                switch try next() {
                case .success: break
                case .failure(let error):
                    self.statements.forget(sql)
                    failure = failure ?? error
                case nil: self.statements.forget(sql)
                }
            }
            switch try next() {
            case .success(let result):
                rows.append(result)
                bookkeeping.ran(item)
            case .failure(let error):
                // Only a statement prepared before this pipeline can have gone stale.
                let stale = plan.prepare ? nil : plan.name.map { self.stale(error, sql: sql, name: $0) }
                failure = failure ?? stale ?? error
            case nil: break
            }
        }
        guard let sync = PQgetResult(conn) else { throw PostgresError(.connectionLost, message: Self.errorMessage(conn)) }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        while let extra = PQgetResult(conn) { PQclear(extra) }
        guard synced else { throw PostgresError(.connectionLost, message: "pipeline out of step: \(Self.errorMessage(conn))") }
        if let failure { throw failure }
        return Array(rows.suffix(statements.count))
    }

    /// `error` as thrown for prepared statement `name`: when it says the statement was prepared against another
    /// schema, the statement is forgotten and the error is `staleStatement`. PostgreSQL re-analyses such a
    /// statement on its own, but keeps the parameter types first inferred and refuses a changed result shape;
    /// preparing afresh fixes both.
    private func stale(_ error: PostgresError, sql: String, name: String) -> PostgresError {
        guard Self.isStale(error) else { return error }
        statements.forget(sql)
        bookkeeping.retire(name)
        return PostgresError(.staleStatement, sqlState: error.sqlState, message: error.message)
    }

    /// 0A000 is "cached plan must not change result type"; class 42 (undefined column, function or operator,
    /// type mismatch) at execution means re-analysis failed, since the statement was accepted when prepared —
    /// except 42501, permission denied, which preparing again cannot cure.
    private static func isStale(_ error: PostgresError) -> Bool {
        guard let state = error.sqlState, error.code != .connectionLost else { return false }
        return state == "0A000" || (state.hasPrefix("42") && state != "42501")
    }

    /// Deallocates retired statements, when outside any transaction.
    private func deallocateUnused(_ conn: OpaquePointer) {
        // Names are this connection's own (`storesync_N`), so they need no quoting; a failure only leaves a
        // statement allocated until the connection closes.
        for name in bookkeeping.statementsToDeallocate() { PQclear(PQexec(conn, "DEALLOCATE \(name)")) }
    }

    /// The server-side name of `sql`, preparing it first if needed; nil once the cache is full, so a caller
    /// building many distinct statements runs the rest unnamed rather than preparing without bound.
    private func preparedName(_ sql: String, parameterCount: Int) throws -> String? {
        if let name = statements.name(for: sql) { return name }
        guard let name = statements.add(sql) else { return nil }
        do {
            _ = try consume(PQprepare(try liveHandle(), name, sql, Int32(parameterCount), nil))
        } catch {
            statements.forget(sql)
            throw error
        }
        return name
    }

    /// Runs a script of several statements without parameters (migrations); libpq wraps it in one
    /// implicit transaction unless the script manages its own.
    public func executeScript(_ sql: String) throws {
        if bookkeeping.hasPending { _ = try pipeline([]) }
        let conn = try liveHandle()
        _ = try consume(PQexec(conn, sql))
    }

    /// Runs `body`, then reads whether the connection broke, in one visit to the connection's thread: a pool that
    /// lent it takes it back without a second visit (two thread switches) just to ask.
    func lent<T: Sendable>(_ body: (isolated PostgresConnection) throws -> T) -> (result: Result<T, any Error>, broken: Bool) {
        let result = Result { try body(self) }
        return (result, isBroken)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// Nested calls become savepoints, so a part can fail without undoing the rest. The opening statement
    /// travels with the body's first statement, and statements deferred with `queryLater` with the closing
    /// one, so an empty-bodied savepoint costs no round trip of its own.
    public func transaction<T: Sendable>(_ body: (isolated PostgresConnection) throws -> T) throws -> T {
        if let handle { deallocateUnused(handle) }
        let scope = bookkeeping.begin()
        do {
            let value = try body(self)
            let ended = try query(bookkeeping.closing(scope))
            bookkeeping.closed(scope)
            if !isInTransaction { readAheads.forget() }
            // A transaction aborted by an error the body swallowed answers COMMIT with ROLLBACK, not an error.
            guard ended.commandTag != "ROLLBACK" else {
                throw PostgresError(.other, message: "transaction rolled back: a statement in it failed")
            }
            return value
        } catch {
            readAheads.forget()
            if case .send(let rollback) = bookkeeping.failed(scope), !isBroken {
                _ = try? query(rollback.map { PostgresStatement($0) })
            }
            throw error
        }
    }

    /// Whether a `transaction` is open on this connection.
    var isInTransaction: Bool { bookkeeping.depth > 0 }

    /// Subscribes this connection to a channel; use a dedicated connection for listening.
    public func listen(_ channel: String) throws {
        let conn = try liveHandle()
        guard let escaped = PQescapeIdentifier(conn, channel, channel.utf8.count) else {
            throw PostgresError(.other, message: "cannot quote channel name")
        }
        defer { PQfreemem(escaped) }
        try query("LISTEN \(String(cString: escaped))")
    }

    /// Waits up to `timeoutMilliseconds` for notifications on this connection's thread and returns those
    /// that arrived (possibly none).
    public func waitForNotifications(timeoutMilliseconds: Int32) throws -> [PostgresNotification] {
        let conn = try liveHandle()
        var received = drainNotifications(conn)
        if !received.isEmpty { return received }
        var descriptor = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, timeoutMilliseconds)
        if ready > 0 {
            guard PQconsumeInput(conn) == 1 else {
                throw PostgresError(.connectionLost, message: Self.errorMessage(conn))
            }
            received = drainNotifications(conn)
        }
        return received
    }

    private func drainNotifications(_ conn: OpaquePointer) -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        while let notify = PQnotifies(conn) {
            received.append(PostgresNotification(
                channel: String(cString: notify.pointee.relname),
                payload: String(cString: notify.pointee.extra)))
            PQfreemem(notify)
        }
        return received
    }

    /// Closes the connection now rather than when the last reference goes away.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    private func liveHandle() throws -> OpaquePointer {
        guard let handle else { throw PostgresError(.connectionLost, message: "connection is closed") }
        return handle
    }

    private func consume(_ result: OpaquePointer?) throws -> PostgresRows {
        guard let result else {
            let message = handle.map(Self.errorMessage) ?? "no connection"
            throw PostgresError(.connectionLost, message: message)
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return Self.copyRows(result)
        default:
            throw error(from: result)
        }
    }

    private func error(from result: OpaquePointer) -> PostgresError {
        func field(_ code: UInt8) -> String? {
            PQresultErrorField(result, Int32(code)).map { String(cString: $0) }
        }
        let message = field(UInt8(ascii: "M")) ?? String(cString: PQresultErrorMessage(result))
        guard let sqlState = field(UInt8(ascii: "C")) else {
            return PostgresError(.connectionLost, message: message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        var code = PostgresError.classify(sqlState: sqlState)
        if isBroken { code = .connectionLost }
        return PostgresError(code, sqlState: sqlState, message: message, constraint: field(UInt8(ascii: "n")))
    }

    private static func copyRows(_ result: OpaquePointer) -> PostgresRows {
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var columns: [String] = []
        columns.reserveCapacity(columnCount)
        for column in 0..<columnCount { columns.append(String(cString: PQfname(result, Int32(column)))) }
        var cells: [String?] = []
        cells.reserveCapacity(rowCount * columnCount)
        for row in 0..<rowCount {
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    cells.append(nil)
                } else {
                    let length = Int(PQgetlength(result, Int32(row), Int32(column)))
                    let bytes = UnsafeRawBufferPointer(start: PQgetvalue(result, Int32(row), Int32(column)), count: length)
                    cells.append(String(decoding: bytes, as: UTF8.self))
                }
            }
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PostgresRows(columns: columns, cells: cells, affectedRows: affected,
                            commandTag: String(cString: PQcmdStatus(result)))
    }

    private static func errorMessage(_ conn: OpaquePointer) -> String {
        String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Calls `body` with NUL-terminated copies of `strings` that stay valid for the whole call, plus a
/// trailing NULL entry as libpq's keyword arrays require.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) } + [nil])
}

/// libpq's parallel arrays for `parameters`: each value's bytes (NUL-terminated text, or binary), its length
/// and its format. Copies stay valid for the whole call.
/// PostgreSQL text cannot hold NUL, and libpq reads a text parameter up to its first one, so a string with
/// one (a payload's `\u0000`, an error message quoting it) would arrive cut short — inside an array literal,
/// malformed, failing the whole statement and every job batched into it. U+FFFD stands in for it.
private func textParameter(_ text: String) -> String {
    text.utf8.contains(0) ? text.replacingOccurrences(of: "\0", with: "\u{FFFD}") : text
}

private func withParameters<R>(
    _ parameters: [any PostgresEncodable],
    _ body: (_ values: [UnsafePointer<CChar>?], _ lengths: [Int32], _ formats: [Int32]) -> R
) -> R {
    var copies: [UnsafeMutablePointer<CChar>?] = []
    var lengths: [Int32] = []
    var formats: [Int32] = []
    copies.reserveCapacity(parameters.count)
    lengths.reserveCapacity(parameters.count)
    formats.reserveCapacity(parameters.count)
    for parameter in parameters {
        if let bytes = parameter.postgresBinary {
            let copy = malloc(max(bytes.count, 1))!
            bytes.withUnsafeBytes { if let base = $0.baseAddress { copy.copyMemory(from: base, byteCount: $0.count) } }
            copies.append(copy.assumingMemoryBound(to: CChar.self))
            lengths.append(Int32(bytes.count))
            formats.append(1)
        } else {
            copies.append(parameter.postgresText.map { strdup(textParameter($0)) } ?? nil)
            lengths.append(0)
            formats.append(0)
        }
    }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) }, lengths, formats)
}
