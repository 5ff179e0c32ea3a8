extension Duration {
    /// Seconds as a floating-point number, for arithmetic with dates and for log fields.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole milliseconds, rounded toward zero — what the queue's SQL and PostgreSQL settings take.
    public var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
