import CLI

/// The `storesync-dev` command line: the local store simulators, the demo, the benchmarks and the chaos run —
/// tools for a developer's machine and CI, kept out of the `storesync` binary that production hosts run — and
/// `migrate`, so a benchmark's throwaway database is prepared with the binary that benchmarks it.
public enum StoreSyncDev {
    static let tool = CommandLineTool(
        name: "storesync-dev",
        purpose: "StoreSync's developer tools: local store simulators, the demo, benchmarks and the chaos run.",
        commands: [SimulatorCommand.self, DemoCommand.self, BenchCommand.self, ChaosCommand.self, StoreSyncCLI.migrate],
        epilogue: """
            Run `storesync-dev COMMAND --help` for a command's options. Commands that use the database read
            DATABASE_URL, STORESYNC_LOG_LEVEL and STORESYNC_DB_POOL_SIZE as `storesync` does.
            """)

    /// Runs the command line and returns the process exit status: 0 success, 1 failure, 2 bad usage.
    public static func main(_ argv: [String]) async -> Int32 {
        await tool.main(argv)
    }
}
