import CSystemd

/// Tells systemd about the daemon's life cycle (`Type=notify` units), so `systemctl start` returns only
/// once the process is really ready and `systemctl stop` shows it draining. Outside systemd
/// (`NOTIFY_SOCKET` unset) every call is a no-op.
public enum ServiceNotifier {
    /// The process has finished start-up and is doing its work.
    public static func ready() { notify("READY=1") }

    /// The process has begun a graceful shutdown.
    public static func stopping() { notify("STOPPING=1") }

    /// A one-line status shown by `systemctl status`.
    public static func status(_ text: String) { notify("STATUS=\(text)") }

    private static func notify(_ state: String) {
        _ = sd_notify(0, state)
    }
}
