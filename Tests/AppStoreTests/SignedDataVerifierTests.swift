import AppStore
import Crypto
import Foundation
import TestPKI
import Testing

/// One way a signed payload must be refused: how to build the token and the verifier, which `verify…` to call,
/// and the code and reason fragment the refusal must carry.
struct Rejection: Sendable, CustomTestStringConvertible {
    enum Kind: Sendable { case notification, transaction, renewal }

    let name: String
    let kind: Kind
    let verifier: @Sendable () throws -> SignedDataVerifier
    let token: @Sendable () throws -> String
    let code: AppStoreVerificationError.Code
    let fragment: String

    init(_ name: String, _ kind: Kind = .notification, verifier: @escaping @Sendable () throws -> SignedDataVerifier = { try Verifiers.production() },
         token: @escaping @Sendable () throws -> String, _ code: AppStoreVerificationError.Code, _ fragment: String) {
        self.name = name
        self.kind = kind
        self.verifier = verifier
        self.token = token
        self.code = code
        self.fragment = fragment
    }

    var testDescription: String { name }

    func verify() throws {
        let verifier = try verifier()
        let token = try token()
        switch kind {
        case .notification: _ = try verifier.verifyNotification(token, now: Fixture.now)
        case .transaction: _ = try verifier.verifyTransaction(token, now: Fixture.now)
        case .renewal: _ = try verifier.verifyRenewalInfo(token, now: Fixture.now)
        }
    }
}

private func valid() throws -> LocalApplePKI { try PKIs.valid.get() }
private func signed(_ payload: Data = Payloads.notification(), by pki: () throws -> LocalApplePKI = valid) throws -> String {
    try pki().sign(payload)
}
/// A valid notification's header, with `change` applied.
private func header(_ change: (inout [String: Any]) throws -> Void) throws -> [String: Any] {
    var header: [String: Any] = ["alg": "ES256", "x5c": Tokens.x5c(try valid())]
    try change(&header)
    return header
}

