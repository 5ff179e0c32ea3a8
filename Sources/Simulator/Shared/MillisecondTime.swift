import Foundation

/// Apple writes every date as whole milliseconds since 1970; the simulator keeps its dates on that grid so a
/// date survives a round trip through a signed payload unchanged.
extension Date {
    init(milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }

    func adding(_ duration: Duration) -> Date {
        Date(milliseconds: milliseconds + duration.wholeMilliseconds)
    }
}

extension Duration {
    /// Whole milliseconds, rounded down (the simulator's periods are configured in seconds or milliseconds).
    var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
