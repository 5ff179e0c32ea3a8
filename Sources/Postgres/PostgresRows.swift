/// The rows a statement returned, copied out of libpq's result so they can cross threads freely.
public struct PostgresRows: Sendable, RandomAccessCollection {
    public let columns: [String]
    /// Row-major cells; nil is SQL NULL.
    private let cells: [String?]
    /// For INSERT/UPDATE/DELETE: how many rows the statement touched.
    public let affectedRows: Int
    /// The server's command tag, e.g. `UPDATE 3`, or `ROLLBACK` for a COMMIT of an aborted transaction.
    public let commandTag: String

    init(columns: [String], cells: [String?], affectedRows: Int, commandTag: String) {
        self.columns = columns
        self.cells = cells
        self.affectedRows = affectedRows
        self.commandTag = commandTag
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { columns.isEmpty ? 0 : cells.count / columns.count }

    public subscript(position: Int) -> PostgresRow {
        PostgresRow(columns: columns, cells: cells[(position * columns.count)..<((position + 1) * columns.count)])
    }
}

/// One row; decode cells by position or column name.
public struct PostgresRow: Sendable {
    public let columns: [String]
    let cells: ArraySlice<String?>

    /// The raw text of a cell, nil for NULL.
    public func text(_ index: Int) -> String? { cells[cells.startIndex + index] }

    /// Decodes a non-null cell; a NULL is a decoding error.
    public func decode<T: PostgresDecodable>(_ index: Int, as type: T.Type = T.self) throws -> T {
        try checkRange(index)
        guard let text = text(index) else {
            throw PostgresError(.decoding, message: "column \(columns[index]) is NULL, expected \(T.self)")
        }
        return try T(postgresText: text)
    }

    /// Decodes a cell that may be NULL.
    public func decodeOptional<T: PostgresDecodable>(_ index: Int, as type: T.Type = T.self) throws -> T? {
        try checkRange(index)
        guard let text = text(index) else { return nil }
        return try T(postgresText: text)
    }

    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        try decode(try position(of: column), as: T.self)
    }

    public func decodeOptional<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T? {
        try decodeOptional(try position(of: column), as: T.self)
    }

    private func checkRange(_ index: Int) throws {
        guard columns.indices.contains(index) else {
            throw PostgresError(.decoding, message: "column \(index) out of range (\(columns.count) columns)")
        }
    }

    private func position(of column: String) throws -> Int {
        guard let index = columns.firstIndex(of: column) else {
            throw PostgresError(.decoding, message: "no column named \(column)")
        }
        return index
    }
}
