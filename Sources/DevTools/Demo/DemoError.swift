/// Why `storesync-dev demo` could not show its purchases: something it depends on — the running `serve` and
/// `work`, the simulator's port, its own account — is missing. Printed as one line, exit status 1.
struct DemoError: Error, CustomStringConvertible, Sendable {
    struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// No `storesync serve` answered ready at the ingest URL within the bound.
        static let ingestUnavailable = Code("ingest unavailable")
        /// The App Store simulator could not listen where it was asked to.
        static let simulatorUnavailable = Code("simulator unavailable")
        /// The ingest did not take a notification the simulator posted.
        static let notificationRefused = Code("notification refused")
        /// The worker did not mirror the demo's notifications within the bound, or dead-lettered them.
        static let notMirrored = Code("not mirrored")
        /// The demo account lacks what the demo created for it: its App Store connection, its customers' tokens.
        static let incompleteAccount = Code("incomplete demo account")
        var description: String { name }
    }

    let code: Code
    let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    var description: String { message }
}