extension Rejection {
    static let all: [Rejection] = [
        // Signature.
        Rejection("payload changed after signing", token: {
            Tokens.replacingPayload(try signed(), with: Payloads.notification(type: "REFUND"))
        }, .verificationFailure, "signature does not match"),
        Rejection("transaction payload changed after signing (price)", .transaction, token: {
            Tokens.replacingPayload(try signed(Payloads.transaction()), with: Payloads.transaction(price: 1))
        }, .verificationFailure, "signature does not match"),
        Rejection("signature bit flipped", token: { try Tokens.flippingSignature(try signed()) },
                  .verificationFailure, "signature does not match"),
        Rejection("DER signature instead of raw r‖s", token: { try Tokens.withDERSignature(try signed()) },
                  .verificationFailure, "64 bytes"),
        Rejection("signed by a key other than the leaf's", token: {
            try Tokens.craft(header: header { _ in }, payload: Payloads.notification(), key: PKIs.foreign.get().leafKey)
        }, .verificationFailure, "signature does not match"),

        // A signedDate no real payload carries (found by fuzzing: it once crashed the time conversion),
        // rejected before any chain work, signature or not.
        Rejection("signedDate far in the future", token: {
            Tokens.replacingPayload(try signed(), with: Data(#"{"notificationType":"TEST","notificationUUID":"u","signedDate":1.7e114}"#.utf8))
        }, .invalidFormat, "signedDate"),
        Rejection("signedDate far in the past", token: {
            try signed(Payloads.notification(signedDate: Date(timeIntervalSince1970: -1e15)))
        }, .invalidFormat, "signedDate"),

        // Header.
        Rejection("alg none", token: {
            try Tokens.craft(header: header { $0["alg"] = "none" }, payload: Payloads.notification())
        }, .invalidFormat, "alg must be ES256, got none"),
        Rejection("alg none with an empty signature", token: {
            try Tokens.craft(header: header { $0["alg"] = "none" }, payload: Payloads.notification(), signature: Data())
        }, .invalidFormat, "empty part"),
        Rejection("alg missing", token: {
            try Tokens.craft(header: header { $0["alg"] = nil }, payload: Payloads.notification())
        }, .invalidFormat, "alg must be ES256, got none"),
        Rejection("alg HS256", token: {
            try Tokens.craft(header: header { $0["alg"] = "HS256" }, payload: Payloads.notification())
        }, .invalidFormat, "alg must be ES256, got HS256"),
        Rejection("alg RS256", token: {
            try Tokens.craft(header: header { $0["alg"] = "RS256" }, payload: Payloads.notification())
        }, .invalidFormat, "alg must be ES256, got RS256"),
        Rejection("alg ES384", token: {
            try Tokens.craft(header: header { $0["alg"] = "ES384" }, payload: Payloads.notification())
        }, .invalidFormat, "alg must be ES256, got ES384"),
        Rejection("alg es256 (case matters)", token: {
            try Tokens.craft(header: header { $0["alg"] = "es256" }, payload: Payloads.notification())
        }, .invalidFormat, "alg must be ES256, got es256"),
        Rejection("x5c missing", token: {
            try Tokens.craft(header: header { $0["x5c"] = nil }, payload: Payloads.notification())
        }, .invalidFormat, "x5c header is missing"),
        Rejection("x5c empty", token: {
            try Tokens.craft(header: header { $0["x5c"] = [String]() }, payload: Payloads.notification())
        }, .invalidFormat, "found 0"),
        Rejection("x5c with 1 certificate", token: {
            try Tokens.craft(header: header { $0["x5c"] = Array(Tokens.x5c(try valid()).prefix(1)) }, payload: Payloads.notification())
        }, .invalidFormat, "x5c must hold 3 certificates, found 1"),
        Rejection("x5c with 2 certificates", token: {
            try Tokens.craft(header: header { $0["x5c"] = Array(Tokens.x5c(try valid()).prefix(2)) }, payload: Payloads.notification())
        }, .invalidFormat, "x5c must hold 3 certificates, found 2"),
        Rejection("x5c with 4 certificates", token: {
            try Tokens.craft(header: header { $0["x5c"] = Tokens.x5c(try valid()) + [Tokens.x5c(try valid())[2]] },
                             payload: Payloads.notification())
        }, .invalidFormat, "x5c must hold 3 certificates, found 4"),
        // Header fields that change how the token must be read (RFC 7515 §4.1.11, RFC 7797): refused as
        // Apple's libraries refuse them, for every kind of signed data.
        Rejection("crit naming an extension StoreSync does not understand", token: {
            try Tokens.craft(header: header { $0["crit"] = ["exp"]; $0["exp"] = 1 }, payload: Payloads.notification())
        }, .verificationFailure, #"crit names "exp""#),
        Rejection("crit empty", token: {
            try Tokens.craft(header: header { $0["crit"] = [String]() }, payload: Payloads.notification())
        }, .verificationFailure, "crit names an empty list"),
        Rejection("crit spelled with a JSON escape", token: {
            let p = Tokens.parts(try signed())
            let json = String(decoding: try Base64URL.decode(p[0]), as: UTF8.self)
            let escaped = json.replacingOccurrences(of: "{", with: #"{"crit":["x"],"#, options: [], range: json.range(of: "{"))
            return try Tokens.craft(rawHeader: Data(escaped.utf8), payload: Payloads.notification())
        }, .verificationFailure, "crit"),
        Rejection("crit not a list of names", token: {
            try Tokens.craft(header: header { $0["crit"] = "b64" }, payload: Payloads.notification())
        }, .invalidFormat, "header"),
        Rejection("b64 false (unencoded payload)", token: {
            try Tokens.craft(header: header { $0["b64"] = false; $0["crit"] = ["b64"] }, payload: Payloads.notification())
        }, .verificationFailure, "crit"),
        Rejection("b64 false without crit", token: {
            try Tokens.craft(header: header { $0["b64"] = false }, payload: Payloads.notification())
        }, .verificationFailure, "b64 false"),
        Rejection("b64 false on a transaction", .transaction, token: {
            try Tokens.craft(header: header { $0["b64"] = false }, payload: Payloads.transaction())
        }, .verificationFailure, "b64 false"),
        Rejection("crit on a renewal info", .renewal, token: {
            try Tokens.craft(header: header { $0["crit"] = ["x"] }, payload: Payloads.renewal())
        }, .verificationFailure, "crit"),
        Rejection("header not JSON", token: {
            let p = Tokens.parts(try signed())
            return "\(Base64URL.encode(Data("alg=ES256".utf8))).\(p[1]).\(p[2])"
        }, .invalidFormat, "header"),

        // Certificates and chain.
        Rejection("leaf certificate not base64", token: {
            try Tokens.craft(header: header { $0["x5c"] = ["not base64!"] + Tokens.x5c(try valid()).dropFirst() },
                             payload: Payloads.notification())
        }, .invalidCertificate, "leaf certificate is not base64"),
        Rejection("x5c in base64url rather than base64", token: {
            let urlSafe = try Tokens.x5c(valid()).map {
                $0.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
            }
            return try Tokens.craft(header: header { $0["x5c"] = urlSafe }, payload: Payloads.notification())
        }, .invalidCertificate, "not base64"),
        Rejection("intermediate certificate not DER", token: {
            var chain = Tokens.x5c(try valid())
            chain[1] = Data("certainly not DER".utf8).base64EncodedString()
            return try Tokens.craft(header: header { $0["x5c"] = chain }, payload: Payloads.notification())
        }, .invalidCertificate, "intermediate certificate"),
        Rejection("chain to a root the verifier does not trust", verifier: {
            try Verifiers.production(roots: [PKIs.foreign.get().root])
        }, token: { try signed() }, .verificationFailure, "intermediate: unable to get local issuer certificate"),
        Rejection("token from a foreign PKI that brings its own root in x5c[2]", token: {
            try signed(by: { try PKIs.foreign.get() })
        }, .verificationFailure, "certificate chain"),
        Rejection("Apple's real root configured, local PKI token", verifier: {
            try SignedDataVerifier(bundleID: Fixture.bundleID, appAppleID: Fixture.appAppleID, environment: .production)
        }, token: { try signed() }, .verificationFailure, "certificate chain"),
        Rejection("leaf and intermediate swapped", token: {
            var chain = Tokens.x5c(try valid())
            chain.swapAt(0, 1)
            return try Tokens.craft(header: header { $0["x5c"] = chain }, payload: Payloads.notification())
        }, .verificationFailure, "the validated path is not leaf → x5c intermediate → root"),
        // Apple's AppStoreOIDPolicy checks the markers on the *validated* chain and requires it to be exactly
        // leaf → intermediate → root ("Chain has unexpected length"); a leaf the root issued directly never
        // passes through the WWDR intermediate it names.
        Rejection("leaf issued by the root directly, a WWDR intermediate merely listed in x5c",
                  verifier: { try Verifiers.production(roots: [PKIs.bypass.get().root]) },
                  token: { try PKIs.bypass.get().sign(Payloads.notification()) }, .verificationFailure, "intermediate"),
        Rejection("valid leaf with a foreign intermediate", token: {
            var chain = Tokens.x5c(try valid())
            chain[1] = try PKIs.foreign.get().intermediate.der.base64EncodedString()
            return try Tokens.craft(header: header { $0["x5c"] = chain }, payload: Payloads.notification())
        }, .verificationFailure, "certificate chain"),
        Rejection("leaf lacks the receipt-signing OID", verifier: { try Verifiers.production(roots: [PKIs.noLeafMarker.get().root]) },
                  token: { try signed(by: { try PKIs.noLeafMarker.get() }) }, .verificationFailure, "1.2.840.113635.100.6.11.1"),
        Rejection("intermediate lacks the WWDR OID", verifier: { try Verifiers.production(roots: [PKIs.noIntermediateMarker.get().root]) },
                  token: { try signed(by: { try PKIs.noIntermediateMarker.get() }) }, .verificationFailure, "1.2.840.113635.100.6.2.1"),
        Rejection("intermediate is not a CA", verifier: { try Verifiers.production(roots: [PKIs.intermediateNotCA.get().root]) },
                  token: { try signed(by: { try PKIs.intermediateNotCA.get() }) }, .verificationFailure,
                  "intermediate: invalid CA certificate"),
        Rejection("leaf expired at signedDate", verifier: { try Verifiers.production(roots: [PKIs.shortLeaf.get().root]) }, token: {
            try signed(Payloads.notification(signedDate: utc(2026, 3, 1)), by: { try PKIs.shortLeaf.get() })
        }, .verificationFailure, "leaf: certificate has expired"),
        Rejection("leaf not yet valid at signedDate", verifier: { try Verifiers.production(roots: [PKIs.shortLeaf.get().root]) }, token: {
            try signed(Payloads.notification(signedDate: utc(2024, 9, 1)), by: { try PKIs.shortLeaf.get() })
        }, .verificationFailure, "leaf: certificate is not yet valid"),
        Rejection("chain expired at signedDate (every certificate)", token: {
            try signed(Payloads.notification(signedDate: utc(2041)))
        }, .verificationFailure, "certificate has expired"),
        Rejection("leaf with a P-384 key", verifier: { try Verifiers.production(roots: [PKIs.p384Leaf.get().root]) }, token: {
            let pki = try PKIs.p384Leaf.get()
            return try Tokens.craft(header: ["alg": "ES256", "x5c": Tokens.x5c(pki)], payload: Payloads.notification())
        }, .verificationFailure, "leaf key is EC P-384, not EC P-256"),

        // The store connection.
        Rejection("wrong bundleId", token: { try signed(Payloads.notification(bundleID: "com.example.other")) },
                  .invalidAppIdentifier, "bundleId com.example.other is not com.example.storesync"),
        Rejection("missing bundleId", token: { try signed(Payloads.notification(bundleID: nil)) },
                  .invalidAppIdentifier, "bundleId missing"),
        Rejection("wrong appAppleId in production", token: { try signed(Payloads.notification(appAppleID: 42)) },
                  .invalidAppIdentifier, "appAppleId 42 is not 1234567890"),
        Rejection("missing appAppleId in production", token: { try signed(Payloads.notification(appAppleID: nil)) },
                  .invalidAppIdentifier, "appAppleId missing"),
        Rejection("Sandbox notification, Production connection", token: {
            try signed(Payloads.notification(environment: "Sandbox"))
        }, .invalidEnvironment, "environment Sandbox is not Production"),
        Rejection("Production notification, Sandbox connection", verifier: { try Verifiers.sandbox() }, token: {
            try signed(Payloads.notification(appAppleID: nil, environment: "Production"))
        }, .invalidEnvironment, "environment Production is not Sandbox"),
        Rejection("Xcode environment", token: { try signed(Payloads.notification(environment: "Xcode")) },
                  .invalidEnvironment, "environment Xcode"),
        Rejection("LocalTesting environment", token: { try signed(Payloads.notification(environment: "LocalTesting")) },
                  .invalidEnvironment, "environment LocalTesting"),
        Rejection("missing environment", token: { try signed(Payloads.notification(environment: nil)) },
                  .invalidEnvironment, "environment missing"),
        Rejection("notification with no data, summary, token or appData", token: {
            try signed(Payloads.json(["notificationType": "TEST", "notificationUUID": "u", "signedDate": 1_748_736_000_000]))
        }, .invalidAppIdentifier, "bundleId missing"),
        Rejection("transaction for another bundle", .transaction, token: {
            try signed(Payloads.transaction(bundleID: "com.example.other"))
        }, .invalidAppIdentifier, "bundleId com.example.other"),
        Rejection("transaction from Sandbox", .transaction, token: { try signed(Payloads.transaction(environment: "Sandbox")) },
                  .invalidEnvironment, "environment Sandbox"),
        Rejection("transaction without environment", .transaction, token: { try signed(Payloads.transaction(environment: nil)) },
                  .invalidEnvironment, "environment missing"),
        Rejection("renewal info from Sandbox", .renewal, token: { try signed(Payloads.renewal(environment: "Sandbox")) },
                  .invalidEnvironment, "environment Sandbox"),

        // Encoding.
        Rejection("malformed base64url", token: {
            let p = Tokens.parts(try signed())
            return "\(p[0]).\(p[1].dropLast(2))+/.\(p[2])"
        }, .invalidFormat, "not base64url"),
        Rejection("padded base64url", token: {
            let p = Tokens.parts(try signed())
            return "\(p[0]).\(p[1]).\(p[2])=="
        }, .invalidFormat, "padded"),
        Rejection("payload not JSON", token: { try signed(Data("not json".utf8)) }, .invalidFormat, "malformed JSON"),
        Rejection("payload a JSON array", token: { try signed(Data("[]".utf8)) }, .invalidFormat, "payload is not a NotificationPayload"),
        Rejection("payload without notificationType", token: {
            try signed(Payloads.json(["notificationUUID": "u", "data": ["bundleId": Fixture.bundleID]]))
        }, .invalidFormat, "missing notificationType"),
        Rejection("payload with a string signedDate", token: {
            try signed(Payloads.json(["notificationType": "TEST", "notificationUUID": "u", "signedDate": "2025-06-01"]))
        }, .invalidFormat, "bad signedDate"),
        Rejection("transaction price not an integer", .transaction, token: {
            var body = try JSONSerialization.jsonObject(with: Payloads.transaction()) as! [String: Any]
            body["price"] = 4.99
            return try signed(Payloads.json(body))
        }, .invalidFormat, "payload is not a TransactionPayload"),
        Rejection("two parts", token: { Tokens.parts(try signed()).prefix(2).joined(separator: ".") },
                  .invalidFormat, "3 dot-separated parts"),
        Rejection("four parts", token: { try signed() + ".AAAA" }, .invalidFormat, "3 dot-separated parts"),
        Rejection("empty string", token: { "" }, .invalidFormat, "3 dot-separated parts"),
        Rejection("oversized token", token: { String(repeating: "a", count: 70_000) }, .invalidFormat, "70000 bytes"),
        Rejection("oversized but well-formed token", token: {
            try signed(Payloads.notification(type: String(repeating: "X", count: 60_000)))
        }, .invalidFormat, "more than the 65536 allowed"),
    ]
}

/// Guards `SignedDataVerifier`, the gate every App Store payload passes: Apple's rules (ES256 only, exactly
/// three `x5c` certificates with the third ignored, the chain to a configured root validated at `signedDate`,
/// Apple's marker OIDs, a P-256 leaf, then bundle id, App Apple ID in production and environment), each
/// rejection with its Apple error code, and a chain cache that never changes a verdict.
@Suite("Signed data verifier")
struct SignedDataVerifierTests {
    // MARK: Accepted payloads

    @Test("a valid production notification verifies and decodes")
    func validNotification() throws {
        let token = try signed()
        let payload = try Verifiers.production().verifyNotification(token, now: Fixture.now)
        #expect(payload.notificationType == "DID_RENEW")
        #expect(payload.subtype == "BILLING_RECOVERY")
        #expect(payload.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(payload.version == "2.0")
        #expect(payload.signedDate == Fixture.signedDate)
        let data = try #require(payload.data)
        #expect(data.bundleId == Fixture.bundleID)
        #expect(data.appAppleId == Fixture.appAppleID)
        #expect(data.environment == .production)
        #expect(data.status == 1)
        #expect(data.signedTransactionInfo == "eyJ.e30.sig")
        #expect(payload.summary == nil)
    }

    @Test("unknown notification types and subtypes are kept verbatim, not rejected", arguments: [
        ("FUTURE_TYPE", "FUTURE_SUBTYPE"), ("FUTURE_TYPE", nil), ("SUBSCRIBED", "INITIAL_BUY"), ("TEST", nil),
    ] as [(String, String?)])
    func unknownTypes(type: String, subtype: String?) throws {
        let token = try signed(Payloads.notification(type: type, subtype: subtype))
        let payload = try Verifiers.production().verifyNotification(token, now: Fixture.now)
        #expect(payload.notificationType == type)
        #expect(payload.subtype == subtype)
    }

    @Test("a valid transaction verifies; price is Int64 milliunits and dates come from milliseconds")
    func validTransaction() throws {
        let token = try signed(Payloads.transaction())
        let payload = try Verifiers.production().verifyTransaction(token, now: Fixture.now)
        #expect(payload.price == 5_000_000_000_990)  // beyond Int32, exact
        #expect(payload.currency == "USD")
        #expect(payload.bundleId == Fixture.bundleID)
        #expect(payload.environment == .production)
        #expect(payload.transactionId == "2000000123456789")
        #expect(payload.originalTransactionId == "2000000000000001")
        #expect(payload.quantity == 1)
        #expect(payload.type == "Auto-Renewable Subscription")
        #expect(payload.transactionReason == "RENEWAL")
        #expect(payload.offerDiscountType == "PAY_AS_YOU_GO")
        #expect(payload.signedDate == Fixture.signedDate)
        #expect(payload.purchaseDate.map(milliseconds) == 1_748_736_000_123)
        #expect(payload.expiresDate.map(milliseconds) == 1_751_328_000_456)
        #expect(payload.originalPurchaseDate == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(payload.revocationDate == nil)
    }

    @Test("a transaction enclosed in a verified notification is decoded and its claims checked, its signature not again",
          arguments: [
              (Payloads.transaction(), nil),
              (Payloads.transaction(bundleID: "com.example.other"), AppStoreVerificationError.Code.invalidAppIdentifier),
              (Payloads.transaction(environment: "Sandbox"), AppStoreVerificationError.Code.invalidEnvironment),
          ] as [(Data, AppStoreVerificationError.Code?)])
    func enclosedTransaction(_ payload: Data, _ expected: AppStoreVerificationError.Code?) throws {
        let nested = try signed(payload, by: { try PKIs.foreign.get() })
        let verifier = try Verifiers.production()
        #expect(throws: AppStoreVerificationError.self) { try verifier.verifyTransaction(nested, now: Fixture.now) }
        let notification = try verifier.verifyNotification(try signed(Payloads.notification(signedTransactionInfo: nested)),
                                                           now: Fixture.now)
        guard let expected else {
            #expect(try verifier.enclosedTransaction(of: notification)?.transactionId == "2000000123456789")
            return
        }
        #expect { try verifier.enclosedTransaction(of: notification) } throws: {
            ($0 as? AppStoreVerificationError)?.code == expected
        }
    }

    @Test("an enclosed transaction that is not a JWS of a transaction object is refused as invalid format",
          arguments: ["", "a.b", "bm90IGpzb24.bm90IGpzb24.c2ln"])
    func enclosedTransactionFormat(_ token: String) throws {
        let verifier = try Verifiers.production()
        let notification = try verifier.verifyNotification(try signed(Payloads.notification(signedTransactionInfo: token)),
                                                           now: Fixture.now)
        #expect { try verifier.enclosedTransaction(of: notification) } throws: {
            ($0 as? AppStoreVerificationError)?.code == .invalidFormat
        }
    }

    @Test("an enclosed transaction whose header carries crit or b64 false is refused like a signed one",
          arguments: [["crit": ["x"]], ["b64": false], ["crit": [String]()]] as [[String: any Sendable]])
    func enclosedTransactionHeaderRules(_ extra: [String: any Sendable]) throws {
        var fields: [String: Any] = ["alg": "ES256", "x5c": Tokens.x5c(try valid())]
        fields.merge(extra) { $1 }
        let nested = try Tokens.craft(header: fields, payload: Payloads.transaction())
        let verifier = try Verifiers.production()
        let notification = try verifier.verifyNotification(try signed(Payloads.notification(signedTransactionInfo: nested)),
                                                           now: Fixture.now)
        #expect { try verifier.enclosedTransaction(of: notification) } throws: {
            ($0 as? AppStoreVerificationError)?.code == .verificationFailure
        }
    }

    @Test("a notification that names no transaction encloses none")
    func noEnclosedTransaction() throws {
        let verifier = try Verifiers.production()
        let notification = try verifier.verifyNotification(try signed(Payloads.notification(signedTransactionInfo: nil)),
                                                           now: Fixture.now)
        #expect(try verifier.enclosedTransaction(of: notification) == nil)
    }

    @Test("a valid renewal info verifies and decodes (it has no bundle id to check)")
    func validRenewal() throws {
        let token = try signed(Payloads.renewal())
        let payload = try Verifiers.production().verifyRenewalInfo(token, now: Fixture.now)
        #expect(payload.renewalPrice == 49_990)
        #expect(payload.currency == "EUR")
        #expect(payload.autoRenewStatus == 1)
        #expect(payload.autoRenewProductId == "com.example.storesync.yearly")
        #expect(payload.isInBillingRetryPeriod == false)
        #expect(payload.renewalDate.map(milliseconds) == 1_751_328_000_456)
        #expect(payload.environment == .production)
    }

    @Test("a Sandbox connection accepts a notification without appAppleId, and does not compare it", arguments: [
        nil, Fixture.appAppleID, 42,
    ] as [Int64?])
    func sandboxIgnoresAppAppleID(appAppleID: Int64?) throws {
        let token = try signed(Payloads.notification(appAppleID: appAppleID, environment: "Sandbox"))
        let payload = try Verifiers.sandbox().verifyNotification(token, now: Fixture.now)
        #expect(payload.data?.appAppleId == appAppleID)
        #expect(payload.data?.environment == .sandbox)
    }

    @Test("bundle, App Apple ID and environment come from summary, externalPurchaseToken or appData when data is absent")
    func notificationSources() throws {
        let verifier = try Verifiers.production()
        let summary = Payloads.json([
            "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY", "notificationUUID": "u1",
            "signedDate": milliseconds(Fixture.signedDate),
            "summary": ["bundleId": Fixture.bundleID, "appAppleId": Fixture.appAppleID, "environment": "Production",
                        "requestIdentifier": "r", "succeededCount": 5_000_000_000, "failedCount": 0],
        ])
        let decoded = try verifier.verifyNotification(try signed(summary), now: Fixture.now)
        #expect(decoded.summary?.succeededCount == 5_000_000_000)

        let externalPurchase = Payloads.json([
            "notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": "UNREPORTED", "notificationUUID": "u2",
            "signedDate": milliseconds(Fixture.signedDate),
            "externalPurchaseToken": ["externalPurchaseId": "b2158121-7af9", "tokenCreationDate": 1_748_736_000_000,
                                      "appAppleId": Fixture.appAppleID, "bundleId": Fixture.bundleID],
        ])
        _ = try verifier.verifyNotification(try signed(externalPurchase), now: Fixture.now)

        // The environment of an external purchase token is Sandbox exactly when its id starts with SANDBOX.
        let sandboxPurchase = Payloads.json([
            "notificationType": "EXTERNAL_PURCHASE_TOKEN", "notificationUUID": "u3",
            "signedDate": milliseconds(Fixture.signedDate),
            "externalPurchaseToken": ["externalPurchaseId": "SANDBOX_b2158121", "bundleId": Fixture.bundleID],
        ])
        _ = try Verifiers.sandbox().verifyNotification(try signed(sandboxPurchase), now: Fixture.now)
        let error = #expect(throws: AppStoreVerificationError.self) {
            try Verifiers.production().verifyNotification(try signed(sandboxPurchase), now: Fixture.now)
        }
        #expect(error?.code == .invalidAppIdentifier)  // production: appAppleId missing is checked first

        let appData = Payloads.json([
            "notificationType": "RESCIND_CONSENT", "notificationUUID": "u4", "signedDate": milliseconds(Fixture.signedDate),
            "appData": ["bundleId": Fixture.bundleID, "appAppleId": Fixture.appAppleID, "environment": "Production"],
        ])
        #expect(try verifier.verifyNotification(try signed(appData), now: Fixture.now).appData?.bundleId == Fixture.bundleID)

        // Both an external purchase token and app data (Apple says never): routing picks the connection by the
        // bundle the verifier then checks, so a genuine payload is not refused for the other section's bundle.
        let both = try signed(Payloads.json([
            "notificationType": "EXTERNAL_PURCHASE_TOKEN", "notificationUUID": "u5", "signedDate": milliseconds(Fixture.signedDate),
            "externalPurchaseToken": ["externalPurchaseId": "b2158121-7af9", "appAppleId": Fixture.appAppleID,
                                      "bundleId": Fixture.bundleID],
            "appData": ["bundleId": "com.example.other", "appAppleId": 1, "environment": "Production"],
        ]))
        #expect(try NotificationRouting(unverified: both).bundleID == Fixture.bundleID)
        _ = try verifier.verifyNotification(both, now: Fixture.now)
    }

