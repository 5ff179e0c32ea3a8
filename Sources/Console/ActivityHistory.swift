import Foundation
import Postgres
import Queue
import Synchronization

/// The queue page's last day, hour by hour, kept between requests. Counting a day of notification receipts reads
/// every one of them — a quarter of a second at a million a day — while an hour that has ended hardly changes: each
/// request counts only the current hour and the one before (a notification processed late still lands in the hour
/// it arrived), and reads the whole day again only when nothing recent is kept.
final class ActivityHistory: Sendable {
    static let hours = 24
    private let kept = Mutex<[QueueActivity.Hour]>([])

    func read(pool: PostgresPool) async throws -> [QueueActivity.Hour] {
        let recent = try await pool.run { db in try QueueActivity.read(hours: 2, on: db).hours }
        let merged = kept.withLock { kept -> [QueueActivity.Hour]? in
            guard let first = recent.first, kept.contains(where: { $0.hour >= first.hour.addingTimeInterval(-3600) })
            else { return nil }
            let day = Array((kept.filter { $0.hour < first.hour } + recent).suffix(Self.hours))
            kept = day
            return day
        }
        if let merged { return merged }
        let day = try await pool.run { db in try QueueActivity.read(hours: Self.hours, on: db).hours }
        kept.withLock { $0 = day }
        return day
    }
}
