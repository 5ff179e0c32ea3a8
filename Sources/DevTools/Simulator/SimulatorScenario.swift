import CLI
import Foundation
import Logging
import Simulator

/// `storesync-dev simulator scenario ACTION --url URL …`: one request to a running simulator's control API,
/// its JSON answer printed as is.
enum SimulatorScenario {
    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        guard let action = arguments.positional() else {
            throw UsageError("say which scenario action to run; see storesync-dev simulator --help")
        }
        return try await SimulatorControl.send(&arguments, urlHint: "SIMULATOR_URL", path: "") {
            try request(for: action, &$0)
        }
    }

    /// The control-API request for `action` and its options.
    private static func request(for action: String, _ arguments: inout Arguments) throws -> (String, String, Data?) {
        switch action {
        case "resend":
            let times = try Parse.int(try arguments.option("--times") ?? "1", "--times", range: 1...100)
            return ("POST", "/simulator/notifications/resend", Data("{\"times\":\(times)}".utf8))
        case "advance-clock":
            guard let text = try arguments.option("--by") else { throw UsageError("advance-clock needs --by D") }
            let step = try Parse.duration(text, "--by", range: .zero...(.seconds(100 * 365 * 86_400)))
            return ("POST", "/simulator/clock", Data("{\"advanceMilliseconds\":\(step.milliseconds)}".utf8))
        case "faults":
            return ("POST", "/simulator/faults", try faults(&arguments))
        case "state":
            guard let id = try arguments.option("--id") else { throw UsageError("state needs --id OTID") }
            guard !id.isEmpty, id.allSatisfy(\.isNumber) else { throw UsageError("--id must be a transaction id (digits)") }
            return ("GET", "/simulator/subscriptions/\(id)", nil)
        case "requests": return ("GET", "/simulator/requests", nil)
        case "consumption": return ("GET", "/simulator/consumption", nil)
        default:
            guard let scenario = ScenarioAction(rawValue: action) else {
                throw UsageError("unknown scenario action \(action.debugDescription); see storesync-dev simulator --help")
            }
            return ("POST", "/simulator/scenario/\(scenario.rawValue)", try JSONEncoder().encode(try scenarioRequest(&arguments)))
        }
    }

    private static func scenarioRequest(_ arguments: inout Arguments) throws -> ScenarioRequest {
        var request = ScenarioRequest()
        request.bundleId = try arguments.option("--bundle-id")
        request.originalTransactionId = try arguments.option("--id")
        request.transactionId = try arguments.option("--transaction-id")
        request.productId = try arguments.option("--product-id")
        request.price = try arguments.option("--price").map { text in
            guard let value = Int64(text), value >= 0 else { throw UsageError("--price is milliunits (9990 = 9.99), got \(text)") }
            return value
        }
        request.currency = try arguments.option("--currency")
        request.appAccountToken = try arguments.option("--account-token").map { text in
            guard let token = UUID(uuidString: text) else { throw UsageError("--account-token must be a UUID") }
            return token
        }
        request.percentage = try arguments.option("--percentage").map { try Parse.int($0, "--percentage", range: 1...99_999) }
        request.revocationReason = try arguments.option("--revocation-reason").map { try Parse.int($0, "--revocation-reason", range: 0...1) }
        if let reason = try arguments.option("--reason") {
            request.expirationReason = ExpirationReason(rawValue: reason)
            request.consumptionRequestReason = ConsumptionRequestReason(rawValue: reason)
            guard request.expirationReason != nil || request.consumptionRequestReason != nil else {
                throw UsageError("unknown --reason \(reason.debugDescription)")
            }
        }
        request.freeTrial = arguments.flag("--free-trial") ? true : nil
        request.familyShared = arguments.flag("--family-shared") ? true : nil
        request.grace = arguments.flag("--grace") ? true : nil
        request.silent = arguments.flag("--silent") ? true : nil
        return request
    }

    private static func faults(_ arguments: inout Arguments) throws -> Data {
        var fields: [(String, Output.Value)] = []
        if let text = try arguments.option("--rate-limit") {
            fields.append(("rateLimitedRequests", .int(try Parse.int(text, "--rate-limit", range: 0...1_000_000))))
        }
        if let text = try arguments.option("--retry-after") {
            let wait = try Parse.duration(text, "--retry-after", range: .zero...(.seconds(86_400)))
            fields.append(("retryAfterMilliseconds", .int(Int(wait.milliseconds))))
        }
        if let format = try arguments.option("--retry-after-format") {
            switch format {
            case "unix-ms": fields.append(("retryAfterFormat", .string(RetryAfterFormat.unixTimeMilliseconds.rawValue)))
            case "seconds": fields.append(("retryAfterFormat", .string(RetryAfterFormat.seconds.rawValue)))
            default: throw UsageError("--retry-after-format is unix-ms or seconds, got \(format.debugDescription)")
            }
        }
        if let text = try arguments.option("--fail") {
            fields.append(("failedRequests", .int(try Parse.int(text, "--fail", range: 0...1_000_000))))
        }
        if let text = try arguments.option("--latency") {
            let latency = try Parse.duration(text, "--latency", range: .zero...(.seconds(600)))
            fields.append(("latencyMilliseconds", .int(Int(latency.milliseconds))))
        }
        if let text = try arguments.option("--drop-notifications") {
            fields.append(("droppedNotifications", .int(try Parse.int(text, "--drop-notifications", range: 0...1_000_000))))
        }
        return Data(Output.Value.object(fields).text.utf8)
    }
}
