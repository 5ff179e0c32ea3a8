import Synchronization

/// Wakes the fetch loop early: a NOTIFY arrived, a slot freed up, or shutdown began. A signal sent while
/// nobody waits is remembered, so a wake-up is never lost between checking for work and starting to wait.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns on the next signal (or a pending one) or after `timeout`, whichever is first. One waiter at a time.
    func wait(timeout: Duration) async {
        let generation: UInt64? = state.withLock { state in
            if state.pending {
                state.pending = false
                return nil
            }
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { expire(generation) }
        }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.pending || state.generation != generation {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        timer.cancel()
    }

    private func expire(_ generation: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.generation == generation, let waiter = state.waiter else {
                if state.generation == generation { state.generation += 1 }
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
