import Foundation
import Postgres
import Testing
import TestSupport

/// Guards `PostgresListener.events`: it reports `.connected` once it is listening, delivers each
/// `NOTIFY` on its channel (and only that channel) with the payload intact, and when its server
/// connection is killed it reconnects and reports `.connected` again so consumers can catch up.
@Suite("Postgres listener")
struct PostgresListenerTests {
    @Test("yields .connected, then notifications on its channel with their payloads")
    func deliversNotifications() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await listening(url: db.url, channel: "chan") { events, _ in
                try await expectConnected(events, "the listener to connect")
                try await db.pool.query("SELECT pg_notify('other', 'not for us')")
                try await db.pool.query("SELECT pg_notify('chan', 'hello')")
                try await expectNotification(events, channel: "chan", payload: "hello")
                for payload in ["one", #"{"id": 2, "note": "it's"}"#, "", "日本語"] {
                    try await db.pool.query("SELECT pg_notify($1, $2)", ["chan", payload])
                }
                for payload in ["one", #"{"id": 2, "note": "it's"}"#, "", "日本語"] {
                    try await expectNotification(events, channel: "chan", payload: payload)
                }
            }
        }
    }

    @Test("channel names are taken verbatim: case and spaces matter")
    func verbatimChannelName() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await listening(url: db.url, channel: "Orders Ready") { events, _ in
                try await expectConnected(events, "the listener to connect")
                try await db.pool.query("SELECT pg_notify('orders ready', 'wrong case')")
                try await db.pool.query("SELECT pg_notify('Orders Ready', 'right')")
                try await expectNotification(events, channel: "Orders Ready", payload: "right")
            }
        }
    }

    @Test("notifications sent in one transaction arrive when it commits, in order")
    func transactionalNotifications() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await listening(url: db.url, channel: "jobs") { events, _ in
                try await expectConnected(events, "the listener to connect")
                try await db.pool.transaction { connection in
                    for id in 1...3 { try connection.query("SELECT pg_notify('jobs', $1)", [String(id)]) }
                }
                for id in 1...3 { try await expectNotification(events, channel: "jobs", payload: String(id)) }
            }
        }
    }

    @Test("reconnects after its backend is terminated and yields .connected again")
    func reconnects() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await listening(url: db.url, channel: "chan") { events, applicationName in
                try await expectConnected(events, "the listener to connect")
                let pids = try await db.pool.query(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = $1", [applicationName]
                ).map { try $0.decode(0, as: Int32.self) }
                let pid = try #require(pids.first, "the listener's backend is not in pg_stat_activity")
                #expect(pids.count == 1)
                try await terminateBackend(pid, using: db.pool)

                try await expectConnected(events, "the listener to reconnect after its backend was terminated")
                let newPID: Int32 = try await db.pool.scalar(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = $1", [applicationName])
                #expect(newPID != pid)
                try await db.pool.query("SELECT pg_notify('chan', 'after reconnect')")
                try await expectNotification(events, channel: "chan", payload: "after reconnect")
            }
        }
    }

    @Test("stops and closes its connection when the consumer cancels")
    func stopsOnCancel() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let applicationName = uniqueName("listener")
            let events = PostgresListener.events(url: db.url, channel: "chan", applicationName: applicationName)
            try await expectConnected(events, "the listener to connect")
            await cancelStream(events)
            try await eventually("the listener's connection to close after cancellation", timeout: .seconds(20)) {
                try await db.pool.backendCount(applicationName: applicationName) == 0
            }
        }
    }
}

/// Starts a listener with a unique application name, lends its events to `body`, and stops it afterwards.
private func listening(url: String, channel: String,
                       _ body: (AsyncStream<ListenerEvent>, String) async throws -> Void) async throws {
    let applicationName = uniqueName("listener")
    let events = PostgresListener.events(url: url, channel: channel, applicationName: applicationName)
    do {
        try await body(events, applicationName)
        await cancelStream(events)
    } catch {
        await cancelStream(events)
        throw error
    }
}

private func expectConnected(_ events: AsyncStream<ListenerEvent>, _ what: String,
                             sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let event = try await nextElement(of: events, what)
    #expect(event == .connected, "expected .connected (\(what)), got \(event)", sourceLocation: sourceLocation)
}

private func expectNotification(_ events: AsyncStream<ListenerEvent>, channel: String, payload: String,
                                sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let event = try await nextElement(of: events, "a notification on \(channel) with payload \(payload.debugDescription)")
    guard case .notification(let notification) = event else {
        Issue.record("expected a notification with payload \(payload.debugDescription), got \(event)",
                     sourceLocation: sourceLocation)
        return
    }
    #expect(notification.channel == channel, sourceLocation: sourceLocation)
    #expect(notification.payload == payload, sourceLocation: sourceLocation)
}
