import CLI
import Foundation
import Logging
import Postgres
import Queue
import TestSupport
import Worker

// A worker process with the test-only job kinds, for tests that need real processes (SIGKILL, several
// workers racing). Flags: --concurrency N --lease-ms N --grace-ms N --poll-ms N [--daily-schedule NAME].
var configuration = WorkerConfiguration()
let arguments = Array(CommandLine.arguments.dropFirst())
func take(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
if let value = take("--concurrency").flatMap(Int.init) { configuration.concurrency = value }
if let value = take("--lease-ms").flatMap(Int64.init) { configuration.leaseDuration = .milliseconds(value) }
if let value = take("--grace-ms").flatMap(Int64.init) { configuration.gracePeriod = .milliseconds(value) }
if let value = take("--poll-ms").flatMap(Int64.init) { configuration.pollInterval = .milliseconds(value) }
if let name = take("--daily-schedule") {
    configuration.schedules = [Schedule(name: name, period: .daily, job: TestHandlers.Record.self)]
}
if let level = ProcessInfo.processInfo.environment["STORESYNC_LOG_LEVEL"].flatMap(LogLevel.init(name:)) {
    Logger.setLevel(level)
}
guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"] else {
    FileHandle.standardError.write(Data("storesync-testworker: DATABASE_URL is not set\n".utf8))
    exit(2)
}
let pool = PostgresPool(PostgresConfiguration(url: url, poolSize: 4, applicationName: "storesync-testworker"))
let worker = Worker(configuration: configuration, handlers: TestHandlers.all(), pool: pool, listenURL: url)
let signals = TerminationSignals { worker.stop() }
await worker.run()
signals.cancel()
await pool.close()
exit(0)