    @Test("x5c[2] is ignored: trust comes only from the configured roots")
    func thirdCertificateIgnored() throws {
        let pki = try valid()
        for third in [try PKIs.foreign.get().root.der.base64EncodedString(), "not even base64", pki.leaf.der.base64EncodedString()] {
            var chain = Tokens.x5c(pki)
            chain[2] = third
            let token = try Tokens.craft(header: ["alg": "ES256", "x5c": chain], payload: Payloads.notification())
            #expect(throws: Never.self) { try Verifiers.production().verifyNotification(token, now: Fixture.now) }
        }
    }

    @Test("the chain is validated at signedDate, not now: an old token verifies after its leaf has expired")
    func validatedAtSignedDate() throws {
        let pki = try PKIs.shortLeaf.get()
        let verifier = try Verifiers.production(roots: [pki.root])
        let token = try pki.sign(Payloads.notification(signedDate: utc(2025, 6, 1)))
        // `now` long after the leaf's notAfter (2026-01-01) and before its notBefore: neither matters.
        _ = try verifier.verifyNotification(token, now: utc(2030))
        _ = try verifier.verifyNotification(token, now: utc(2021))
    }

    @Test("the same short-lived chain verifies with signedDate inside the leaf's validity and fails outside it",
          arguments: [
              (utc(2025), true), (utc(2025, 6, 1), true), (utc(2025, 12, 31, 23, 59, 59), true),
              (utc(2024, 12, 31, 23, 59, 59), false), (utc(2026, 1, 1, 0, 0, 1), false), (utc(2030), false),
          ] as [(Date, Bool)])
    func leafValidityAtSignedDate(signedDate: Date, valid: Bool) throws {
        let pki = try PKIs.shortLeaf.get()
        let token = try pki.sign(Payloads.notification(signedDate: signedDate))
        for cacheSize in [0, 64] {
            let verifier = try Verifiers.production(cacheSize: cacheSize, roots: [pki.root])
            if valid {
                #expect(throws: Never.self) { try verifier.verifyNotification(token, now: Fixture.now) }
            } else {
                let error = #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(token, now: Fixture.now) }
                #expect(error?.code == .verificationFailure)
            }
        }
    }

