import Accounts
import AppStore
import Foundation
import GooglePlay
import HTTP
import Logging
import Mirror
import Postgres
import Queue
import StoreModel

/// A store purchase as a backend names it: an Apple transaction (any of the lineage's), or a Google purchase
/// token.
public enum PurchaseIdentifier: Sendable, Equatable {
    case appleTransaction(String)
    case googlePurchaseToken(String)

    public var store: Store {
        switch self {
        case .appleTransaction: .apple
        case .googlePurchaseToken: .google
        }
    }
}

/// What registering a purchase did.
public struct Registration: Sendable {
    public let connection: StoreConnection
    public let outcome: Mirror.Outcome
}

/// What an app's purchase report did: mirrored as a registration, or — a sandbox purchase on a Production
/// connection — held for the app's session with the entitlements it grants there, nothing recorded.
public enum PurchaseReport: Sendable {
    case mirrored(Registration)
    case inSession(connection: StoreConnection, entitlements: [SessionEntitlement])
}

/// A backend's `POST /mobile-stores/purchases`: the store is asked now, over the same clients and with the
/// same reads as a notification (`AppleRefetch`, `GoogleRefetch`), and its answer is written by the same
/// `Mirror.apply`, with the customer as claimant, so the linking rules, the one booking per store transaction
/// and the acknowledgement of Google tokens all hold as they do for notifications. Nothing of the request but
/// the purchase's identifier and the customer is believed.
public final class PurchaseRegistrar: Sendable {
    private let apple: AppleStoreClients
    private let google: GoogleStoreClients
    private let logger = Logger(component: "registration")

    /// - Parameter rateLimitShare: the share of each store's published rate limits this process may use.
    public init(http: HTTPClient, rateLimitShare: Double = 1) {
        apple = AppleStoreClients(http: http, rateLimitShare: rateLimitShare,
                                  historyPages: AppStoreAPIConfiguration.defaultMaxHistoryPages, metrics: nil)
        google = GoogleStoreClients(http: http, rateLimitShare: rateLimitShare, metrics: nil)
    }

    /// Registers `purchase` for `customerID`, a customer of `accountID` (the caller has checked). With
    /// `connectionID` nil the account's connections on the store are used when they are of one app: the
    /// Production one is asked first, and a Sandbox one of the same app mirrors what only the sandbox knows.
    /// A sandbox purchase nothing but a Production connection can read is an environment mismatch.
    ///
    /// Throws `RegistrationError` for every refusal; a `PostgresError` when the database fails.
    public func register(_ purchase: PurchaseIdentifier, customerID: String, accountID: Int64, connectionID: Int64?,
                         pool: PostgresPool) async throws -> Registration {
        let report = try await settle(purchase, customerID: customerID, accountID: accountID, connectionID: connectionID,
                                      sandboxInSession: false, pool: pool)
        guard case .mirrored(let registration) = report else { preconditionFailure("a registration is never in session") }
        return registration
    }

    /// An app's report of `purchase` for the customer of its account token: `register`, except that a sandbox
    /// purchase on a Production connection (App Review, TestFlight, licence testers) is judged by the same
    /// rules and answered with the entitlements it grants for the app's session, recording nothing.
    public func report(_ purchase: PurchaseIdentifier, customerID: String, accountID: Int64, connectionID: Int64?,
                       pool: PostgresPool) async throws -> PurchaseReport {
        try await settle(purchase, customerID: customerID, accountID: accountID, connectionID: connectionID,
                         sandboxInSession: true, pool: pool)
    }

