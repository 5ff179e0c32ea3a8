import Foundation
import Logging

/// A `storesync` subcommand.
protocol Command: Sendable {
    static var name: String { get }
    static var summary: String { get }
    /// Full help text, printed for `--help`.
    static var usage: String { get }
    /// Returns the exit status; throws `UsageError` for bad arguments (exit 2), anything else for failures (exit 1).
    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32
}

/// The `storesync` command line.
public enum StoreSyncCLI {
    static let commands: [any Command.Type] = [
        MigrateCommand.self, ServeCommand.self, WorkCommand.self, EnqueueCommand.self, StatusCommand.self, DeadLettersCommand.self,
        AccountsCommand.self, ConnectionsCommand.self, PlansCommand.self, ProductsCommand.self, CustomersCommand.self,
        TokensCommand.self, SyncCommand.self, VerifyCommand.self, BenchCommand.self, SimulatorCommand.self,
        DemoCommand.self, ChaosCommand.self,
    ]

    static var usage: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        return """
            usage: storesync COMMAND [OPTIONS]

            Keeps SubscriptionFlow's billing database true to the App Store and Google Play.

            commands:
            \(commands.map { "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)" }
                .joined(separator: "\n"))

            Run `storesync COMMAND --help` for a command's options. Configuration comes from the environment:
            DATABASE_URL (required), STORESYNC_LOG_LEVEL, STORESYNC_DB_POOL_SIZE and the STORESYNC_* variables
            listed under each command.
            """
    }

    /// Runs the command line and returns the process exit status: 0 success, 1 failure, 2 bad usage or a
    /// database that cannot serve this build (`StartupRefusal`).
    public static func main(_ argv: [String]) async -> Int32 {
        var tokens = Array(argv.dropFirst())
        guard let name = tokens.first, !["--help", "-h", "help"].contains(name) else {
            Output.print(usage)
            return tokens.isEmpty ? 2 : 0
        }
        tokens.removeFirst()
        guard let command = commands.first(where: { $0.name == name }) else {
            FileHandle.standardError.write(Data("storesync: unknown command \(name.debugDescription); see storesync --help\n".utf8))
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
            FileHandle.standardError.write(Data("storesync \(name): \(error.message)\n".utf8))
            return 2
        } catch let error as StartupRefusal {
            FileHandle.standardError.write(Data("storesync \(name): \(error.message)\n".utf8))
            return 2
        } catch {
            FileHandle.standardError.write(Data("storesync \(name): error: \(error)\n".utf8))
            return 1
        }
    }
}
