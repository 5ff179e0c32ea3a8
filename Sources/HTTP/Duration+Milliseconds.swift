extension Duration {
    /// Whole milliseconds, rounded up so a tiny positive timeout never becomes 0 ("no timeout") in C APIs;
    /// negative durations count as zero, absurdly long ones saturate.
    var roundedUpMilliseconds: Int {
        // Checked on the whole value: `components` truncates toward zero, so -0.5 s is 0 s and negative
        // attoseconds, and a deadline just past would come out negative — "wait forever" to epoll_wait.
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        guard seconds < Int64.max / 1000 - 1 else { return Int.max }
        let perMillisecond: Int64 = 1_000_000_000_000_000
        return Int(seconds * 1000 + (attoseconds + perMillisecond - 1) / perMillisecond)
    }

    /// Whole seconds, rounded up and at least 1: libmicrohttpd's timeouts count seconds, and 0 means none.
    var roundedUpSeconds: Int {
        let milliseconds = roundedUpMilliseconds
        return milliseconds > Int.max - 999 ? Int.max / 1000 : max(1, (milliseconds + 999) / 1000)
    }
}
