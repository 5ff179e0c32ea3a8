import Postgres
import StoreModel

/// Questions about the invoices the mirror booked, for callers deciding what to fetch.
public enum Invoices {
    /// Which of `transactionIDs` already have an invoice on `store`.
    public static func booked(store: Store, among transactionIDs: [String]) -> PostgresQuery<Set<String>> {
        PostgresQuery("""
            SELECT store_transaction_id FROM invoices WHERE store = $1 AND store_transaction_id = ANY($2::text[])
            """, [store.rawValue, PostgresArray(transactionIDs)]) { rows in Set(try rows.map { try $0.decode(0) }) }
    }
}
