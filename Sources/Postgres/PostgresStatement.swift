/// A statement and its parameters, for running several in one round trip (`PostgresConnection.query(_:)`).
public struct PostgresStatement: Sendable {
    public let sql: String
    public let parameters: [any PostgresEncodable]

    public init(_ sql: String, _ parameters: [any PostgresEncodable] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}

/// A statement together with how to read its answer, so that modules can hand out their reads and a caller
/// can send several of them — each module's own — in one round trip, getting typed answers back.
public struct PostgresQuery<Value>: Sendable {
    public let statement: PostgresStatement
    let decode: @Sendable (PostgresRows) throws -> Value

    public init(_ sql: String, _ parameters: [any PostgresEncodable] = [],
                decode: @escaping @Sendable (PostgresRows) throws -> Value) {
        statement = PostgresStatement(sql, parameters)
        self.decode = decode
    }

    /// The same statement, its answer read on into another value (so callers can send queries of different
    /// kinds where one kind is expected).
    public func map<Other>(_ transform: @escaping @Sendable (Value) throws -> Other) -> PostgresQuery<Other> {
        let decode = decode
        return PostgresQuery<Other>(statement.sql, statement.parameters) { try transform(decode($0)) }
    }
}

extension PostgresConnection {
    /// Runs `query` and reads its answer.
    public func query<Value>(_ query: PostgresQuery<Value>) throws -> Value {
        try query.decode(self.query(query.statement.sql, query.statement.parameters))
    }

    /// Runs two or more queries in order in one round trip (see `query(_: [PostgresStatement])`) and returns
    /// their answers, each read its own way.
    public func query<First, Second, each Rest>(
        _ first: PostgresQuery<First>, _ second: PostgresQuery<Second>, _ rest: repeat PostgresQuery<each Rest>
    ) throws -> (First, Second, repeat each Rest) {
        try answers(query(statements(first, second, repeat each rest)), first, second, repeat each rest)
    }
}

/// The statements of two or more queries, in order.
func statements<First, Second, each Rest>(
    _ first: PostgresQuery<First>, _ second: PostgresQuery<Second>, _ rest: repeat PostgresQuery<each Rest>
) -> [PostgresStatement] {
    var statements = [first.statement, second.statement]
    for query in repeat each rest { statements.append(query.statement) }
    return statements
}

/// The answers of two or more queries, each read its own way from its statement's rows in `results`.
func answers<First, Second, each Rest>(
    _ results: [PostgresRows], _ first: PostgresQuery<First>, _ second: PostgresQuery<Second>,
    _ rest: repeat PostgresQuery<each Rest>
) throws -> (First, Second, repeat each Rest) {
    var index = 2
    func answer<V>(_ query: PostgresQuery<V>) throws -> V {
        defer { index += 1 }
        return try query.decode(results[index])
    }
    return (try first.decode(results[0]), try second.decode(results[1]), repeat try answer(each rest))
}
