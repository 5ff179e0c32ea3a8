import Postgres
import Testing

/// Guards `ConnectionString`: a malformed DATABASE_URL is refused before connecting, with libpq's reason but
/// never the password, however libpq quotes it back.
@Suite("Connection strings")
struct ConnectionStringTests {
    @Test("strings libpq parses are accepted", arguments: [
        "postgresql://u:secret@127.0.0.1:5432/db", "postgres://u@[::1]/db?sslmode=disable", "host=/tmp dbname=db password='a b'",
        "mydb",
    ])
    func accepts(_ text: String) throws {
        try ConnectionString.validate(text)
    }

    @Test("strings libpq cannot parse are refused with its reason and without the password", arguments: [
        ("postgresql://u:topsecret@[::1/db", "matching \"]\"", "topsecret"),
        ("postgresql://u:top%zzsecret@localhost/db", "invalid percent-encoded token", "top%zzsecret"),
        ("postgresql://u:topsecret@localhost/db?bogus=1", "invalid URI query parameter", "topsecret"),
        ("postgresql://u@localhost/db?password=topsecret%zz", "invalid percent-encoded token", "topsecret"),
        ("postgresql://u:top?secret%zz@localhost/db", "invalid percent-encoded token", "secret"),
        ("host=localhost password=topsecret bogus=1", "invalid connection option \"bogus\"", "topsecret"),
        ("host=localhost password='topsecret", "unterminated quoted string", "topsecret"),
    ])
    func refuses(_ text: String, _ reason: String, _ secret: String) {
        let error = #expect(throws: PostgresError.self) { try ConnectionString.validate(text) }
        #expect(error?.code == .invalidConnectionString)
        let description = error.map(String.init(describing:)) ?? ""
        #expect(description.contains(reason), "description: \(description)")
        #expect(!description.contains(secret), "description: \(description)")
    }

    @Test("redact removes the URI user info's password, password= values and the string's own password", arguments: [
        ("bad URI: \"postgresql://u:p@ss/w@rd@[::1/db\"", "postgresql://u:p@ss/w@rd@[::1/db",
         "bad URI: \"postgresql://u:[redacted]@[::1/db\""),
        ("invalid percent-encoded token: \"pa%zz\"", "postgresql://u:pa%zz@h/db", "invalid percent-encoded token: \"[redacted]\""),
        ("saw password=hunter2 and password = 'a b'", "host=h", "saw password=[redacted] and password = [redacted]"),
        ("failed for user \"u\"", "postgresql://u:hunter2@h/db", "failed for user \"u\""),
        // libpq ends the user info at the first "@" or "/": the rest of such a password becomes host or port.
        ("could not translate host name \"kQ9zLm@localhost\" to address", "postgresql://user:Xy7@kQ9zLm@localhost/db",
         "could not translate host name \"[redacted]@localhost\" to address"),
        ("invalid integer value \"pa\" for connection option \"port\"", "postgresql://user:pa/ss99@localhost/db",
         "invalid integer value \"[redacted]\" for connection option \"port\""),
    ])
    func redact(_ message: String, _ connectionString: String, _ expected: String) {
        #expect(ConnectionString.redact(message, secretsOf: connectionString) == expected)
    }
}
