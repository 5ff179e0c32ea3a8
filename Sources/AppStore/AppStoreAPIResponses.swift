import StrictJSON

extension AppStoreAPIClient {
    /// `StatusResponse`, as Apple documents it.
    struct StatusResponse: JSONReadable {
        var environment: AppStoreEnvironment?
        var bundleId: String?
        var appAppleId: Int64?
        var data: [Group]?

        struct Group: JSONReadable {
            var subscriptionGroupIdentifier: String?
            var lastTransactions: [Item]?

            init(json reader: inout JSONReader) throws {
                try reader.readObject { reader, key in
                    switch key {
                    case "subscriptionGroupIdentifier": subscriptionGroupIdentifier = try reader.readString()
                    case "lastTransactions": lastTransactions = try reader.readList(Item.self)
                    default: try reader.skipValue()
                    }
                }
            }
        }

        struct Item: JSONReadable {
            var status: Int?
            var originalTransactionId: String?
            var signedTransactionInfo: String?
            var signedRenewalInfo: String?

            init(json reader: inout JSONReader) throws {
                try reader.readObject { reader, key in
                    switch key {
                    case "status": status = try reader.readInt()
                    case "originalTransactionId": originalTransactionId = try reader.readString()
                    case "signedTransactionInfo": signedTransactionInfo = try reader.readString()
                    case "signedRenewalInfo": signedRenewalInfo = try reader.readString()
                    default: try reader.skipValue()
                    }
                }
            }
        }

        init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "environment": environment = try reader.readEnvironment()
                case "bundleId": bundleId = try reader.readString()
                case "appAppleId": appAppleId = try reader.readInt64()
                case "data": data = try reader.readList(Group.self)
                default: try reader.skipValue()
                }
            }
        }
    }

    /// `HistoryResponse`, as Apple documents it (only the fields the mirror reads).
    struct HistoryResponse: JSONReadable {
        var revision: String?
        var hasMore: Bool?
        var signedTransactions: [String]?

        init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "revision": revision = try reader.readString()
                case "hasMore": hasMore = try reader.readBool()
                case "signedTransactions": signedTransactions = try reader.readStrings()
                default: try reader.skipValue()
                }
            }
        }
    }
}

/// `NotificationHistoryResponse`, as Apple documents it.
struct NotificationHistoryResponse: JSONReadable {
    struct Item: JSONReadable {
        var signedPayload: String?

        init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "signedPayload": signedPayload = try reader.readString()
                default: try reader.skipValue()
                }
            }
        }
    }

    var notificationHistory: [Item]?
    var hasMore: Bool?
    var paginationToken: String?

    init(json reader: inout JSONReader) throws {
        try reader.readObject { reader, key in
            switch key {
            case "notificationHistory": notificationHistory = try reader.readList(Item.self)
            case "hasMore": hasMore = try reader.readBool()
            case "paginationToken": paginationToken = try reader.readString()
            default: try reader.skipValue()
            }
        }
    }
}
