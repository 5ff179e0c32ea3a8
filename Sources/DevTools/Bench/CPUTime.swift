import Foundation

/// CPU time this process has used so far, for the benchmarks: `user` is what `openssl speed` divides by,
/// `user + system` what the pipeline benchmark reports.
struct CPUTime {
    let user: Duration
    let system: Duration

    static func now() -> CPUTime {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func duration(_ time: timeval) -> Duration { .seconds(time.tv_sec) + .microseconds(time.tv_usec) }
        return CPUTime(user: duration(usage.ru_utime), system: duration(usage.ru_stime))
    }

    var total: Duration { user + system }

    /// The user + system time of process `pid` from /proc (nil when it cannot be read), with that of its
    /// children it has waited for when `children` is set.
    static func of(_ pid: Int32, children: Bool = false) -> Duration? {
        guard let fields = statFields(pid), fields.count > 14 else { return nil }
        // utime, stime, cutime, cstime are fields 14 to 17 of stat(5): the 12th to 15th after the command name.
        let ticks = fields[11...(children ? 14 : 12)].compactMap { Int($0) }.reduce(0, +)
        return .milliseconds(ticks * 1000 / Int(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// The CPU time of every PostgreSQL process on this machine, the backends that have exited included (their
    /// parent's children time); nil when none runs here (a database on another host).
    static func postgres() -> Duration? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        var total: Duration?
        for entry in entries {
            guard let pid = Int32(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  stat.contains("(postgres)"), let cpu = of(pid, children: true) else { continue }
            total = (total ?? .zero) + cpu
        }
        return total
    }

    /// The fields of /proc/`pid`/stat after the command name (which may hold spaces).
    private static func statFields(_ pid: Int32) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: end)...].split(separator: " ")
    }
}
