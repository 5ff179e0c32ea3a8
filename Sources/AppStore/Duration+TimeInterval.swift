import Foundation

extension Duration {
    /// Seconds as `TimeInterval`, for arithmetic with `Date`.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