    private func settle(_ purchase: PurchaseIdentifier, customerID: String, accountID: Int64, connectionID: Int64?,
                        sandboxInSession: Bool, pool: PostgresPool) async throws -> PurchaseReport {
        let candidates = try await connections(of: purchase.store, accountID: accountID, connectionID: connectionID,
                                               pool: pool)
        let source = SnapshotSource(kind: "registration", reference: nil, event: "REGISTER")
        switch purchase {
        case .appleTransaction(let transactionID):
            let (connection, fetched) = try await fetchApple(transactionID, candidates: candidates, source: source, pool: pool)
            if sandboxInSession, let session = try await inSession(fetched.snapshot, connection: connection,
                                                                   customerID: customerID, pool: pool) {
                return session
            }
            return .mirrored(try await write(fetched.snapshot, connection: connection, customerID: customerID, pool: pool) {
                outcome, db in try AppleFollowUp.follow(fetched, outcome: outcome, connection: connection, logger: self.logger, on: db)
            })
        case .googlePurchaseToken(let token):
            let snapshot = try await fetchGoogle(token, candidates: candidates, source: source, pool: pool)
            let connection = candidates.first(where: { $0.environment == snapshot.environment }) ?? candidates[0]
            if sandboxInSession, let session = try await inSession(snapshot, connection: connection,
                                                                   customerID: customerID, pool: pool) {
                return session
            }
            return .mirrored(try await write(snapshot, connection: connection, customerID: customerID, pool: pool) {
                outcome, db in try GoogleAcknowledgement.scheduleIfNeeded(snapshot, outcome: outcome, connection: connection, on: db)
            })
        }
    }

    /// The session's entitlements when `snapshot` is a sandbox purchase only a Production connection can take;
    /// nil for every other purchase, which is mirrored (or refused) as a registration is.
    private func inSession(_ snapshot: StoreSnapshot, connection: StoreConnection, customerID: String,
                           pool: PostgresPool) async throws -> PurchaseReport? {
        guard snapshot.environment == .sandbox, connection.environment == .production else { return nil }
        do {
            let entitlements = try await pool.run { db in
                try Mirror.sessionEntitlements(snapshot, connection: connection, claimant: customerID, on: db)
            }
            logger.info("sandbox purchase held in the app's session", [
                "connection": .int(Int(connection.id)), "lineage": .string(snapshot.lineage),
                "entitlements": .int(entitlements.count),
            ])
            return .inSession(connection: connection, entitlements: entitlements)
        } catch let error as MirrorError {
            throw refusal(error, snapshot: snapshot, connection: connection)
        }
    }

    /// The connections a registration may use: the one named, or every one of the account's single app on the
    /// store, Production first.
    private func connections(of store: Store, accountID: Int64, connectionID: Int64?,
                             pool: PostgresPool) async throws -> [StoreConnection] {
        var all = try await pool.query(StoreConnections.of(accountID: accountID, store: store))
        if let connectionID { all = all.filter { $0.id == connectionID } }
        guard let first = all.first else {
            throw RegistrationError(.noConnection, connectionID.map { "No \(store.displayName) connection \($0) in this account." }
                                    ?? "The account has no \(store.displayName) connection.")
        }
        guard all.allSatisfy({ $0.appIdentifier == first.appIdentifier }) else {
            throw RegistrationError(.ambiguousConnection,
                                    "The account has several \(store.displayName) apps; send connection_id to say which.")
        }
        return all.sorted { $0.environment == .production && $1.environment != .production }
    }

    // MARK: Apple

    /// Asks the first candidate; a transaction it does not know is asked of a Sandbox candidate, or else of the
    /// Production connection's Sandbox (same key): its sandbox snapshot, read for the Production connection, is
    /// an environment mismatch to a registration and the session's entitlements to an app's report.
    private func fetchApple(_ transactionID: String, candidates: [StoreConnection], source: SnapshotSource,
                            pool: PostgresPool) async throws -> (StoreConnection, AppleRefetch.Result) {
        let primary = candidates[0]
        let tools = try await appleTools(primary, pool: pool)
        do {
            return (primary, try await readApple(transactionID, connection: primary, client: tools.client, source: source,
                                                 pool: pool))
        } catch let error as AppStoreAPIError where Self.isUnknown(error) {
            if let other = candidates.dropFirst().first {
                let otherTools = try await appleTools(other, pool: pool)
                do {
                    return (other, try await readApple(transactionID, connection: other, client: otherTools.client,
                                                       source: source, pool: pool))
                } catch let error as AppStoreAPIError {
                    throw Self.isUnknown(error) ? Self.unknown : refusal(error, connection: other)
                }
            }
            guard let sandbox = tools.sandboxClient else { throw Self.unknown }
            do {
                return (primary, try await readApple(transactionID, connection: primary, client: sandbox, source: source,
                                                     pool: pool))
            } catch let error as AppStoreAPIError {
                throw Self.isUnknown(error) ? Self.unknown : refusal(error, connection: primary)
            }
        } catch let error as AppStoreAPIError {
            throw refusal(error, connection: primary)
        }
    }

