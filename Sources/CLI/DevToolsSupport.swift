import Sync

/// Settings that `storesync-dev`'s commands (`DevTools`) read exactly as an operator command does, handed over here
/// so that the commands themselves stay internal to `storesync`.
extension Environment {
    /// The resync settings `work` and `sync` read (`STORESYNC_RESYNC_*`): the chaos run's workers resync alike.
    package func resyncSettings() throws -> ResyncSettings {
        try WorkCommand.resyncSettings(self)
    }
}

extension Parse {
    /// The largest service-account JSON key `connections add-google` reads: the Play simulator reads one too.
    package static var maxServiceAccountKeyBytes: Int { ConnectionsCommand.maxServiceAccountKeyBytes }
}

extension StoreSyncCLI {
    /// `migrate`, which `storesync-dev` runs too: a benchmark script then prepares its throwaway database and runs
    /// the benchmark with one binary (`../shared/bench/queue-peers.sh BIN …` runs `BIN migrate`, then `BIN bench`).
    package static let migrate: any Command.Type = MigrateCommand.self
}
