import Foundation
import Postgres

/// What on-call did to dead letters through the console, kept apart from the dead letters themselves: a retry or
/// discard deletes the dead letter's row, and the record of who did it, when, and to what must outlive it.
public enum OperatorActions {
    public enum Action: String, Sendable {
        case retry, discard
    }

    /// One recorded action.
    public struct Record: Sendable, Equatable {
        public let at: Date
        public let operatorName: String
        public let action: String
        public let deadLetterID: Int64
        public let kind: String
        public let result: String
        public let purchaseID: Int64?
    }

    /// Records `action` on dead letter `deadLetterID` in the caller's transaction (with the action itself); the
    /// insert goes out with the transaction's next statement.
    public static func record(_ action: Action, by operatorName: String, deadLetterID: Int64, kind: String, result: String,
                              purchaseID: Int64?, on connection: isolated PostgresConnection) throws {
        try connection.queryLater("""
            INSERT INTO operator_actions (operator, action, dead_letter_id, kind, result, purchase_id)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [operatorName, action.rawValue, deadLetterID, kind, String(String.UnicodeScalarView(result.unicodeScalars.prefix(400))),
                  purchaseID])
    }

    /// The latest actions, newest first: on the dead letters page, what colleagues just did.
    public static func latest(limit: Int) -> PostgresQuery<[Record]> {
        PostgresQuery("""
            SELECT at, operator, action, dead_letter_id, kind, result, purchase_id FROM operator_actions
            ORDER BY id DESC LIMIT $1
            """, [limit]) { rows in
            try rows.map { row in
                Record(at: try row.decode(0), operatorName: try row.decode(1), action: try row.decode(2),
                       deadLetterID: try row.decode(3), kind: try row.decode(4), result: try row.decode(5),
                       purchaseID: try row.decodeOptional(6))
            }
        }
    }
}
