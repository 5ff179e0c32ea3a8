import Foundation

/// What one page's DevTools events have told so far — its navigations, loads, console errors and dialogs — and
/// the waits on it. Fed on the pipe's reader thread, in the order Chromium sent the events.
///
/// A wait is a condition on this record, checked when it starts and after every event, so an event that
/// arrives before the test gets round to waiting for it is never missed. (NSLock rather than `Mutex`, which
/// ThreadSanitizer cannot see through on Linux.)
final class PageEvents: DevToolsSessionListener, @unchecked Sendable {
    /// A document the main frame committed to.
    struct Commit: Sendable {
        let loader: String
        let url: String
        /// Set when Chromium shows its own error page instead (connection refused, an empty 404).
        let unreachableURL: String?
    }

    struct Record: Sendable {
        var commits: [Commit] = []
        /// Loaders whose document fired its load event in the main frame.
        var loaded: Set<String> = []
        /// The HTTP status and URL of the main frame's document, by loader (after redirects).
        var documents: [String: (status: Int, url: String)] = [:]
        var consoleErrors: [String] = []
        /// "confirm: <message>" for each dialog the page opened, in order.
        var dialogs: [String] = []
        /// Why no more events will come (the pipe closed, the renderer crashed).
        var ended: String?
    }

    private let mainFrame: String
    private let answerDialog: @Sendable (_ accept: Bool) async throws -> Void
    private let lock = NSLock()
    private var record = Record()
    private var accepting = false
    /// Each returns whether it is done (and so can be dropped).
    private var waiters: [(Record) -> Bool] = []

    /// `answerDialog` answers the dialog open in the page (OK or Cancel).
    init(mainFrame: String, answerDialog: @escaping @Sendable (_ accept: Bool) async throws -> Void) {
        self.mainFrame = mainFrame
        self.answerDialog = answerDialog
    }

    var snapshot: Record { lock.withLock { record } }

    /// Whether dialogs are accepted (OK) or dismissed (Cancel) from now on.
    func acceptDialogs(_ accept: Bool) {
        lock.withLock { accepting = accept }
    }

    /// The first non-nil `check` of the record, now or after a later event; `TimedOut` naming `what`.
    func wait<T: Sendable>(_ what: String, within timeout: Duration,
                           until check: @escaping @Sendable (Record) -> T?) async throws -> T {
        let delivery = Delivery<T>()
        let waiter: (Record) -> Bool = { record in
            if let value = check(record) {
                delivery.deliver(.success(value))
            } else if let ended = record.ended {
                delivery.deliver(.failure(DevToolsError(description: "\(what) never came: \(ended)")))
            }
            return delivery.isDone
        }
        lock.withLock {
            if !waiter(record) { waiters.append(waiter) }
        }
        return try await delivery.value(within: timeout, what)
    }

    func received(_ method: String, _ params: JSONValue) {
        switch method {
        case "Page.frameNavigated":
            guard let frame = params["frame"], frame["parentId"] == nil, let loader = frame["loaderId"]?.string else { return }
            let commit = Commit(loader: loader, url: frame["url"]?.string ?? "", unreachableURL: frame["unreachableUrl"]?.string)
            update { $0.commits.append(commit) }
        case "Page.lifecycleEvent":
            guard params["name"]?.string == "load", params["frameId"]?.string == mainFrame,
                  let loader = params["loaderId"]?.string else { return }
            update { $0.loaded.insert(loader) }
        case "Network.responseReceived":
            guard params["type"]?.string == "Document", params["frameId"]?.string == mainFrame,
                  let loader = params["loaderId"]?.string, let status = params["response"]?["status"]?.int else { return }
            let url = params["response"]?["url"]?.string ?? ""
            update { $0.documents[loader] = (status, url) }
        case "Page.javascriptDialogOpening":
            let dialog = "\(params["type"]?.string ?? "dialog"): \(params["message"]?.string ?? "")"
            let accept = lock.withLock { accepting }
            update { $0.dialogs.append(dialog) }
            // From a task: the reader thread must not wait for the answer. A failure is listed with the
            // console errors, since a dialog left open stops the page and this says why.
            Task { [answerDialog] in
                do {
                    try await answerDialog(accept)
                } catch {
                    self.update { $0.consoleErrors.append("could not answer \(dialog): \(error)") }
                }
            }
        case "Inspector.targetCrashed":
            update { $0.ended = "the page's renderer crashed" }
        default:
            if let error = ConsoleError(method, params) { update { $0.consoleErrors.append(error.text) } }
        }
    }

    func ended(_ reason: String) {
        update { $0.ended = reason }
    }

    private func update(_ change: (inout Record) -> Void) {
        lock.withLock {
            change(&record)
            waiters.removeAll { $0(record) }
        }
    }
}
