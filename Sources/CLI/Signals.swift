import Dispatch
import Foundation

/// Turns SIGTERM and SIGINT into a call to `onStop`, once; a second signal exits at once (leases of
/// unfinished jobs then expire and the jobs run elsewhere).
public final class TerminationSignals {
    private let sources: [any DispatchSourceSignal]

    public init(onStop: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "storesync.signals")
        let received = SignalCount()
        sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if received.increment() == 1 { onStop() } else { exit(130) }
            }
            source.resume()
            return source
        }
    }

    /// Stops listening and gives SIGTERM and SIGINT their default action back, so a signal during the
    /// shutdown that follows still ends the process.
    public func cancel() {
        sources.forEach { $0.cancel() }
        signal(SIGTERM, SIG_DFL)
        signal(SIGINT, SIG_DFL)
    }
}

private final class SignalCount: @unchecked Sendable {
    // Only touched on the signal queue.
    private var count = 0
    func increment() -> Int {
        count += 1
        return count
    }
}
