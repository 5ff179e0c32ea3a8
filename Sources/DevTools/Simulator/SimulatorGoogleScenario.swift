import CLI
import Foundation
import Simulator

/// `storesync-dev simulator google ACTION --url URL …`: one request to a running Play simulator's control API
/// (`/simulator/google/…`), its JSON answer printed as is.
enum SimulatorGoogleScenario {
    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        guard let action = arguments.positional() else {
            throw UsageError("say which Google scenario action to run; see storesync-dev simulator --help")
        }
        return try await SimulatorControl.send(&arguments, urlHint: "GOOGLE_SIMULATOR_URL", path: "/simulator/google/") {
            try request(for: action, &$0)
        }
    }

    /// The control-API request for `action` and its options.
    private static func request(for action: String, _ arguments: inout Arguments) throws -> (String, String, Data?) {
        switch action {
        case "resend":
            let times = try Parse.int(try arguments.option("--times") ?? "1", "--times", range: 1...100)
            return ("POST", "pushes/resend", Data("{\"times\":\(times)}".utf8))
        case "advance-clock":
            guard let text = try arguments.option("--by") else { throw UsageError("advance-clock needs --by D") }
            let step = try Parse.duration(text, "--by", range: .zero...(.seconds(100 * 365 * 86_400)))
            return ("POST", "clock", Data("{\"advanceMilliseconds\":\(step.milliseconds)}".utf8))
        case "faults":
            return ("POST", "faults", try faults(&arguments))
        case "state":
            let token = try purchaseToken(&arguments)
            return ("GET", "subscriptions/\(token)", nil)
        case "requests", "pushes", "acknowledgements":
            return ("GET", action, nil)
        case "rotate-key":
            return ("POST", "keys/rotate", Data("{\"keepPrevious\":\(!arguments.flag("--drop-previous"))}".utf8))
        case "expire-access-tokens":
            return ("POST", "access-tokens/expire", nil)
        default:
            guard let scenario = PlayScenarioAction(rawValue: action) else {
                throw UsageError("unknown Google scenario action \(action.debugDescription); see storesync-dev simulator --help")
            }
            return ("POST", "scenario/\(scenario.rawValue)", try JSONEncoder().encode(try scenarioRequest(&arguments)))
        }
    }

    private static func purchaseToken(_ arguments: inout Arguments) throws -> String {
        guard let token = try arguments.option("--token") else { throw UsageError("this action needs --token T") }
        return try validated(token)
    }

    private static func validated(_ token: String) throws -> String {
        guard !token.isEmpty, token.utf8.count <= 1024, token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw UsageError("--token must be a purchase token (letters, digits, -, _ and .)")
        }
        return token
    }

    private static func minorUnits(_ text: String?, _ name: String) throws -> Int64? {
        try text.map { text in
            guard let value = Int64(text), value >= 0 else { throw UsageError("\(name) is minor units (999 = 9.99 USD), got \(text)") }
            return value
        }
    }

    private static func scenarioRequest(_ arguments: inout Arguments) throws -> PlayScenarioRequest {
        var request = PlayScenarioRequest()
        request.packageName = try arguments.option("--package")
        request.purchaseToken = try arguments.option("--token").map(validated)
        request.productId = try arguments.option("--product-id")
        request.basePlanId = try arguments.option("--base-plan")
        request.offerId = try arguments.option("--offer-id")
        request.price = try minorUnits(try arguments.option("--price"), "--price")
        request.tax = try minorUnits(try arguments.option("--tax"), "--tax")
        request.partialAmount = try minorUnits(try arguments.option("--partial"), "--partial")
        request.currency = try arguments.option("--currency")
        request.obfuscatedAccountId = try arguments.option("--account-id")
        request.obfuscatedProfileId = try arguments.option("--profile-id")
        request.regionCode = try arguments.option("--region")
        request.orderId = try arguments.option("--order-id")
        if let text = try arguments.option("--for") {
            request.pauseMilliseconds = try Parse.duration(text, "--for", range: .milliseconds(1)...(.seconds(366 * 86_400))).milliseconds
        }
        if let by = try arguments.option("--by") {
            guard let source = PlayCancellationSource(rawValue: by) else { throw UsageError("--by is user, system or developer") }
            request.cancelledBy = source
        }
        if let text = try arguments.option("--voided-source") {
            request.voidedSource = VoidedSource(rawValue: try Parse.int(text, "--voided-source", range: 0...2))
        }
        if let text = try arguments.option("--voided-reason") {
            request.voidedReason = VoidedReason(rawValue: try Parse.int(text, "--voided-reason", range: 0...8))
        }
        request.testPurchase = arguments.flag("--test-purchase") ? true : nil
        request.revoke = arguments.flag("--keep-access") ? false : nil
        request.silent = arguments.flag("--silent") ? true : nil
        return request
    }

    private static func faults(_ arguments: inout Arguments) throws -> Data {
        var fields: [(String, Output.Value)] = []
        for (option, field) in [("--rate-limit", "rateLimitedRequests"), ("--fail", "failedRequests"),
                                ("--deny", "permissionDeniedRequests"), ("--drop-pushes", "droppedPushes"),
                                ("--bad-push-tokens", "badPushTokens")] {
            if let text = try arguments.option(option) { fields.append((field, .int(try Parse.int(text, option, range: 0...1_000_000)))) }
        }
        if let text = try arguments.option("--duplicate-push") {
            fields.append(("duplicatedPushCopies", .int(try Parse.int(text, "--duplicate-push", range: 0...100))))
        }
        if let text = try arguments.option("--retry-after") {
            let wait = try Parse.duration(text, "--retry-after", range: .zero...(.seconds(86_400)))
            fields.append(("retryAfterSeconds", .int(Int((wait.milliseconds + 999) / 1000))))
        }
        if let text = try arguments.option("--latency") {
            let latency = try Parse.duration(text, "--latency", range: .zero...(.seconds(600)))
            fields.append(("latencyMilliseconds", .int(Int(latency.milliseconds))))
        }
        if let name = try arguments.option("--bad-push-token") {
            guard let fault = PushTokenFault(rawValue: name) else {
                throw UsageError("--bad-push-token is one of " + PushTokenFault.allCases.map(\.rawValue).joined(separator: ", "))
            }
            fields.append(("badPushToken", .string(fault.rawValue)))
            if !fields.contains(where: { $0.0 == "badPushTokens" }) { fields.append(("badPushTokens", .int(1))) }
        }
        return Data(Output.Value.object(fields).text.utf8)
    }
}
