import Foundation
import GooglePlay
import Testing

/// What a purchase keeps of `json` for on-call.
private func kept(_ json: String) throws -> String {
    String(decoding: try SubscriptionPurchaseV2(json: Data(json.utf8)).json, as: UTF8.self)
}

/// Guards the JSON a purchase keeps for on-call (`SubscriptionPurchaseV2.json`): Google's answer without the
/// whitespace between tokens and byte for byte otherwise — whitespace, escapes and non-ASCII inside strings kept —
/// and an answer that is compact already kept exactly as it came.
@Suite("Compact JSON")
struct CompactJSONTests {
    @Test("whitespace between tokens goes, whatever its kind; strings keep theirs", arguments: [
        ("{ \"kind\" : \"a b\" ,\n\t\"regionCode\":\r\n\"US\" }\n", #"{"kind":"a b","regionCode":"US"}"#),
        (#"{"kind":"a\" b \\", "regionCode" : "\"  \""}"#, #"{"kind":"a\" b \\","regionCode":"\"  \""}"#),
        ("{\"kind\": \"é €\\u0020😀\", \"lineItems\": [ ] , \"x\" : [ 1 , 2.5e3 , true , null , { } ] }",
         "{\"kind\":\"é €\\u0020😀\",\"lineItems\":[],\"x\":[1,2.5e3,true,null,{}]}"),
        ("  {}  ", "{}"),
        (#"{"kind":"\\","regionCode":"\\\\" }"#, #"{"kind":"\\","regionCode":"\\\\"}"#),
    ])
    func prettyPrinted(json: String, compact: String) throws {
        #expect(try kept(json) == compact)
    }

    @Test("an answer that is compact already is kept exactly", arguments: [
        #"{"kind":"androidpublisher#subscriptionPurchaseV2","lineItems":[{"productId":"p q"}],"futureField":{"kept":true}}"#,
        #"{}"#, #"{"kind":"tab\tand newline\n escaped, quote \" and backslash \\"}"#,
    ])
    func alreadyCompact(json: String) throws {
        #expect(try kept(json) == json)
    }

    @Test("Google's pretty-printed answer keeps every field, unknown ones included, compacted")
    func prettyAnswer() throws {
        let pretty = Play.subscription()
        let object = try JSONSerialization.jsonObject(with: pretty)
        let compact = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        let purchase = try SubscriptionPurchaseV2(json: pretty)
        #expect(pretty.contains(UInt8(ascii: "\n")))
        #expect(!purchase.json.contains(UInt8(ascii: "\n")))
        #expect(purchase.json.count < pretty.count)
        #expect(try JSONSerialization.jsonObject(with: purchase.json) as? NSDictionary == object as? NSDictionary)
        #expect(Play.text(try SubscriptionPurchaseV2(json: compact).json) == Play.text(compact))
    }
}
