import AppStore
import Foundation
import Testing

/// Guards `ConsumptionRequest`: Apple's v2 field names and values on the wire, nothing else sent, and
/// `validate()` refusing exactly what Apple documents as rejected.
@Suite("Consumption request")
struct ConsumptionRequestTests {
    private static func request(consented: Bool = true, delivery: ConsumptionRequest.DeliveryStatus = .delivered,
                                percentage: Int? = nil, preference: ConsumptionRequest.RefundPreference? = nil,
                                type: ConsumptionRequest.ProductType = .autoRenewableSubscription) -> ConsumptionRequest {
        ConsumptionRequest(customerConsented: consented, deliveryStatus: delivery, sampleContentProvided: true,
                           consumptionPercentage: percentage, refundPreference: preference, productType: type)
    }

    private static func json(_ request: ConsumptionRequest) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(request), as: UTF8.self)
    }

    @Test("the JSON carries Apple's field names, omits absent optionals and never the product type")
    func encoding() throws {
        #expect(try Self.json(Self.request(percentage: 100_000, preference: .grantFull, type: .consumable)) ==
            #"{"consumptionPercentage":100000,"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_FULL","sampleContentProvided":true}"#)
        #expect(try Self.json(Self.request(delivery: .undeliveredServerOutage, type: .consumable)) ==
            #"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_SERVER_OUTAGE","sampleContentProvided":true}"#)
    }

    @Test("enum values are Apple's strings")
    func values() {
        #expect(ConsumptionRequest.DeliveryStatus.allCases.map(\.rawValue) == [
            "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER",
        ])
        #expect(ConsumptionRequest.RefundPreference.allCases.map(\.rawValue) == ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"])
        #expect(ConsumptionRequest.ProductType(rawValue: "Auto-Renewable Subscription") == .autoRenewableSubscription)
        #expect(ConsumptionRequest.ProductType(rawValue: "Non-Renewing Subscription") == .nonRenewingSubscription)
    }

    static let accepted: [ConsumptionRequest] = [
        request(),
        request(preference: .decline),
        request(preference: .grantProrated),
        request(delivery: .undeliveredQualityIssue),
        request(delivery: .undeliveredOther, preference: .grantFull),
        request(percentage: 0, type: .consumable),
        request(percentage: 100_000, type: .consumable),
        request(percentage: 42_500, preference: .decline, type: .nonConsumable),
        request(percentage: 42_500, preference: .grantFull, type: .consumable),
        request(preference: .grantFull, type: .nonRenewingSubscription),
        request(percentage: 1, preference: .grantProrated, type: .consumable),
        request(percentage: 30_000, preference: .grantProrated, type: .nonRenewingSubscription),
        request(percentage: 99_999, preference: .grantProrated, type: .nonConsumable),
        request(delivery: .undeliveredWrongItem, percentage: 0, type: .consumable),
        request(delivery: .undeliveredOther, percentage: 0, preference: .grantFull, type: .nonConsumable),
    ]

    @Test("requests Apple accepts pass", arguments: accepted)
    func valid(request: ConsumptionRequest) throws {
        try request.validate()
    }

    static let rejected: [(ConsumptionRequest, String)] = [
        (request(consented: false), "customerConsented must be true"),
        (request(consented: false, percentage: 0, preference: .decline, type: .consumable), "customerConsented must be true"),
        (request(percentage: -1, type: .consumable), "outside 0...100000"),
        (request(percentage: 100_001, type: .consumable), "outside 0...100000"),
        (request(delivery: .undeliveredQualityIssue, percentage: 1, type: .consumable),
         "must be 0 when deliveryStatus is UNDELIVERED_QUALITY_ISSUE"),
        (request(delivery: .undeliveredServerOutage, percentage: 100_000, type: .nonConsumable), "must be 0"),
        (request(percentage: 0), "omit consumptionPercentage on an auto-renewable subscription"),
        (request(percentage: 42_500, preference: .decline), "omit consumptionPercentage on an auto-renewable subscription"),
        (request(percentage: 50_000, preference: .grantProrated), "omit consumptionPercentage on an auto-renewable subscription"),
        (request(preference: .grantProrated, type: .consumable), "GRANT_PRORATED on a Consumable needs a consumptionPercentage"),
        (request(percentage: 0, preference: .grantProrated, type: .nonConsumable), "between 1 and 99999, got 0"),
        (request(percentage: 100_000, preference: .grantProrated, type: .nonRenewingSubscription), "got 100000"),
        (request(delivery: .undeliveredOther, percentage: 0, preference: .grantProrated, type: .consumable), "got 0"),
    ]

    @Test("requests Apple rejects fail with the rule they break", arguments: rejected)
    func invalid(request: ConsumptionRequest, fragment: String) {
        let error = #expect(throws: AppStoreAPIError.self) { try request.validate() }
        #expect(error?.code == .invalidRequest)
        #expect(error?.isRetryable == false)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "")")
    }
}
