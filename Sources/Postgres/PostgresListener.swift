import Logging

/// What a listener reports: a notification, or that it (re)connected — after which the consumer must
/// assume it missed notifications and look for work anyway (NOTIFY has no replay).
public enum ListenerEvent: Sendable, Equatable {
    case notification(PostgresNotification)
    case connected
}

/// `LISTEN` on a dedicated connection that reconnects with backoff when the server goes away.
public enum PostgresListener {
    /// Events for `channel` until the consumer stops iterating.
    public static func events(url: String, channel: String, applicationName: String = "storesync-listener")
        -> AsyncStream<ListenerEvent>
    {
        let (stream, continuation) = AsyncStream.makeStream(of: ListenerEvent.self, bufferingPolicy: .bufferingNewest(64))
        let task = Task {
            let logger = Logger(component: "listener").with(["channel": .string(channel)])
            var backoff = ReconnectBackoff(base: .milliseconds(100), cap: .seconds(1))
            while !Task.isCancelled {
                do {
                    let connection = try await PostgresConnection.connect(url: url, applicationName: applicationName)
                    try await connection.listen(channel)
                    backoff.recordSuccess()
                    continuation.yield(.connected)
                    while !Task.isCancelled {
                        for notification in try await connection.waitForNotifications(timeoutMilliseconds: 250) {
                            continuation.yield(.notification(notification))
                        }
                    }
                    await connection.close()
                } catch {
                    let delay = backoff.recordFailure()
                    logger.warning("listener connection failed", ["error": .string("\(error)")])
                    try? await Task.sleep(for: delay)
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
