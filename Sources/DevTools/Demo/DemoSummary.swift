import Accounts
import CLI
import Foundation
import Postgres
import StoreModel

/// What the demo prints: the demo account's purchases as the mirror holds them, the totals a newcomer
/// should recognise (subscriptions, invoices, refunds, a purchase pending claim), and where to look next.
enum DemoSummary {
    struct Purchase: Sendable {
        let id: Int64
        let product: String
        let storeState: String
        /// `nil` while the purchase is pending claim.
        let customer: String?
        /// SubscriptionFlow's status of the linked subscription; `nil` without one.
        let subscriptionStatus: String?
        var invoices = 0
        var billed: [String: Int64] = [:]
        var refunds = 0
        var refunded: [String: Int64] = [:]
    }

    static func read(accountID: Int64, on db: isolated PostgresConnection) throws -> [Purchase] {
        var purchases = try db.query("""
            SELECT p.id, p.store_product_id, p.store_state, cu.name, s.status
            FROM store_purchases p JOIN store_connections c ON c.id = p.connection_id
            LEFT JOIN customers cu ON cu.id = p.customer_id
            LEFT JOIN customer_subscriptions s ON s.purchase_id = p.id
            WHERE c.account_id = $1 ORDER BY cu.name NULLS LAST, p.id
            """, [accountID]).map { row in
            Purchase(id: try row.decode(0), product: try row.decode(1), storeState: try row.decode(2),
                     customer: try row.decodeOptional(3), subscriptionStatus: try row.decodeOptional(4))
        }
        let index = Dictionary(uniqueKeysWithValues: purchases.enumerated().map { ($1.id, $0) })
        for row in try db.query("""
            SELECT i.purchase_id, i.amount_minor, i.currency FROM invoices i
            JOIN store_purchases p ON p.id = i.purchase_id JOIN store_connections c ON c.id = p.connection_id
            WHERE c.account_id = $1
            """, [accountID]) {
            guard let at = index[try row.decode(0, as: Int64.self)] else { continue }
            purchases[at].invoices += 1
            purchases[at].billed[try row.decode(2), default: 0] += try row.decode(1, as: Int64.self)
        }
        for row in try db.query("""
            SELECT i.purchase_id, r.amount_minor, r.currency FROM refunds r JOIN invoices i ON i.id = r.invoice_id
            JOIN store_purchases p ON p.id = i.purchase_id JOIN store_connections c ON c.id = p.connection_id
            WHERE c.account_id = $1 AND r.reversed_at IS NULL
            """, [accountID]) {
            guard let at = index[try row.decode(0, as: Int64.self)] else { continue }
            purchases[at].refunds += 1
            purchases[at].refunded[try row.decode(2), default: 0] += try row.decode(1, as: Int64.self)
        }
        return purchases
    }

    /// Where the demo lives, for the heading and the hints.
    struct Context: Sendable {
        let host: String
        let accountID: Int64
        let connectionID: Int64?
        /// The simulator's URL while it runs after this command returns; `nil` when it stops with the command.
        let runningSimulatorURL: String?
        let customers: [DemoCatalog.Customer]
        /// Lineages the running simulator knows (those played in this run), customer A's first.
        let knownLineages: [String]
        /// The API client made with the account, whose secret is shown only now; nil on later runs.
        let apiClient: APIClients.Created?
        /// Where `serve` answers the API (the --ingest URL's origin).
        let apiURL: String?
        /// How to call this binary in the hints.
        let binary: String
    }

    static func render(_ purchases: [Purchase], _ context: Context) -> String {
        let subscriptions = purchases.filter { $0.subscriptionStatus != nil }
        let revoked = subscriptions.filter { $0.storeState == "revoked" }.count
        let invoices = purchases.reduce(0) { $0 + $1.invoices }
        let unclaimed = purchases.filter { $0.customer == nil }
        let unclaimedInvoices = unclaimed.reduce(0) { $0 + $1.invoices }
        let refunds = purchases.reduce(0) { $0 + $1.refunds }
        var lines = ["", "StoreSync demo: account \(context.host) (id \(context.accountID))"
            + (context.connectionID.map { ", App Store connection \($0)" } ?? ""), ""]
        if purchases.isEmpty {
            lines.append("No purchases mirrored for it yet.")
        } else {
            lines.append(Output.table(["CUSTOMER", "PRODUCT", "SUBSCRIPTION", "STORE STATE", "INVOICES", "BILLED", "REFUNDED"],
                                      purchases.map { purchase in
                [purchase.customer ?? "-", purchase.product,
                 purchase.customer == nil ? "pending claim" : purchase.subscriptionStatus ?? "-", purchase.storeState,
                 String(purchase.invoices), money(purchase.billed), money(purchase.refunded)]
            }))
        }
        lines += ["", "Mirrored: \(count(subscriptions.count, "subscription")) (\(revoked) revoked), "
            + "\(count(invoices, "invoice")) (\(invoices - unclaimedInvoices) for customers, \(unclaimedInvoices) on purchases "
            + "pending claim), \(count(refunds, "refund")), \(count(unclaimed.count, "purchase")) pending claim."]
        lines += hints(context) + apiHints(context)
        return lines.joined(separator: "\n")
    }

