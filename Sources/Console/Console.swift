import Foundation
import GooglePlay
import HTTP
import Ingest
import Logging
import Postgres

/// The on-call console: a server-rendered web page for dead letters, purchases' stories and queue health,
/// served by `storesync console`. It reads through the owning modules' queries and changes nothing but dead letters
/// (retry, discard), each change recorded with who made it.
public final class Console: Sendable {
    public struct Configuration: Sendable {
        /// Nil on loopback: whoever reaches the port (through an SSH tunnel) is `localOperator`.
        public var credentials: OperatorCredentials?
        /// The name actions are recorded under when there are no credentials.
        public var localOperator: String

        public init(credentials: OperatorCredentials?, localOperator: String) {
            self.credentials = credentials
            self.localOperator = localOperator
        }
    }

    /// Dead letters on one page of the list.
    public static let deadLettersPerPage = 50

    let pool: PostgresPool
    let logger: Logger
    /// Judges a dead letter's notification as ingest would now (`WebhookAuthenticator.judge`).
    let authenticator: WebhookAuthenticator
    let access: ConsoleAccess
    let csrf = CSRFTokens()
    let activity = ActivityHistory()

    /// - Parameter keyCaches: where Google's push-signing keys are fetched, to judge a push again.
    public init(configuration: Configuration, pool: PostgresPool, keyCaches: GoogleKeyCaches, logger: Logger) {
        self.pool = pool
        self.logger = logger
        authenticator = WebhookAuthenticator(pool: pool, keyCaches: keyCaches)
        access = ConsoleAccess(credentials: configuration.credentials, localOperator: configuration.localOperator)
    }

    /// Reads what the queue page keeps between requests (the last day's hourly counts), so its first visitor does not
    /// wait for a day of receipts to be counted. A failure only leaves it to that first visit.
    public func warm() async {
        do {
            _ = try await activity.read(pool: pool)
        } catch {
            logger.warning("could not read the last day's activity yet", ["error": .string("\(error)")])
        }
    }

    /// Every page and action, behind the access check; a path outside them is a page-shaped 404.
    public var router: HTTPRouter {
        var router = HTTPRouter()
        router.route("GET", Assets.stylesheetPath) { _ in Assets.stylesheet() }
        router.route("GET", Assets.scriptPath) { _ in Assets.script() }
        router.route("GET", "/") { [self] in await serve($0, QueuePage.render) }
        router.route("GET", "/dead-letters") { [self] in await serve($0, DeadLetterListPage.render) }
        router.route("POST", "/dead-letters/actions") { [self] in await serve($0, DeadLetterActions.perform) }
        router.route("GET", prefix: "/dead-letters/") { [self] in await serve($0, DeadLetterPage.render) }
        router.route("POST", prefix: "/dead-letters/") { [self] in await serve($0, DeadLetterActions.performOne) }
        router.route("GET", "/purchases") { [self] in await serve($0, PurchaseSearchPage.render) }
        router.route("GET", prefix: "/purchases/") { [self] in await serve($0, PurchasePage.render) }
        // Another method on a page: a 405 with the page's headers (the router's own has none of them).
        for (path, allowed) in [("/", "GET, HEAD"), ("/dead-letters", "GET, HEAD"), ("/purchases", "GET, HEAD"),
                                ("/dead-letters/actions", "POST")] {
            router.route("*", path) { _ in
                var response = Layout.problem(405, "This page does not take that method.", operatorName: "")
                response.headers.append(("Allow", allowed))
                return response
            }
        }
        // Any other path: a 404 in the page frame, once the visitor may see pages at all.
        router.route("*", prefix: "/") { [self] request in
            await serve(request) { _, console in
                Layout.problem(404, "There is no page at \(request.path.prefix(200)).", operatorName: console.operatorName)
            }
        }
        return router
    }

    private func serve(_ request: HTTPRequest,
                       _ page: @Sendable (Console, ConsoleRequest) async throws -> HTTPResponse) async -> HTTPResponse {
        let operatorName: String
        switch await access.decide(request) {
        case .refused(let response): return response
        case .allowed(let name): operatorName = name
        }
        guard let console = ConsoleRequest(request, operatorName: operatorName) else {
            return Layout.problem(400, "The request's query or form is not valid UTF-8 form encoding.", operatorName: operatorName)
        }
        if request.method == "POST", let refusal = refusal(of: console) { return refusal }
        do {
            return try await page(self, console)
        } catch {
            logger.error("console page failed", ["path": .string(request.path), "error": .string("\(error)")])
            return Layout.problem(503, "The page could not be read from the database: \(error)", operatorName: operatorName)
        }
    }

    /// Why a form post is refused: from another site (its `Origin` or `Sec-Fetch-Site` says so), or without the
    /// token this process issued to this operator with the page.
    private func refusal(of request: ConsoleRequest) -> HTTPResponse? {
        let http = request.http
        if http.header("sec-fetch-site").map({ !["same-origin", "none"].contains($0.lowercased()) }) == true
            || http.header("origin").map({ origin in !Self.sameOrigin(origin, host: http.header("host")) }) == true {
            return Layout.problem(403, "Forms are accepted only from the console's own pages.", operatorName: request.operatorName)
        }
        guard let token = request.field("csrf"), csrf.accepts(token, for: request.operatorName, at: Date()) else {
            return Layout.problem(403, "This form has expired or did not come from the console; reload the page and try again.",
                                  operatorName: request.operatorName)
        }
        return nil
    }

    private static func sameOrigin(_ origin: String, host: String?) -> Bool {
        guard let host else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    /// The hidden field a form that changes something carries.
    func csrfField(for operatorName: String) -> HTML {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(csrf.issue(for: operatorName, at: Date()))\">"
    }
}