    /// The lineage's snapshot as a notification's re-fetch reads it, the lineage found from the statuses.
    private func readApple(_ transactionID: String, connection: StoreConnection, client: AppStoreAPIClient,
                           source: SnapshotSource, pool: PostgresPool) async throws -> AppleRefetch.Result {
        let statuses = try await client.subscriptionStatuses(transactionID: transactionID)
        let lineage = try await lineage(of: transactionID, in: statuses, client: client)
        let revision = try await pool.query(Purchases.storedCursor(connectionID: connection.id, lineage: lineage))
        do {
            return try await AppleRefetch(client: client, logger: logger)
                .fetch(connection: connection, lineage: lineage, transactionID: transactionID, revision: revision,
                       source: source, statuses: statuses)
        } catch let error as AppleSnapshotError {
            logger.warning("the App Store's answer cannot be mirrored", ["connection": .int(Int(connection.id)),
                                                                         "error": .string(error.description)])
            throw RegistrationError(.storeRefused, "The App Store's answer for this purchase cannot be mirrored.")
        }
    }

    /// Which lineage `transactionID` is of. The statuses name each lineage by its original and latest
    /// transaction; a customer with one subscription has one lineage, which any of its transactions names.
    /// Otherwise the customer's history says which lineage holds the transaction.
    private func lineage(of transactionID: String, in statuses: SubscriptionStatuses,
                         client: AppStoreAPIClient) async throws -> String {
        let entries = statuses.groups.flatMap(\.lastTransactions)
        if let entry = entries.first(where: {
            $0.originalTransactionID == transactionID || $0.transaction.payload.transactionId == transactionID
        }) {
            return entry.originalTransactionID
        }
        if entries.count == 1 { return entries[0].originalTransactionID }
        guard !entries.isEmpty else {
            throw RegistrationError(.unknownPurchase, "The App Store knows no auto-renewable subscription for this transaction.")
        }
        var revision: String?
        repeat {
            let page = try await client.transactionHistory(transactionID: transactionID, revision: revision)
            if let found = page.transactions.first(where: { $0.payload.transactionId == transactionID }),
               let lineage = found.payload.originalTransactionId {
                return lineage
            }
            guard page.hasMore else { break }
            revision = page.revision
        } while revision != nil
        throw RegistrationError(.unknownPurchase, "The App Store knows no auto-renewable subscription for this transaction.")
    }

    private func appleTools(_ connection: StoreConnection, pool: PostgresPool) async throws -> AppleStoreClients.Tools {
        do {
            return try await apple.tools(for: connection, pool: pool)
        } catch let failure as JobFailure {
            throw Self.misconfigured(failure, connection: connection, logger: logger)
        }
    }

    private static func isUnknown(_ error: AppStoreAPIError) -> Bool {
        // A malformed transaction id is refused with 400 (`InvalidTransactionIdError`): as unknown as any.
        error.code == .transactionNotFound || (error.code == .rejected && error.httpStatus == 400)
    }

    private func refusal(_ error: AppStoreAPIError, connection: StoreConnection) -> RegistrationError {
        logger.warning("App Store call failed for a registration", ["connection": .int(Int(connection.id)),
                                                                     "error": .string(error.description)])
        if error.isRetryable {
            return RegistrationError(.unavailable, "The App Store is unavailable; try again later.",
                                     retryAfter: error.retryAfter ?? Self.defaultRetryAfter)
        }
        return RegistrationError(.storeRefused, "The App Store refused this connection's request (\(error.code)).")
    }

    // MARK: Google