    @Test("without signedDate the chain is validated at now: the SAME token verifies or not depending on the time")
    func sameTokenValidatedAtNow() throws {
        let pki = try PKIs.shortLeaf.get()
        let verifier = try Verifiers.production(cacheSize: 0, roots: [pki.root])
        let token = try pki.sign(Payloads.notification(signedDate: nil))
        let payload = try verifier.verifyNotification(token, now: utc(2025, 6, 1))
        #expect(payload.signedDate == nil)
        let expired = #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(token, now: utc(2026, 6, 1)) }
        #expect(expired?.code == .verificationFailure)
        #expect(expired?.reason.contains("leaf: certificate has expired") == true, "\(expired?.reason ?? "")")
        let early = #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(token, now: utc(2024, 6, 1)) }
        #expect(early?.reason.contains("leaf: certificate is not yet valid") == true, "\(early?.reason ?? "")")
    }

    // MARK: Rejections

    @Test("every rejection path gives Apple's code and names the failed check", arguments: Rejection.all)
    func rejection(_ rejection: Rejection) throws {
        guard let error = #expect(throws: AppStoreVerificationError.self, performing: { try rejection.verify() }) else { return }
        #expect(error.code == rejection.code, "\(error)")
        #expect(error.reason.contains(rejection.fragment), "\(error)")
        #expect(!error.isRetryable)
    }

