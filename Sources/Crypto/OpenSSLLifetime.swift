import COpenSSL

/// OpenSSL's process-wide state, which must outlive every thread that used it.
public enum OpenSSLLifetime {
    /// Keeps OpenSSL from tearing down its global state in the `atexit` handler it registers by default.
    ///
    /// `exit` does not wait for other threads, and a thread that used OpenSSL runs OpenSSL's per-thread cleanup
    /// as it ends. Every Postgres connection thread has used it (libpq's SCRAM authentication draws random
    /// bytes), and closing a pool ends those threads just as the command returns; one still ending while
    /// `exit` runs OpenSSL's global cleanup frees the same records twice, and the process crashes after its
    /// work is done (a segfault or a double-free abort, on that thread or in `exit`). The memory goes back to
    /// the system with the process anyway.
    ///
    /// Only the first initialisation decides, so call this before anything else uses OpenSSL: first thing in
    /// `main`.
    public static func skipCleanupAtExit() throws {
        guard OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1 else {
            throw CryptoError.openSSL(.internalError, "cannot initialise OpenSSL")
        }
    }
}
