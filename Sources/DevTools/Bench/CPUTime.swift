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
}
