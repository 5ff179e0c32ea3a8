import Foundation
import Postgres

/// The name that routes a job to its handler. Validated once, where it is declared, by the rule the `jobs`
/// table checks (lowercase letters, digits, `.`, `_`, `-`, starting with a letter or digit, at most 100
/// characters), so a mistyped kind fails at start-up instead of at the first enqueue.
public struct JobKind: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let name: String

    /// nil when `name` breaks the rule.
    public init?(_ name: String) {
        guard Self.isValid(name) else { return nil }
        self.name = name
    }

    /// For declarations (`static let kind: JobKind = "apple.resync"`): a literal breaking the rule is a
    /// programming error.
    public init(stringLiteral name: String) {
        precondition(Self.isValid(name), "invalid job kind \(name.debugDescription)")
        self.name = name
    }

    public var description: String { name }

    /// The `jobs.kind` check: `^[a-z0-9][a-z0-9._-]{0,99}$`.
    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 100 else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool { (0x61...0x7a).contains(byte) || (0x30...0x39).contains(byte) }
        return alphanumeric(first) && bytes.dropFirst().allSatisfy { alphanumeric($0) || [0x2e, 0x5f, 0x2d].contains($0) }
    }
}

/// A kind is a statement parameter as its name (`WHERE kind = $1`).
extension JobKind: PostgresEncodable {
    public var postgresText: String? { name }
}

/// A job's payload as a type, after River's `JobArgs`: the kind it is enqueued as and the fields it carries.
/// Every writer — Swift through `NewJob(_:)`, or SQL that builds the same object — and its handler agree on
/// one declaration instead of hand-built JSON on one side and hand-decoding on the other.
///
/// Keys are snake_case, declared in the type's `CodingKeys` where a property name differs; dates are ISO 8601
/// strings (what PostgreSQL's `jsonb` writes for a `timestamptz`, too). See `JobPayload`.
public protocol JobArgs: Codable, Sendable {
    static var kind: JobKind { get }
}

/// The args of a job a `Schedule` enqueues once per period: the schedule's name and the period's key.
public protocol ScheduledJobArgs: JobArgs {
    init(schedule: String, period: String)
}

/// How job args become a `payload` and back: one encoder and one decoder for every kind, so the key and
/// date styles cannot drift apart between kinds.
public enum JobPayload {
    /// The longest reason a decoding failure gives; coding paths of nested arrays can grow.
    static let maxReason = 300

    /// One job's payload, as every writer of the kind must spell it.
    public static func encode<Args: JobArgs>(_ args: Args) throws -> String {
        try encode([args])[0]
    }

    /// Many args with one encoder, for fan-outs of thousands.
    public static func encode<Args: JobArgs>(_ args: [Args]) throws -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(iso8601WithFraction))
        }
        return try args.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
    }

    /// Reads `payload` as `Args`; a payload that cannot be read fails permanently, since running the job again
    /// reads the same bytes. The reason names the kind and what was wrong where, never a value the payload
    /// holds (a purchase token, say).
    ///
    /// Until the next release, camelCase keys (`connectionID`, as releases before typed job args wrote for
    /// acknowledgements and consumption answers) are read as their snake_case spelling: jobs queued by
    /// workers of the previous release, during a rolling upgrade or before it, still run.
    public static func decode<Args: JobArgs>(_ type: Args.Type, from payload: String) throws(JobFailure) -> Args {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .custom { path in LegacyKey(snakeCasing: path[path.count - 1]) }
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = date(iso8601: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 time")
            }
            return date
        }
        do {
            return try decoder.decode(type, from: Data(payload.utf8))
        } catch let error as DecodingError {
            throw JobFailure.permanent(String("the \(Args.kind) job's payload \(reason(error))".prefix(maxReason)))
        } catch {
            throw JobFailure.permanent("the \(Args.kind) job's payload is not JSON")
        }
    }

    private static let iso8601WithFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// ISO 8601 with or without fractional seconds, in UTC or at an offset: PostgreSQL writes
    /// `2026-11-29T14:00:00.123456+00:00`, and leaves out a fraction of zero.
    static func date(iso8601 text: String) -> Date? { try? iso8601WithFraction.parse(text) }

    /// What was wrong, by the failure's case and its coding path only: the decoder's own descriptions may
    /// quote the payload's values.
    private static func reason(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            (context.codingPath + (key.map { [$0] } ?? [])).reduce(into: "") { path, key in
                if let index = key.intValue { path += "[\(index)]" } else { path += (path.isEmpty ? "" : ".") + key.stringValue }
            }
        }
        switch error {
        case .keyNotFound(let key, let context): return "has no \(path(context, key))"
        case .valueNotFound(let type, let context): return "has null for \(path(context)), which must be \(type)"
        case .typeMismatch(_, let context) where context.codingPath.isEmpty: return "is not a JSON object"
        case .typeMismatch(let type, let context): return "has the wrong type at \(path(context)): it must be \(type)"
        case .dataCorrupted(let context) where context.codingPath.isEmpty: return "is not JSON"
        case .dataCorrupted(let context): return "has a malformed \(path(context))"
        @unknown default: return "cannot be read"
        }
    }

    /// A payload key in snake_case: `connectionID` → `connection_id`, `notificationUUID` → `notification_uuid`;
    /// a key in snake_case already stays as it is.
    struct LegacyKey: CodingKey {
        let stringValue: String
        let intValue: Int?

        init(snakeCasing key: any CodingKey) {
            intValue = key.intValue
            let characters = Array(key.stringValue)
            guard characters.contains(where: \.isUppercase) else {
                stringValue = key.stringValue
                return
            }
            var snake = ""
            for (index, character) in characters.enumerated() {
                if character.isUppercase, index > 0 {
                    let previous = characters[index - 1]
                    let next = index + 1 < characters.count ? characters[index + 1] : nil
                    if !previous.isUppercase || next?.isLowercase == true { snake.append("_") }
                }
                snake.append(contentsOf: character.lowercased())
            }
            stringValue = snake
        }

        init?(stringValue: String) {
            self.stringValue = stringValue
            intValue = nil
        }

        init?(intValue: Int) {
            stringValue = String(intValue)
            self.intValue = intValue
        }
    }
}

extension NewJob {
    /// A job of `Args.kind` carrying `args`.
    public init<Args: JobArgs>(_ args: Args, raw: Data? = nil, headers: String? = nil, priority: Int16 = 0,
                               runAt: Date? = nil, maxAttempts: Int? = nil, uniqueKey: String? = nil) throws {
        self.init(kind: Args.kind.name, payload: try JobPayload.encode(args), raw: raw, headers: headers,
                  priority: priority, runAt: runAt, maxAttempts: maxAttempts, uniqueKey: uniqueKey)
    }
}

extension LeasedJob {
    /// The job's payload as `Args`; throws `JobFailure.permanent` when it is not one, or the job is of
    /// another kind (see `JobPayload.decode`).
    public func args<Args: JobArgs>(_ type: Args.Type = Args.self) throws(JobFailure) -> Args {
        guard kind == Args.kind.name else {
            throw JobFailure.permanent(String("a \(kind.prefix(100)) job cannot be read as a \(Args.kind) job"))
        }
        return try JobPayload.decode(type, from: payload)
    }
}