    private func fetchGoogle(_ token: String, candidates: [StoreConnection], source: SnapshotSource,
                             pool: PostgresPool) async throws -> StoreSnapshot {
        let primary = candidates[0]
        let tools: GoogleStoreClients.Tools
        do {
            tools = try await google.tools(for: primary, pool: pool)
        } catch let failure as JobFailure {
            throw Self.misconfigured(failure, connection: primary, logger: logger)
        }
        let answer: GoogleRefetch.Answer
        do {
            answer = try await GoogleRefetch(tools: tools, pool: pool, previousError: nil, logger: logger)
                .fetch(connection: primary, token: token, voided: [], source: source, mirrors: candidates)
        } catch let error as GooglePlayAPIError {
            logger.warning("Play Developer API call failed for a registration", [
                "connection": .int(Int(primary.id)), "error": .string(error.description),
            ])
            if error.code == .notFound || error.code == .gone || (error.code == .rejected && error.httpStatus == 400) {
                throw Self.unknown
            }
            if error.isRetryable {
                throw RegistrationError(.unavailable, "Google Play is unavailable; try again later.",
                                        retryAfter: error.retryAfter ?? Self.defaultRetryAfter)
            }
            throw RegistrationError(.storeRefused, "Google Play refused this connection's request (\(error.code)).")
        } catch let error as GoogleSnapshotError {
            logger.warning("Google Play's answer cannot be mirrored", ["connection": .int(Int(primary.id)),
                                                                       "error": .string(error.description)])
            throw RegistrationError(.storeRefused, "Google Play's answer for this purchase cannot be mirrored.")
        }
        switch answer {
        case .snapshot(let snapshot): return snapshot
        case .pending:
            throw RegistrationError(.pending, "The purchase is pending at Google Play; register it again once it is paid.")
        case .unanswered, .refunds: throw Self.unknown
        }
    }

    // MARK: Shared

    private static let defaultRetryAfter: Duration = .seconds(5)

    private static let unknown = RegistrationError(.unknownPurchase, "The store does not know this purchase.")

    private func mismatch(_ environment: StoreEnvironment, _ connection: StoreConnection) -> RegistrationError {
        RegistrationError(.environmentMismatch, "Environment mismatch: a \(environment.rawValue) purchase cannot be "
            + "registered on a \(connection.environment.rawValue) connection.")
    }

    /// A connection the store clients cannot be built for (no key, a key that does not load) or that changed
    /// while it was read.
    private static func misconfigured(_ failure: JobFailure, connection: StoreConnection, logger: Logger) -> RegistrationError {
        logger.warning("cannot call the store for a registration", ["connection": .int(Int(connection.id)),
                                                                     "error": .string("\(failure)")])
        if failure.code == .retryable {
            return RegistrationError(.unavailable, "The store connection is changing; try again.", retryAfter: .seconds(1))
        }
        return RegistrationError(.storeRefused, "The store connection is not set up to query the store.")
    }

    /// `Mirror.apply` with the customer as claimant, and what the worker adds with it, in one transaction.
    private func write(_ snapshot: StoreSnapshot, connection: StoreConnection, customerID: String, pool: PostgresPool,
                       with follow: @escaping @Sendable (Mirror.Outcome, isolated PostgresConnection) throws -> Void)
        async throws -> Registration
    {
        guard snapshot.environment == connection.environment else { throw mismatch(snapshot.environment, connection) }
        do {
            let outcome = try await pool.transaction { db in
                let outcome = try Mirror.apply(snapshot, connection: connection, claimant: customerID, on: db)
                try follow(outcome, db)
                return outcome
            }
            logger.info("registered", ["connection": .int(Int(connection.id)), "lineage": .string(snapshot.lineage),
                                       "result": .string(outcome.summary)])
            return Registration(connection: connection, outcome: outcome)
        } catch let error as MirrorError {
            throw refusal(error, snapshot: snapshot, connection: connection)
        }
    }

    private func refusal(_ error: MirrorError, snapshot: StoreSnapshot, connection: StoreConnection) -> RegistrationError {
        switch error.code {
        case .ownershipConflict:
            return RegistrationError(.ownershipConflict, "This purchase belongs to another customer.")
        case .productNotMapped:
            return RegistrationError(.productNotMapped, "The store product \(snapshot.productID) is not mapped to a plan.")
        case .lineageBusy:
            return RegistrationError(.unavailable, "The purchase is being updated; try again.", retryAfter: .seconds(1))
        case .environmentMismatch:
            return mismatch(snapshot.environment, connection)
        default:
            logger.error("a registration's snapshot cannot be mirrored", ["error": .string(error.message)])
            return RegistrationError(.storeRefused, "The store's answer for this purchase cannot be mirrored.")
        }
    }
}

extension Store {
    /// The store's name as people write it.
    var displayName: String {
        switch self {
        case .apple: "App Store"
        case .google: "Google Play"
        }
    }
}
