import Foundation
import HTTP
import Postgres
import Queue
import StoreModel
import Sync

/// `GET /`: queue health — depth by kind and state, the oldest job waiting, dead letters and their rate, leases by
/// worker, schedules and their last periods, how the daily resync is spread over the next day — with small charts
/// of the last hours drawn from what the database already holds. Cheap at a million queued jobs: it reads what
/// `storesync status` reads (estimated from a sample beyond `QueueStatus.exactPages`) and the receipts' arrival index.
enum QueuePage {
    static let hours = ActivityHistory.hours

    static func render(_ console: Console, _ request: ConsoleRequest) async throws -> HTTPResponse {
        let status = try await QueueStatus.read(pool: console.pool)
        let schedules = try await console.pool.transaction { db in try ScheduleReport.read(on: db) }
        let activity = try await console.activity.read(pool: console.pool)
        let total = { (state: String) in status.depths.filter { $0.state == state }.reduce(0) { $0 + $1.count } }
        let lastHour = activity.last?.deadLetters ?? 0
        let lastDay = activity.reduce(0) { $0 + $1.deadLetters }
        let estimated = status.scheduledEstimated ? " (estimated)" : ""
        let cards = HTML([
            card("\(total("available"))", "due now, waiting"), card("\(total("leased"))", "running"),
            card("\(total("scheduled"))", "scheduled\(estimated)"),
            card("\(Layout.duration(status.oldestAvailableAgeSeconds))", "oldest due job waiting"),
            card("<a href=\"/dead-letters\">\(status.deadLetters)</a>", "dead letters"),
            card("\(lastHour) / \(lastDay)", "dead letters in the last hour / 24 h"),
        ])
        // Hours of the day in UTC, as every time on the console is.
        let label = { (date: Date) in String(format: "%02dh", Int(date.timeIntervalSince1970 / 3600) % 24) }
        let resyncs = Set(Store.allCases.map { ResyncPlanner.jobKind(for: $0).name })
        let spread = Dictionary(grouping: status.scheduledByHour.filter { resyncs.contains($0.kind) }, by: \.hour)
            .mapValues { $0.reduce(0) { $0 + $1.count } }
        let spreadBars = (0..<hours).map { offset -> BarChart.Bar in
            let hour = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 3600).rounded(.down) * 3600 + Double(offset) * 3600)
            return BarChart.Bar(label: label(hour), value: spread[hour] ?? 0)
        }
        let charts = HTML([
            BarChart(title: "Notifications recorded per hour", bars: activity.map { .init(label: label($0.hour), value: $0.notifications) },
                     unit: "notifications").html,
            BarChart(title: "Dead letters per hour", bars: activity.map { .init(label: label($0.hour), value: $0.deadLetters) },
                     unit: "dead letters").html,
            BarChart(title: "Resyncs due per hour, next 24 h\(estimated)", bars: spreadBars, unit: "resyncs").html,
        ])
        let depthRows = status.depths.map { depth -> [HTML] in ["\(depth.kind)", "\(depth.state)", "\(depth.count)"] }
        let leaseRows = status.leases.map { lease -> [HTML] in
            ["\(lease.worker)", "\(lease.count)", "\(Layout.time(lease.oldestLeasedAt))"]
        }
        let scheduleRows = schedules.map { schedule -> [HTML] in
            ["\(schedule.schedule)", "\(schedule.period)", Layout.time(schedule.claimedAt), "\(schedule.claimedBy)",
             schedule.running ? "<span class=\"tag warn\">running</span>" : "<span class=\"tag ok\">done</span>",
             "\(schedule.resyncsPending)", "\(schedule.drift)"]
        }
        let content: HTML = """
            <div class="cards">\(cards)</div>
            <h2>Last \(hours) hours</h2>
            <div class="charts">\(charts)</div>
            <h2>Depth</h2>
            \(Layout.table("Jobs by kind and state\(estimated)", headers: ["Kind", "State", "Jobs"], rows: depthRows,
                           empty: "The queue is empty."))
            <h2>Leases</h2>
            \(Layout.table("Running jobs by worker", headers: ["Worker", "Jobs", "Oldest lease"], rows: leaseRows,
                           empty: "No worker holds a job."))
            <h2>Schedules</h2>
            \(Layout.table("Each schedule's last period", headers: ["Schedule", "Period", "Claimed", "By", "State",
                                                                     "Resyncs waiting", "Drift found"],
                           rows: scheduleRows, empty: "No schedule has run yet."))
            """
        return Layout.page("Queue", section: .queue, operatorName: request.operatorName, content)
    }

    private static func card(_ value: HTML, _ label: String) -> HTML {
        "<div class=\"card\"><div class=\"value\">\(value)</div><div class=\"label\">\(label)</div></div>"
    }
}