    private static func hints(_ context: Context) -> [String] {
        let bin = context.binary
        var lines = [
            "", "Look at them with psql \"$DATABASE_URL\" (in a checkout: eval \"$(deploy/dev.sh env)\" first):",
            "  SELECT c.name, s.status, s.store_state, s.current_period_end FROM customer_subscriptions s "
                + "JOIN customers c ON c.id = s.customer_id;",
            "  SELECT store_transaction_id, store_product_id, amount_minor, currency, customer_id FROM invoices ORDER BY issued_at;",
            "  SELECT refunded_transaction_id, amount_minor, currency, kind FROM refunds;",
            "  SELECT lineage, store_product_id, store_state FROM store_purchases WHERE customer_id IS NULL;  -- pending claim",
            "or the CLI: \(bin) status" + (context.connectionID.map { ", \(bin) connections show \($0)" } ?? ""),
        ]
        guard let url = context.runningSimulatorURL else {
            lines += ["", "The App Store simulator stopped with this command; \(bin) demo --keep-running starts it again "
                + "and points the demo connection at it."]
            return lines
        }
        let monthly = DemoCatalog.monthly
        lines += ["", "The App Store simulator runs at \(url) until Ctrl-C. Drive it from another shell:"]
        if let customer = context.customers.first {
            lines.append("  \(bin) simulator scenario subscribe --url \(url) --product-id \(monthly.id) "
                + "--price \(monthly.milliunits) --currency \(monthly.currency) --account-token \(customer.token.uuidString.lowercased())"
                + "   # buys for \(customer.name)")
        }
        if let lineage = context.knownLineages.first {
            lines.append("  \(bin) simulator scenario renew --url \(url) --id \(lineage)")
            lines.append("  \(bin) simulator scenario refund --url \(url) --id \(lineage)")
        }
        lines.append("  \(bin) simulator --help   lists every scenario; the simulator forgets its subscriptions when it stops.")
        return lines
    }

    /// How to call the Mobile Stores API for the demo account, as pasted.
    private static func apiHints(_ context: Context) -> [String] {
        guard let origin = context.apiURL else { return [] }
        let host = "--header 'Host: \(context.host)'"
        guard let client = context.apiClient else {
            return ["", "The Mobile Stores API answers at \(origin) for host \(context.host). Make an API client with",
                    "  storesync api-clients add --account \(context.host) --name backend",
                    "and get a token as the README's \"Mobile Stores API\" section shows."]
        }
        var lines = ["", "The Mobile Stores API answers at \(origin) for host \(context.host). The demo's API client "
                     + "(its secret is shown only now):",
                     "  curl -s -X POST \(origin)/oauth/token \(host) --data-urlencode grant_type=client_credentials "
                     + "--data-urlencode client_id=\(client.client.id) --data-urlencode client_secret=\(client.secret)",
                     "  TOKEN=…   # the access_token it answers"]
        if let customer = context.customers.first {
            lines.append("  curl -s \(origin)/api/v1/mobile-stores/customers/\(customer.id)/entitlements \(host) "
                         + "--header \"Authorization: Bearer $TOKEN\"   # \(customer.name)'s entitlements")
            if let secret = customer.secret {
                let pair = "--header 'X-SF-Account-Token: \(customer.token.uuidString.lowercased())' "
                    + "--header 'X-SF-Client-Secret: \(secret)'"
                lines += ["As \(customer.name)'s app, with the account token pair a backend hands it (the secret is shown only now):",
                          "  curl -s \(origin)/api/v1/mobile-stores/client/entitlements \(host) \(pair)"]
                if let lineage = context.knownLineages.first {
                    lines.append("  curl -s -X POST \(origin)/api/v1/mobile-stores/client/purchases \(host) \(pair) "
                                 + "--header 'Content-Type: application/json' "
                                 + "--data '{\"store\":\"apple\",\"transaction_id\":\"\(lineage)\"}'   # re-reports its purchase")
                }
            }
        }
        return lines
    }

    /// Exact amounts per currency, e.g. `29.97 USD`; `-` for none.
    private static func money(_ amounts: [String: Int64]) -> String {
        amounts.isEmpty ? "-" : amounts.sorted { $0.key < $1.key }
            .map { Money(minorUnits: $0.value, currency: $0.key).description }.joined(separator: " + ")
    }

    private static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
