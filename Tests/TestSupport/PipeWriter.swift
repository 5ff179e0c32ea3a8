import Foundation

/// Writes to the pipe Chromium reads its commands from, on a thread of its own.
///
/// Its own thread for two reasons: a full pipe (Chromium busy) blocks that thread, never one of the concurrency
/// pool's; and the thread blocks SIGPIPE, so writing after Chromium died fails with EPIPE instead of killing the
/// test process (SIGPIPE goes to the thread that wrote, and nothing else in the test process ignores it).
/// (NSCondition rather than `Mutex`, which ThreadSanitizer cannot see through on Linux.)
final class PipeWriter: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [Data] = []
    private var closing = false

    /// Takes `fd` over and closes it once `close()` was called and everything queued before is written, or
    /// once a write fails. A write fails only when Chromium is gone, and then the reader of its other pipe reads
    /// end of file and fails every command still waiting: nothing is left to tell here.
    init(fd: Int32, name: String) {
        let thread = Thread { [self] in
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            writing: while let batch = next() {
                for data in batch {
                    guard Self.writeAll(data, to: fd) else { break writing }
                }
            }
            Glibc.close(fd)
        }
        thread.name = name
        thread.start()
    }

    func write(_ data: Data) {
        condition.withLock {
            queue.append(data)
            condition.signal()
        }
    }

    /// Ends the thread after what is queued; Chromium reads end of file then.
    func close() {
        condition.withLock {
            closing = true
            condition.signal()
        }
    }

    /// What is queued, waiting for some; nil once closed and drained.
    private func next() -> [Data]? {
        condition.withLock {
            while queue.isEmpty, !closing { condition.wait() }
            guard !queue.isEmpty else { return nil }
            defer { queue.removeAll() }
            return queue
        }
    }

    /// Whether all of `data` went out.
    private static func writeAll(_ data: Data, to fd: Int32) -> Bool {
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }
}