    @Test("a Production connection without an App Apple ID is refused at init")
    func productionNeedsAppAppleID() throws {
        let error = #expect(throws: AppStoreVerificationError.self) {
            try SignedDataVerifier(roots: [valid().root], bundleID: Fixture.bundleID, appAppleID: nil, environment: .production)
        }
        #expect(error?.code == .invalidAppIdentifier)
        #expect(error?.reason.contains("App Apple ID") == true)
        // Sandbox and other environments need none.
        _ = try SignedDataVerifier(roots: [valid().root], bundleID: Fixture.bundleID, appAppleID: nil, environment: .sandbox)
        let verifier = try SignedDataVerifier(bundleID: Fixture.bundleID, appAppleID: 1, environment: .production)
        #expect(verifier.bundleID == Fixture.bundleID && verifier.appAppleID == 1 && verifier.environment == .production)
    }

    @Test("error codes carry Apple's names")
    func codeNames() {
        let codes: [AppStoreVerificationError.Code] = [.invalidFormat, .invalidCertificate, .verificationFailure,
                                                       .retryableFailure, .invalidAppIdentifier, .invalidEnvironment]
        #expect(codes.map(\.description) == ["INVALID_JWT_FORMAT", "INVALID_CERTIFICATE", "VERIFICATION_FAILURE",
                                             "RETRYABLE_VERIFICATION_FAILURE", "INVALID_APP_IDENTIFIER", "INVALID_ENVIRONMENT"])
        #expect(AppStoreVerificationError(.retryableFailure, "x").isRetryable)
        #expect(AppStoreEnvironment(rawValue: "Xcode") == .other("Xcode"))
        #expect(AppStoreEnvironment(rawValue: "Production").rawValue == "Production")
    }

    // MARK: Chain cache

    @Test("a cached chain still has every signature checked: a tampered token from a cached chain is refused")
    func cacheHoldsChainNotSignature() throws {
        let verifier = try Verifiers.production(cacheSize: 64)
        let token = try signed()
        _ = try verifier.verifyNotification(token, now: Fixture.now)
        _ = try verifier.verifyNotification(token, now: Fixture.now)  // served from the cache

        for tampered in [try Tokens.flippingSignature(token), try Tokens.withDERSignature(token),
                         Tokens.replacingPayload(token, with: Payloads.notification(type: "REFUND"))] {
            let error = #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(tampered, now: Fixture.now) }
            #expect(error?.code == .verificationFailure)
        }
        // A different token from the same cached chain, signed by someone else's key, is refused too.
        let forged = try Tokens.craft(header: ["alg": "ES256", "x5c": Tokens.x5c(valid())], payload: Payloads.notification(),
                                      key: PrivateKey.generate(.ecP256))
        let error = #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(forged, now: Fixture.now) }
        #expect(error?.reason.contains("signature does not match") == true)
        _ = try verifier.verifyNotification(try signed(Payloads.notification(type: "REFUND")), now: Fixture.now)
    }

    @Test("a cached chain is not used outside its validity span")
    func cacheRespectsValidity() throws {
        let pki = try PKIs.shortLeaf.get()
        let verifier = try Verifiers.production(cacheSize: 64, roots: [pki.root])
        _ = try verifier.verifyNotification(try pki.sign(Payloads.notification(signedDate: utc(2025, 6, 1))), now: Fixture.now)

        for (date, fragment) in [(utc(2026, 3, 1), "leaf: certificate has expired"),
                                 (utc(2024, 9, 1), "leaf: certificate is not yet valid")] {
            let token = try pki.sign(Payloads.notification(signedDate: date))
            let error = #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(token, now: Fixture.now) }
            #expect(error?.code == .verificationFailure)
            #expect(error?.reason.contains(fragment) == true, "\(error?.reason ?? "")")
        }
    }

    @Test("the cache key includes the intermediate: a cached leaf with another intermediate is validated afresh")
    func cacheKeyIncludesIntermediate() throws {
        let verifier = try Verifiers.production(cacheSize: 64)
        _ = try verifier.verifyNotification(try signed(), now: Fixture.now)
        var chain = Tokens.x5c(try valid())
        chain[1] = try PKIs.foreign.get().intermediate.der.base64EncodedString()
        let token = try Tokens.craft(header: ["alg": "ES256", "x5c": chain], payload: Payloads.notification())
        let error = #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(token, now: Fixture.now) }
        #expect(error?.code == .verificationFailure)
    }

    @Test("a failed chain is never cached: the same failure twice, and a later valid token still verifies")
    func failuresNotCached() throws {
        let foreignToken = try signed(by: { try PKIs.foreign.get() })
        let verifier = try Verifiers.production(cacheSize: 64)
        let first = #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(foreignToken, now: Fixture.now) }
        let second = #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(foreignToken, now: Fixture.now) }
        #expect(first?.code == .verificationFailure)
        #expect(second?.code == first?.code)
        #expect(second?.reason == first?.reason)

        // A chain refused at one signedDate is accepted at another: no negative verdict is remembered.
        let pki = try PKIs.shortLeaf.get()
        let shortVerifier = try Verifiers.production(cacheSize: 64, roots: [pki.root])
        let late = try pki.sign(Payloads.notification(signedDate: utc(2026, 3, 1)))
        #expect(throws: AppStoreVerificationError.self) { try shortVerifier.verifyNotification(late, now: Fixture.now) }
        _ = try shortVerifier.verifyNotification(try pki.sign(Payloads.notification(signedDate: utc(2025, 6, 1))), now: Fixture.now)
        #expect(throws: AppStoreVerificationError.self) { try shortVerifier.verifyNotification(late, now: Fixture.now) }

        // Marker failures are not cached either.
        let unmarked = try PKIs.noLeafMarker.get()
        let unmarkedVerifier = try Verifiers.production(cacheSize: 64, roots: [unmarked.root])
        for _ in 0..<2 {
            let error = #expect(throws: AppStoreVerificationError.self) {
                try unmarkedVerifier.verifyNotification(try unmarked.sign(Payloads.notification()), now: Fixture.now)
            }
            #expect(error?.code == .verificationFailure)
        }
    }

    /// The cache promises "a lookup outside that span is a miss, so caching never changes a verdict". OpenSSL
    /// treats `notAfter` itself as expired while the span `TrustStore.verify` reports (and `ChainCache` tests with
    /// `contains`) includes it, so at exactly the leaf's `notAfter` second a warm cache accepts what a cold one
    /// refuses.
    @Test("caching never changes a verdict, even at the exact second a leaf expires or becomes valid",
          arguments: [utc(2026), utc(2025)])
    func cacheAgreesAtBoundaries(boundary: Date) throws {
        let pki = try PKIs.shortLeaf.get()
        let token = try pki.sign(Payloads.notification(signedDate: boundary))
        let cold = try Verifiers.production(cacheSize: 0, roots: [pki.root])
        let warm = try Verifiers.production(cacheSize: 64, roots: [pki.root])
        _ = try warm.verifyNotification(try pki.sign(Payloads.notification(signedDate: utc(2025, 6, 1))), now: Fixture.now)

        let coldVerdict = verdict { try cold.verifyNotification(token, now: Fixture.now) }
        let warmVerdict = verdict { try warm.verifyNotification(token, now: Fixture.now) }
        #expect(coldVerdict == warmVerdict)
    }

    private func verdict(_ body: () throws -> NotificationPayload) -> String {
        do {
            _ = try body()
            return "accepted"
        } catch {
            return "refused: \(error)"
        }
    }

    @Test("a tiny cache shared by several chains evicts without changing any verdict")
    func smallCacheEviction() throws {
        let a = try valid(), b = try PKIs.shortLeaf.get(), c = try PKIs.foreign.get()
        let verifier = try Verifiers.production(cacheSize: 1, roots: [a.root, b.root, c.root])
        for round in 0..<5 {
            for pki in [a, b, c] {
                let token = try pki.sign(Payloads.notification(uuid: "round-\(round)"))
                #expect(throws: Never.self) { try verifier.verifyNotification(token, now: Fixture.now) }
            }
            let late = try b.sign(Payloads.notification(signedDate: utc(2027)))
            #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(late, now: Fixture.now) }
        }
    }

    @Test("verification is safe to share across concurrent tasks")
    func concurrentVerification() async throws {
        let verifier = try Verifiers.production(cacheSize: 4)
        let good = try signed()
        let bad = try Tokens.flippingSignature(good)
        let outcomes = await withTaskGroup(of: (Bool, Bool).self) { group in
            for index in 0..<64 {
                group.addTask {
                    let token = index % 2 == 0 ? good : bad
                    let accepted = (try? verifier.verifyNotification(token, now: Fixture.now)) != nil
                    return (index % 2 == 0, accepted)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.count == 64)
        #expect(outcomes.allSatisfy { $0.0 == $0.1 })
    }
}
