import Console
import Foundation
import GooglePlay
import HTTP
import Logging
import Postgres
import Testing
import TestSupport

/// The on-call console on loopback as `storesync console` runs it: a real server on a port of its own whose pool
/// logs in as a fresh member of `storesync_console`, so every console test also proves that role's grants suffice.
/// Its client is the project's `HTTPClient`, which does not follow redirects: a test sees the console's 303s and
/// their `Location` as a browser would before following them.
struct ConsoleHarness {
    /// What actions are recorded under when the console has no credentials.
    static let localOperator = "local:oncall"

    /// The console's base URL, `http://127.0.0.1:PORT`.
    let baseURL: String
    /// The test database's URL logging in as the console's role.
    let roleURL: String
    private let client: HTTPClient
    /// Sent with every request (an `Authorization` header, when the console has credentials).
    private let headers: [(name: String, value: String)]

    static func with(_ database: TestDatabase, credentials: OperatorCredentials? = nil,
                     _ body: (ConsoleHarness) async throws -> Void) async throws {
        let role = try await TestRole.create(memberOf: "storesync_console", for: database)
        let pool = PostgresPool(PostgresConfiguration(url: role.url, poolSize: 4, acquireTimeout: .seconds(20),
                                                      applicationName: "storesync-console-tests"))
        let keysHTTP: HTTPClient
        let client: HTTPClient
        let server: HTTPServer
        do {
            keysHTTP = try HTTPClient()
            client = try HTTPClient()
            let console = Console(configuration: Console.Configuration(credentials: credentials, localOperator: localOperator),
                                  pool: pool, keyCaches: GoogleKeyCaches(http: keysHTTP), logger: Logger(component: "console"))
            server = try HTTPServer(configuration: HTTPServerConfiguration(), router: console.router)
        } catch {
            await pool.close()
            await role.drop()
            throw error
        }
        let harness = ConsoleHarness(baseURL: "http://127.0.0.1:\(server.port)", roleURL: role.url, client: client,
                                     headers: [])
        func shutDown() async {
            await server.stop(grace: .seconds(1))
            await client.shutdown()
            await keysHTTP.shutdown()
            await pool.close()
            await role.drop()
        }
        do {
            try await body(harness)
        } catch {
            await shutDown()
            throw error
        }
        await shutDown()
    }

    /// The same console, every request signed in with HTTP Basic as `name`.
    func signedIn(as name: String, password: String) -> ConsoleHarness {
        let credentials = Data("\(name):\(password)".utf8).base64EncodedString()
        return ConsoleHarness(baseURL: baseURL, roleURL: roleURL, client: client,
                              headers: [("Authorization", "Basic \(credentials)")])
    }

    /// One answer of the console.
    struct Answer {
        let status: Int
        let headers: [(name: String, value: String)]
        let body: Data

        func header(_ name: String) -> String? { headers.first { $0.name == name.lowercased() }?.value }

        var text: String { String(decoding: body, as: UTF8.self) }

        /// The value of the first `csrf` hidden field, which every form that changes something carries.
        func csrf() throws -> String {
            try hiddenField("csrf")
        }

        /// The value of the page's first hidden field `name` (the list's bulk form carries `died_by`, the newest
        /// dead letter it showed).
        func hiddenField(_ name: String) throws -> String {
            let match = try #require(text.firstMatch(of: try Regex(#"type="hidden" name="\#(name)" value="([^"]+)""#)),
                                     "no \(name) field in a \(status) page: \(text.prefix(2000))")
            return try #require(match.output[1].substring.map(String.init))
        }

        /// The dead letters the page links to, in page order (the list's rows link each one once).
        var deadLetterLinks: [Int64] {
            text.matches(of: #/href="/dead-letters/(\d+)"/#).compactMap { Int64($0.output.1) }
        }
    }

    func get(_ path: String, headers extra: [(name: String, value: String)] = []) async throws -> Answer {
        try await send(HTTPClientRequest(url: baseURL + path, headers: headers + extra))
    }

    /// Posts `fields` form-encoded, as a browser submits a form.
    func post(_ path: String, _ fields: [(String, String)],
              headers extra: [(name: String, value: String)] = []) async throws -> Answer {
        try await send(HTTPClientRequest(method: "POST", url: baseURL + path,
                                         headers: headers + [("Content-Type", "application/x-www-form-urlencoded")] + extra,
                                         body: Data(PercentEncoding.form(fields).utf8)))
    }

    /// Posts `fields` with a fresh token from `page` (the page whose form it submits) and `confirmed=yes`, as the
    /// confirmation dialog submits it.
    func confirm(_ path: String, _ fields: [(String, String)], tokenFrom page: String = "/dead-letters") async throws -> Answer {
        let token = try await get(page).csrf()
        return try await post(path, [("csrf", token)] + fields + [("confirmed", "yes")])
    }

    private func send(_ request: HTTPClientRequest) async throws -> Answer {
        let response = try await client.send(request)
        return Answer(status: response.status, headers: response.headers, body: response.body)
    }
}

/// A dead letter written straight into `dead_letters`, for the console's filter, paging and action tests: what the
/// worker would leave, without running a job to failure for each row.
struct SyntheticDeadLetter: Sendable {
    let id: Int64
    let kind: String
    /// The JSON payload the job carried (a notification's `account_id`, a store job's `connection_id`).
    let payload: String
    let reason: String
    let minutesAgo: Int

    /// Inserts `letters` in one transaction, so that one `now()` orders them exactly by `minutesAgo`.
    static func insert(_ letters: [SyntheticDeadLetter], into database: TestDatabase) async throws {
        try await database.pool.transaction { db in
            for letter in letters {
                try db.query("""
                    INSERT INTO dead_letters (id, kind, payload, priority, max_attempts, attempts, errors, reason,
                                              job_created_at, dead_at)
                    VALUES ($1, $2, $3::jsonb, 0, 3, 3,
                            jsonb_build_array(jsonb_build_object('attempt', 1, 'at', now(), 'worker', 'worker-a:1',
                                                                 'error', 'first try: ' || $4::text),
                                              jsonb_build_object('attempt', 3, 'at', now(), 'worker', 'worker-b:2',
                                                                 'error', $4::text)),
                            $4, now() - ($5::int + 5) * interval '1 minute', now() - $5::int * interval '1 minute')
                    """, [letter.id, letter.kind, letter.payload, letter.reason, letter.minutesAgo])
            }
        }
    }

    /// An `apple.resync` of `lineage` on `connectionID`, as `storesync resync` queues one.
    static func resync(id: Int64, connectionID: Int64, lineage: String, minutesAgo: Int = 1) -> SyntheticDeadLetter {
        SyntheticDeadLetter(id: id, kind: "apple.resync",
                            payload: #"{"connection_id": \#(connectionID), "lineage": "\#(lineage)", "reason": "manual"}"#,
                            reason: "HTTP 500 from the App Store", minutesAgo: minutesAgo)
    }
}
