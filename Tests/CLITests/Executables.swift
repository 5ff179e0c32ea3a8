/// The executable a command line's first word belongs to: `storesync-dev` for the dev tools (the simulators,
/// the demo, the benchmarks, the chaos run), `storesync` for the operator's commands. For tables that mix both.
func executable(for command: String) -> String {
    ["simulator", "demo", "bench", "chaos"].contains(command) ? "storesync-dev" : "storesync"
}
