import TestSupport
import Testing

/// The dev tools live in `storesync-dev`, not in the daemon production hosts run: the old `storesync` spellings
/// fail with one line naming the new command, and each executable's help lists only its own commands.
@Suite struct MovedCommandsTests {
    @Test(arguments: [
        (["simulator"], "storesync simulator has moved: run storesync-dev simulator …\n"),
        (["demo", "--keep-running"], "storesync demo has moved: run storesync-dev demo …\n"),
        (["bench", "queue", "--jobs", "10"], "storesync bench has moved: run storesync-dev bench …\n"),
        (["chaos", "--help"], "storesync chaos has moved: run storesync-dev chaos …\n"),
    ])
    func anOldSpellingNamesTheNewCommandAndExitsTwo(arguments: [String], line: String) async throws {
        let result = try await ChildProcess.run("storesync", arguments, environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"])
        #expect(result.status == 2)
        #expect(result.stderr == line)
        #expect(result.stdout.isEmpty)
    }

    @Test func eachHelpListsOnlyItsOwnCommands() async throws {
        let daemon = try await ChildProcess.run("storesync", ["--help"])
        let dev = try await ChildProcess.run("storesync-dev", ["--help"])
        #expect(daemon.status == 0 && dev.status == 0)
        let devCommands = ["simulator", "demo", "bench", "chaos"]
        for command in devCommands {
            #expect(!daemon.stdout.contains("\n  \(command) "), "storesync --help: \(daemon.stdout)")
            #expect(dev.stdout.contains("\n  \(command) "), "storesync-dev --help: \(dev.stdout)")
        }
        for command in ["serve", "work", "status", "dead-letters", "verify", "sync"] {
            #expect(daemon.stdout.contains("\n  \(command) "), "storesync --help: \(daemon.stdout)")
            #expect(!dev.stdout.contains("\n  \(command) "), "storesync-dev --help: \(dev.stdout)")
        }
        // Both migrate: a benchmark script prepares its database with the binary it benchmarks with.
        #expect(daemon.stdout.contains("\n  migrate ") && dev.stdout.contains("\n  migrate "))
    }

    @Test func anUnknownDevCommandIsRefusedByName() async throws {
        let result = try await ChildProcess.run("storesync-dev", ["serve"])
        #expect(result.status == 2)
        #expect(result.stderr == "storesync-dev: unknown command \"serve\"; see storesync-dev --help\n")
    }
}
