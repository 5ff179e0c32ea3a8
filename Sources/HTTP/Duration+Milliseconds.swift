extension Duration {
    /// Whole milliseconds, rounded up so a tiny positive timeout never becomes 0 ("no timeout") in C APIs;
    /// negative durations count as zero, absurdly long ones saturate.
    var roundedUpMilliseconds: Int {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        guard seconds < Int64.max / 1000 - 1 else { return Int.max }
        let perMillisecond: Int64 = 1_000_000_000_000_000
        return Int(seconds * 1000 + (attoseconds + perMillisecond - 1) / perMillisecond)
    }
}
