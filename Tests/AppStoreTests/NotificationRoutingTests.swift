import AppStore
import Crypto
import Foundation
import Testing

/// Routing reads the unverified claims that pick a connection; anything it cannot read is an invalid format.
@Suite struct NotificationRoutingTests {
    @Test("signedPayload comes out of a webhook body, or the body is refused", arguments: [
        (#"{"signedPayload":"a.b.c"}"#, "a.b.c"),
        (#"{"other":[1,{"x":null}],"signedPayload":"a.b.c"}"#, "a.b.c"),
        (#"{}"#, nil), (#"{"signedPayload":""}"#, nil), (#"{"signedPayload":1}"#, nil), (#"[]"#, nil),
        (#"{"signedPayload":"a.b.c"} x"#, nil), ("", nil),
    ] as [(String, String?)])
    func body(_ body: String, _ expected: String?) throws {
        guard let expected else {
            #expect { try NotificationRouting.signedPayload(fromBody: Data(body.utf8)) } throws: {
                ($0 as? AppStoreVerificationError)?.code == .invalidFormat
            }
            return
        }
        #expect(try NotificationRouting.signedPayload(fromBody: Data(body.utf8)) == expected)
    }

    static func token(_ payload: String) -> String {
        [#"{"alg":"ES256"}"#, payload, "sig"].map { Base64URL.encode(Data($0.utf8)) }.joined(separator: ".")
    }

    @Test("the claims come from data, else summary, externalPurchaseToken or appData, as the verifier reads them",
          arguments: [
        (#"{"data":{"bundleId":"a.b","environment":"Sandbox","appAppleId":7}}"#, "a.b", "Sandbox", 7),
        (#"{"data":null,"summary":{"bundleId":"s.b","environment":"Production"}}"#, "s.b", "Production", nil),
        (#"{"externalPurchaseToken":{"bundleId":"e.b"},"appData":{"bundleId":"d.b"}}"#, "e.b", "Production", nil),
        (#"{"appData":{"bundleId":"d.b","environment":"Sandbox"},"summary":{"bundleId":"s.b"}}"#, "s.b", nil, nil),
        (#"{"appData":{"bundleId":"d.b","environment":"Sandbox"}}"#, "d.b", "Sandbox", nil),
        (#"{"externalPurchaseToken":{"bundleId":"e.b","externalPurchaseId":"SANDBOX_1","appAppleId":4}}"#, "e.b", "Sandbox", 4),
        (#"{"externalPurchaseToken":{"bundleId":"e.b","externalPurchaseId":"4f1c"}}"#, "e.b", "Production", nil),
        (#"{"notificationType":"TEST","data":{"bundleId":"a.b","status":1,"x":[{}]}}"#, "a.b", nil, nil),
    ] as [(String, String, String?, Int64?)])
    func claims(_ payload: String, _ bundle: String, _ environment: String?, _ appAppleID: Int64?) throws {
        let routing = try NotificationRouting(unverified: Self.token(payload))
        #expect(routing.bundleID == bundle)
        #expect(routing.environment?.rawValue == environment)
        #expect(routing.appAppleID == appAppleID)
    }

    @Test("the notificationUUID and the enclosed transaction's lineage are read as claims, or left nil", arguments: [
        (#"{"notificationUUID":"u-1","data":{"bundleId":"a.b","signedTransactionInfo":"TX"}}"#, "u-1", "1000"),
        (#"{"data":{"bundleId":"a.b","signedTransactionInfo":"TX"}}"#, nil, "1000"),
        (#"{"notificationUUID":"u-2","data":{"bundleId":"a.b"}}"#, "u-2", nil),
        (#"{"notificationUUID":"u-3","data":{"bundleId":"a.b","signedTransactionInfo":"not a token"}}"#, "u-3", nil),
        (#"{"notificationUUID":null,"summary":{"bundleId":"a.b","signedTransactionInfo":"TX"}}"#, nil, nil),
    ] as [(String, String?, String?)])
    func lookupClaims(_ payload: String, _ uuid: String?, _ lineage: String?) throws {
        let transaction = Self.token(#"{"originalTransactionId":"1000","transactionId":"1001"}"#)
        let routing = try NotificationRouting(unverified: Self.token(payload.replacingOccurrences(of: "\"TX\"", with: "\"\(transaction)\"")))
        #expect(routing.notificationUUID == uuid)
        #expect(routing.lineage == lineage)
    }

    @Test("a payload without a readable bundle id is an invalid format", arguments: [
        #"{}"#, #"{"data":{}}"#, #"{"data":{"bundleId":""}}"#, #"{"data":{"bundleId":5}}"#, #"{"data":"x"}"#, "not json",
        #"{"data":{"bundleId":"\u0000x"}}"#, #"{"data":{"bundleId":"a.b\n"}}"#,
    ])
    func refused(_ payload: String) {
        #expect { try NotificationRouting(unverified: Self.token(payload)) } throws: {
            ($0 as? AppStoreVerificationError)?.code == .invalidFormat
        }
    }
}
