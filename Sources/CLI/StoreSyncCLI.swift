import Foundation
import Logging

/// A subcommand of `storesync` or of `storesync-dev`. `package` so that the dev tools (`DevTools`) are written and
/// dispatched exactly as the operator's commands, with the same arguments, environment and exit statuses.
package protocol Command: Sendable {
    static var name: String { get }
    static var summary: String { get }
    /// Full help text, printed for `--help`.
    static var usage: String { get }
    /// Returns the exit status; throws `UsageError` for bad arguments (exit 2), anything else for failures (exit 1).
    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32
}

/// An executable made of `Command`s: its help, the dispatch to a command and the exit statuses, shared by
/// `storesync` and `storesync-dev` so the two behave alike.
package struct CommandLineTool: Sendable {
    /// The executable's name, as messages and help show it.
    package let name: String
    private let purpose: String
    private let commands: [any Command.Type]
    private let epilogue: String
    /// Words that were commands of this executable once, and the executable that has them now.
    private let moved: [String: String]

    /// `purpose` is the help's first line; `epilogue` closes the help; a word of `moved` is answered with one
    /// line naming the executable it moved to (exit 2), so old scripts fail with directions instead of a guess.
    package init(name: String, purpose: String, commands: [any Command.Type], epilogue: String, moved: [String: String] = [:]) {
        self.name = name
        self.purpose = purpose
        self.commands = commands
        self.epilogue = epilogue
        self.moved = moved
    }

    var usage: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        return """
            usage: \(name) COMMAND [OPTIONS]

            \(purpose)

            commands:
            \(commands.map { "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)" }
                .joined(separator: "\n"))

            \(epilogue)
            """
    }

    /// Runs the command line and returns the process exit status: 0 success, 1 failure, 2 bad usage, a command
    /// that moved to another executable, or a database that cannot serve this build (`StartupRefusal`).
    package func main(_ argv: [String]) async -> Int32 {
        var tokens = Array(argv.dropFirst())
        guard let word = tokens.first, !["--help", "-h", "help"].contains(word) else {
            Output.print(usage)
            return tokens.isEmpty ? 2 : 0
        }
        tokens.removeFirst()
        if let executable = moved[word] {
            fail("\(name) \(word) has moved: run \(executable) \(word) …")
            return 2
        }
        guard let command = commands.first(where: { $0.name == word }) else {
            fail("\(name): unknown command \(word.debugDescription); see \(name) --help")
            return 2
        }
        if tokens.contains("--help") || tokens.contains("-h") {
            Output.print(command.usage)
            return 0
        }
        let environment = Environment()
        var arguments = Arguments(tokens)
        do {
            try environment.configureLogging()
            return try await command.run(&arguments, environment: environment)
        } catch let error as UsageError {
            fail("\(name) \(word): \(error.message)")
            return 2
        } catch let error as StartupRefusal {
            fail("\(name) \(word): \(error.message)")
            return 2
        } catch {
            fail("\(name) \(word): error: \(error)")
            return 1
        }
    }

    private func fail(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// The `storesync` command line: the operator's commands, and nothing a production host does not run.
public enum StoreSyncCLI {
    static let tool = CommandLineTool(
        name: "storesync",
        purpose: "Keeps SubscriptionFlow's billing database true to the App Store and Google Play.",
        commands: [
            MigrateCommand.self, ServeCommand.self, WorkCommand.self, EnqueueCommand.self, StatusCommand.self,
            DeadLettersCommand.self, AccountsCommand.self, ConnectionsCommand.self, PlansCommand.self, ProductsCommand.self,
            CustomersCommand.self, TokensCommand.self, APIClientsCommand.self, SyncCommand.self, VerifyCommand.self,
            ConsoleCommand.self,
        ],
        epilogue: """
            Run `storesync COMMAND --help` for a command's options. Configuration comes from the environment:
            DATABASE_URL (required), STORESYNC_LOG_LEVEL, STORESYNC_DB_POOL_SIZE and the STORESYNC_* variables
            listed under each command. The store simulators, the demo, the benchmarks and the chaos run are in
            storesync-dev.
            """,
        moved: Dictionary(uniqueKeysWithValues: ["simulator", "demo", "bench", "chaos"].map { ($0, "storesync-dev") }))

    /// Runs the command line and returns the process exit status (see `CommandLineTool.main`).
    public static func main(_ argv: [String]) async -> Int32 {
        await tool.main(argv)
    }
}
