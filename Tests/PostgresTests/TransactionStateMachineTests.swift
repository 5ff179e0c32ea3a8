@testable import Postgres
import Testing

/// `PostgresConnection`'s transaction bookkeeping without a server: which statements each round trip carries,
/// and how a failed scope is rolled back. `PostgresPipelineTests` shows the same against PostgreSQL.
@Suite struct TransactionStateMachineTests {
    /// What the connection does, in the order it does it.
    enum Step: Sendable, CustomStringConvertible {
        /// `transaction` opens a scope.
        case begin
        /// `queryLater`.
        case later(String)
        /// A statement that needs its answer; `ran` of the round trip's statements ran (nil: all of them).
        case query(String, ran: Int? = nil)
        /// The innermost scope's body returned: its closing statement goes, and runs.
        case close
        /// The innermost scope's closing went with what was deferred, of which `ran` statements ran, and failed.
        case closeFailing(ran: Int)
        /// The innermost scope's body threw.
        case fail
        /// The innermost scope's closing ran but answered ROLLBACK, which `transaction` then throws.
        case closeAnsweredRollback

        var description: String {
            switch self {
            case .begin: "begin"
            case .later(let sql): "later \(sql)"
            case .query(let sql, let ran): "query \(sql)" + (ran.map { " (\($0) ran)" } ?? "")
            case .close: "close"
            case .closeFailing(let ran): "close, failing (\(ran) ran)"
            case .fail: "fail"
            case .closeAnsweredRollback: "close → ROLLBACK"
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let steps: [Step]
        /// The round trips, each as its statements' SQL.
        let sent: [[String]]
        var rollbacks: [TransactionStateMachine.Rollback] = []
        /// Still deferred after the steps.
        var pending: [String] = []
        let depth: Int

        var testDescription: String { "\(name): \(steps.map(\.description).joined(separator: ", "))" }
    }

    static let cases: [Case] = [
        Case(name: "a transaction's opening travels with its first statement, the deferred ones with its closing",
             steps: [.begin, .later("A"), .query("B"), .later("C"), .close],
             sent: [["BEGIN", "A", "B"], ["C", "COMMIT"]], depth: 0),
        Case(name: "outside a transaction nothing is deferred",
             steps: [.later("A"), .query("B")], sent: [["A"], ["B"]], depth: 0),
        Case(name: "an empty-bodied savepoint opens and closes in one round trip",
             steps: [.begin, .query("A"), .begin, .close, .later("B"), .close],
             sent: [["BEGIN", "A"], ["SAVEPOINT sp1", "RELEASE SAVEPOINT sp1"], ["B", "COMMIT"]], depth: 0),
        Case(name: "savepoints are named by depth",
             steps: [.begin, .begin, .begin, .query("A"), .close, .close, .close],
             sent: [["BEGIN", "SAVEPOINT sp1", "SAVEPOINT sp2", "A"], ["RELEASE SAVEPOINT sp2"], ["RELEASE SAVEPOINT sp1"],
                    ["COMMIT"]], depth: 0),
        Case(name: "a savepoint that never reached the server is forgotten; what was deferred before it stays",
             steps: [.begin, .query("A"), .later("B"), .begin, .later("C"), .fail],
             sent: [["BEGIN", "A"]], rollbacks: [.none], pending: ["B"], depth: 1),
        Case(name: "a savepoint whose opening ran is rolled back to and released; what was deferred is dropped",
             steps: [.begin, .begin, .query("A"), .later("B"), .fail],
             sent: [["BEGIN", "SAVEPOINT sp1", "A"], ["ROLLBACK TO SAVEPOINT sp1", "RELEASE SAVEPOINT sp1"]],
             rollbacks: [.send(["ROLLBACK TO SAVEPOINT sp1", "RELEASE SAVEPOINT sp1"])], depth: 1),
        Case(name: "a transaction whose opening ran is rolled back",
             steps: [.begin, .query("A"), .later("B"), .fail],
             sent: [["BEGIN", "A"], ["ROLLBACK"]], rollbacks: [.send(["ROLLBACK"])], depth: 0),
        Case(name: "a transaction that never reached the server sends nothing",
             steps: [.begin, .later("A"), .fail], sent: [], rollbacks: [.none], depth: 0),
        Case(name: "a failure before a savepoint's opening ran belongs to the enclosing scope, which rolls back",
             steps: [.begin, .query("A"), .later("bad"), .begin, .query("B", ran: 0), .fail, .fail],
             sent: [["BEGIN", "A"], ["bad", "SAVEPOINT sp1", "B"], ["ROLLBACK"]],
             rollbacks: [.none, .send(["ROLLBACK"])], depth: 0),
        Case(name: "a statement failing after a savepoint's opening ran rolls back to it; the enclosing scope then rolls back",
             steps: [.begin, .query("A"), .later("B"), .begin, .later("C"), .query("D", ran: 3), .fail, .fail],
             sent: [["BEGIN", "A"], ["B", "SAVEPOINT sp1", "C", "D"], ["ROLLBACK TO SAVEPOINT sp1", "RELEASE SAVEPOINT sp1"],
                    ["ROLLBACK"]],
             rollbacks: [.send(["ROLLBACK TO SAVEPOINT sp1", "RELEASE SAVEPOINT sp1"]), .send(["ROLLBACK"])], depth: 0),
        Case(name: "a deferred statement failing with its scope's closing rolls the scope back",
             steps: [.begin, .begin, .query("A"), .later("bad"), .closeFailing(ran: 0), .close],
             sent: [["BEGIN", "SAVEPOINT sp1", "A"], ["bad", "RELEASE SAVEPOINT sp1"],
                    ["ROLLBACK TO SAVEPOINT sp1", "RELEASE SAVEPOINT sp1"], ["COMMIT"]],
             rollbacks: [.send(["ROLLBACK TO SAVEPOINT sp1", "RELEASE SAVEPOINT sp1"])], depth: 0),
        Case(name: "a scope that ended before the failure sends nothing more",
             steps: [.begin, .query("A"), .closeAnsweredRollback],
             sent: [["BEGIN", "A"], ["COMMIT"]], rollbacks: [.none], depth: 0),
    ]

    @Test(arguments: cases)
    func bookkeeping(_ rule: Case) {
        var machine = TransactionStateMachine()
        var scopes: [TransactionStateMachine.Scope] = []
        var sent: [[String]] = []
        var rollbacks: [TransactionStateMachine.Rollback] = []
        func roundTrip(_ statements: [String], ran: Int? = nil) {
            let batch = machine.batch(statements.map { PostgresStatement($0) })
            sent.append(batch.map(\.statement.sql))
            batch.prefix(ran ?? batch.count).forEach { machine.ran($0) }
        }
        for step in rule.steps {
            switch step {
            case .begin: scopes.append(machine.begin())
            case .later(let sql): if !machine.later(PostgresStatement(sql)) { roundTrip([sql]) }
            case .query(let sql, let ran): roundTrip([sql], ran: ran)
            case .close, .closeAnsweredRollback:
                let scope = scopes.removeLast()
                roundTrip([machine.closing(scope)])
                machine.closed(scope)
                if case .closeAnsweredRollback = step { rollbacks.append(machine.failed(scope)) }
            case .closeFailing(let ran):
                let scope = scopes.removeLast()
                roundTrip([machine.closing(scope)], ran: ran)
                let rollback = machine.failed(scope)
                rollbacks.append(rollback)
                if case .send(let statements) = rollback { roundTrip(statements) }
            case .fail:
                let rollback = machine.failed(scopes.removeLast())
                rollbacks.append(rollback)
                if case .send(let statements) = rollback { roundTrip(statements) }
            }
        }
        #expect(sent == rule.sent)
        #expect(rollbacks == rule.rollbacks)
        #expect(machine.depth == rule.depth)
        #expect(machine.hasPending == !rule.pending.isEmpty)
        #expect(machine.batch([]).map(\.statement.sql) == rule.pending)
    }

    @Test(arguments: [0, 1, 2])
    func retiredStatementsAreDeallocatedOnlyOutsideATransaction(depth: Int) {
        var machine = TransactionStateMachine()
        let scopes = (0..<depth).map { _ in machine.begin() }
        machine.retire("storesync_1")
        machine.retire("storesync_2")
        #expect(machine.statementsToDeallocate() == (depth == 0 ? ["storesync_1", "storesync_2"] : []))
        for scope in scopes.reversed() { machine.closed(scope) }
        #expect(machine.statementsToDeallocate() == (depth == 0 ? [] : ["storesync_1", "storesync_2"]))
        #expect(machine.statementsToDeallocate() == [])
    }
}
