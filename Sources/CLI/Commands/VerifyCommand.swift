import AppStore
import Crypto
import Foundation
import GooglePlay
import HTTP

struct VerifyCommand: Command {
    static let name = "verify"
    static let summary = "verify a signed App Store payload or a Pub/Sub push token from standard input"
    static let usage = """
        usage: storesync verify apple --bundle-id B --environment Production|Sandbox [--app-apple-id N]
                                      [--root FILE]… [--kind notification|transaction|renewal-info] [--at T]

        Reads one JWS on standard input — a signedPayload, signedTransactionInfo or signedRenewalInfo, or a
        whole webhook body {"signedPayload": "…"} as a dead letter keeps it — and verifies it exactly as the
        worker does. Prints the decoded payload as JSON and exits 0, or prints the error code and the reason
        and exits 1.

          --root FILE     trusted root certificate (DER or PEM); repeatable; default Apple Root CA - G3
          --app-apple-id  required for Production
          --kind          what the JWS is (default notification)
          --at T          verify as of this ISO 8601 time instead of now (only used without signedDate)

               storesync verify google-push --jwks FILE|URL --audience A --email E [--at T]

        Reads a Pub/Sub push's Authorization header value (`Bearer …`, a bare token, or the headers JSON a
        dead letter keeps) on standard input and verifies it as the worker does: RS256 by kid from the JWKS
        in FILE or at URL (Google's is https://www.googleapis.com/oauth2/v3/certs), Google's issuer, the exact audience,
        the push service account's verified email, not expired. Prints the claims as JSON and exits 0, or
        prints the error code and the reason and exits 1.
        """

    static let maxInput = 64 * 1024

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        guard let target = arguments.positional() else { throw UsageError("say what to verify: apple") }
        switch target {
        case "apple": return try verifyApple(&arguments)
        case "google-push": return try await verifyGooglePush(&arguments)
        default: throw UsageError("unknown verify target \(target.debugDescription); available: apple, google-push")
        }
    }

    private static func verifyApple(_ arguments: inout Arguments) throws -> Int32 {
        guard let bundleID = try arguments.option("--bundle-id") else { throw UsageError("--bundle-id is required") }
        guard let environmentName = try arguments.option("--environment") else {
            throw UsageError("--environment Production|Sandbox is required")
        }
        let environment = AppStoreEnvironment(rawValue: environmentName)
        guard environment == .production || environment == .sandbox else {
            throw UsageError("--environment must be Production or Sandbox, got \(environmentName.debugDescription)")
        }
        let appAppleID = try arguments.option("--app-apple-id").map { text -> Int64 in
            guard let id = Int64(text), id > 0 else { throw UsageError("--app-apple-id must be a positive integer") }
            return id
        }
        let rootFiles = try arguments.options("--root")
        let kind = try arguments.option("--kind") ?? "notification"
        guard ["notification", "transaction", "renewal-info"].contains(kind) else {
            throw UsageError("--kind must be notification, transaction or renewal-info, got \(kind.debugDescription)")
        }
        let now = try arguments.option("--at").map { try Parse.date($0, "--at") } ?? Date()
        try arguments.finish()

        let roots = try rootFiles.isEmpty ? [AppleRoots.rootCAG3] : rootFiles.flatMap { path -> [Certificate] in
            let data = try Parse.file(path, "root", limit: ConnectionsCommand.maxRootsBytes)
            do {
                return try Certificate.load(data)
            } catch {
                throw UsageError("root file \(path) holds no certificate: \(error)")
            }
        }
        let verifier: SignedDataVerifier
        do {
            verifier = try SignedDataVerifier(roots: roots, bundleID: bundleID, appAppleID: appAppleID,
                                              environment: environment, chainCacheSize: 0)
        } catch let error as AppStoreVerificationError {
            throw UsageError(error.reason)
        }
        let jws = try readInput(jsonField: "signedPayload")
        do {
            switch kind {
            case "transaction": _ = try verifier.verifyTransaction(jws, now: now)
            case "renewal-info": _ = try verifier.verifyRenewalInfo(jws, now: now)
            default: _ = try verifier.verifyNotification(jws, now: now)
            }
        } catch let error as AppStoreVerificationError {
            Output.print("\(error.code): \(error.reason)")
            return 1
        }
        // Verified: print the payload exactly as signed.
        Output.print(String(decoding: try CompactJWS(jws).payload, as: UTF8.self))
        return 0
    }

    private static func verifyGooglePush(_ arguments: inout Arguments) async throws -> Int32 {
        guard let jwksSource = try arguments.option("--jwks") else { throw UsageError("--jwks FILE|URL is required") }
        guard let audience = try arguments.option("--audience") else { throw UsageError("--audience is required") }
        guard let email = try arguments.option("--email") else { throw UsageError("--email is required") }
        let now = try arguments.option("--at").map { try Parse.date($0, "--at") } ?? Date()
        try arguments.finish()
        let fetcher: any JWKSFetcher
        var client: HTTPClient?
        if jwksSource.hasPrefix("https://") || jwksSource.hasPrefix("http://") {
            client = try HTTPClient()
            fetcher = HTTPJWKSFetcher(url: jwksSource, client: client!)
        } else {
            guard FileManager.default.isReadableFile(atPath: jwksSource) else {
                throw UsageError("cannot read JWKS file \(jwksSource)")
            }
            fetcher = FileJWKSFetcher(path: jwksSource)
        }
        var authorization = try readInput(jsonField: "authorization")
        if !authorization.lowercased().hasPrefix("bearer ") { authorization = "Bearer " + authorization }
        let verifier = PushTokenVerifier(audience: audience, serviceAccountEmail: email, keys: GoogleKeyCache(fetcher: fetcher))
        let outcome: Result<PushTokenClaims, PushTokenError>
        do {
            outcome = .success(try await verifier.verify(authorization: authorization, now: now))
        } catch let error as PushTokenError {
            outcome = .failure(error)
        }
        await client?.shutdown()
        switch outcome {
        case .success(let claims):
            Output.print(Output.Value.object([
                ("iss", .string(claims.issuer)), ("aud", .string(claims.audience)), ("email", .string(claims.email)),
                ("sub", claims.subject.map { .string($0) } ?? .null),
                ("iat", .string(Output.iso(claims.issuedAt))), ("exp", .string(Output.iso(claims.expiresAt))),
            ]).text)
            return 0
        case .failure(let error):
            Output.print("\(error.code): \(error.reason)")
            return 1
        }
    }

    /// One value from standard input: the text itself, or — when it is a JSON object, as dead letters keep
    /// webhook bodies and headers — its `jsonField` string.
    private static func readInput(jsonField: String) throws -> String {
        let data = try FileHandle.standardInput.read(upToCount: maxInput + 1) ?? Data()
        guard data.count <= maxInput else { throw UsageError("input is larger than \(maxInput) bytes") }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("{") else { return text }
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let value = object.first(where: { $0.key.lowercased() == jsonField.lowercased() })?.value as? String
        else { throw UsageError("input is JSON but has no \(jsonField) string") }
        return value
    }
}
