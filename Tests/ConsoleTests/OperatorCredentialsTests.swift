@testable import Console
import Crypto
import Foundation
import Testing

/// The credentials file is read whole or refused whole, naming the line that is wrong; a password is accepted only
/// for its own operator.
@Suite struct OperatorCredentialsTests {
    /// Lines hashed with few iterations, made once: PBKDF2 is slow on purpose.
    static let alice = try! OperatorCredentials.line(name: "alice", password: "alice's password", iterations: 1_000)
    static let bob = try! OperatorCredentials.line(name: "bob@example.com", password: "bob's password", iterations: 1_000)

    @Test(arguments: [
        ("\(alice)", ["alice"]),
        ("\(alice)\n\(bob)\n", ["alice", "bob@example.com"]),
        ("# operators of the console\n\n   \n\(alice)\n  # bob left\n\(bob)", ["alice", "bob@example.com"]),
        ("  \(alice)  \n", ["alice"]),
        ("# written on Windows\r\n\(alice)\r\n\(bob)\r\n", ["alice", "bob@example.com"]),
    ])
    func aGoodFileIsRead(text: String, names: [String]) throws {
        #expect(try OperatorCredentials(text: text, source: "ops.txt").operatorNames == names)
    }

    @Test(arguments: [
        ("", "ops.txt names no operator"),
        ("# nobody\n\n", "ops.txt names no operator"),
        ("\(alice)\nbob", "ops.txt line 2 is not NAME:pbkdf2-sha256$ITERATIONS$SALT$HASH"),
        ("\(alice)\n\(alice)", "ops.txt line 2 names alice a second time"),
        (":pbkdf2-sha256$1000$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "ops.txt line 1: an operator name"),
        ("al ice" + alice.dropFirst(5), "ops.txt line 1: an operator name"),
        (String(repeating: "a", count: 65) + alice.dropFirst(5), "ops.txt line 1: an operator name"),
        ("# ok\n\(alice.replacingOccurrences(of: "pbkdf2-sha256", with: "md5"))", "ops.txt line 2: the hash is not"),
        (alice.replacingOccurrences(of: "$1000$", with: "$999$"), "ops.txt line 1: the hash is not"),
        (alice.replacingOccurrences(of: "$1000$", with: "$many$"), "ops.txt line 1: the hash is not"),
        (alice + "$extra", "ops.txt line 1: the hash is not"),
        ("alice:pbkdf2-sha256$1000$AAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "ops.txt line 1: the hash is not"),
        ("alice:pbkdf2-sha256$1000$AAAAAAAAAAAAAAAAAAAAAA$AAAA", "ops.txt line 1: the hash is not"),
        ("alice:pbkdf2-sha256$1000$!!!!AAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "ops.txt line 1: the hash is not"),
    ])
    func aMalformedFileIsRefusedNamingTheLine(text: String, message: String) {
        let error = #expect(throws: ConsoleError.self) { try OperatorCredentials(text: text, source: "ops.txt") }
        #expect(error?.code == .invalidCredentials)
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "")")
    }

    @Test func aFileIsReadFromDiskAndAMissingOneIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("operators-\(UUID()).txt").path
        try Data("\(Self.alice)\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try OperatorCredentials(contentsOf: path).operatorNames == ["alice"])
        #expect(throws: ConsoleError.self) { try OperatorCredentials(contentsOf: path + ".missing") }
    }

    @Test(arguments: [
        ("alice", "alice's password", true),
        ("alice", "alice's passwor", false),
        ("alice", "alice's password ", false),
        ("alice", "", false),
        ("alice", "bob's password", false),
        ("bob@example.com", "alice's password", false),
        ("bob@example.com", "bob's password", true),
        ("Alice", "alice's password", false),
        ("carol", "alice's password", false),
    ])
    func aPasswordIsAcceptedOnlyForItsOperator(name: String, password: String, accepted: Bool) throws {
        let credentials = try OperatorCredentials(text: "\(Self.alice)\n\(Self.bob)", source: "ops.txt")
        #expect(credentials.accepts(name: name, password: password) == accepted)
    }

    @Test(arguments: [("", "long enough"), ("a:b", "long enough"), ("alice", "short"), ("alice", String(repeating: "x", count: 1025))])
    func aLineIsMadeOnlyForAGoodNameAndPassword(name: String, password: String) {
        #expect(throws: ConsoleError.self) { try OperatorCredentials.line(name: name, password: password, iterations: 1_000) }
    }

    /// Two lines for one password differ (a fresh salt each), and neither holds the password.
    @Test func aLineHasAFreshSaltAndNoPassword() throws {
        let first = try OperatorCredentials.line(name: "alice", password: "alice's password", iterations: 1_000)
        let second = try OperatorCredentials.line(name: "alice", password: "alice's password", iterations: 1_000)
        #expect(first != second)
        #expect(!first.contains("alice's password"))
        #expect(first.hasPrefix("alice:pbkdf2-sha256$1000$"))
    }
}
