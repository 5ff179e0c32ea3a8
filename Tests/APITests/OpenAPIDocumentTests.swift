import API
import Foundation
import HTTP
import Metrics
import Sync
import TestSupport
import Testing

/// `GET /api/v1/mobile-stores/openapi.json`: the published OpenAPI 3.1 document is the repository's, served as
/// it is, and it describes exactly the routes the API serves: no endpoint undocumented, none documented that
/// is not there.
@Suite struct OpenAPIDocumentTests {
    static let path = "/api/v1/mobile-stores/openapi.json"
    static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// `Sources/API/openapi.json` as the repository holds it.
    static var repositoryDocument: Data {
        get throws {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../Sources/API/openapi.json").standardizedFileURL
            return try Data(contentsOf: url)
        }
    }

    /// The served document, parsed.
    static func served(_ api: APIHarness) async throws -> [String: Any] {
        let answer = try await api.send("GET", path)
        try #require(answer.status == 200, "\(answer.text)")
        return try answer.json
    }

    /// The routes of an API built as `serve` builds it, as `METHOD pattern`.
    static func routedEndpoints(_ api: APIHarness) async throws -> Set<String> {
        let http = try HTTPClient()
        let routes = MobileStoresAPI(pool: api.database.pool, registrar: PurchaseRegistrar(http: http),
                                     metrics: MetricsRegistry()).endpoints
        await http.shutdown()
        #expect(Set(routes).count == routes.count, "a route is listed twice: \(routes)")
        return Set(routes)
    }

    /// The document's operations, as `METHOD path`.
    static func documentedEndpoints(_ document: [String: Any]) throws -> Set<String> {
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var endpoints: Set<String> = []
        for (path, item) in paths {
            for key in item.keys where methods.contains(key) {
                #expect(key == key.lowercased())
                endpoints.insert("\(key.uppercased()) \(path)")
            }
        }
        return endpoints
    }

    /// Open: a client may read the document before it has a token; it spends no account's budget.
    @Test func isServedWithoutATokenAsOpenAPI31JSON() async throws {
        try await APIHarness.with { api in
            let answer = try await api.send("GET", Self.path)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.header("content-type") == "application/json")
            #expect(answer.header("x-ratelimit-limit") == nil)
            let json = try answer.json
            #expect(json["openapi"] as? String == "3.1.0")
            #expect((json["info"] as? [String: Any])?["version"] as? String == "1.0.0", "the reference's version")
        }
    }

    /// The served document is the repository's file, so reviewing the file is reviewing what clients get.
    @Test func isTheRepositorysDocument() async throws {
        try await APIHarness.with { api in
            let answer = try await api.send("GET", Self.path)
            let file = try Self.repositoryDocument
            let parsed = try #require(try JSONSerialization.jsonObject(with: file) as? NSDictionary)
            let served = try #require(try JSONSerialization.jsonObject(with: answer.body) as? NSDictionary)
            #expect(served.isEqual(parsed))
            #expect(answer.body == file, "served byte for byte")
        }
    }

    /// Every routed endpoint is documented with its lowercase method, and nothing else is documented.
    @Test func documentsExactlyTheRoutedEndpoints() async throws {
        try await APIHarness.with { api in
            let routed = try await Self.routedEndpoints(api)
            #expect(routed.contains("POST /oauth/token"))
            #expect(routed.contains("GET \(Self.path)"))
            let documented = try Self.documentedEndpoints(try await Self.served(api))
            #expect(routed.subtracting(documented).isEmpty, "routed, undocumented: \(routed.subtracting(documented).sorted())")
            #expect(documented.subtracting(routed).isEmpty, "documented, not routed: \(documented.subtracting(routed).sorted())")
        }
    }

    /// Each `{name}` of a path is declared once as a required path parameter of each of its operations, and no
    /// operation declares a path parameter its path does not have.
    @Test func declaresEveryPathParameter() async throws {
        try await APIHarness.with { api in
            let paths = try #require(try await Self.served(api)["paths"] as? [String: [String: Any]])
            for (path, item) in paths {
                let templated = path.split(separator: "/").filter { $0.hasPrefix("{") && $0.hasSuffix("}") }
                    .map { String($0.dropFirst().dropLast()) }
                let shared = item["parameters"] as? [[String: Any]] ?? []
                for (method, value) in item where Self.methods.contains(method) {
                    let operation = try #require(value as? [String: Any])
                    let parameters = shared + (operation["parameters"] as? [[String: Any]] ?? [])
                    let inPath = parameters.filter { $0["in"] as? String == "path" }
                    #expect(inPath.compactMap { $0["name"] as? String }.sorted() == templated.sorted(), "\(method) \(path)")
                    #expect(inPath.allSatisfy { $0["required"] as? Bool == true }, "\(method) \(path)")
                    #expect(operation["responses"] as? [String: Any] != nil, "\(method) \(path) has no responses")
                }
            }
        }
    }

    /// Every `$ref` names something the document defines.
    @Test func everyReferenceResolves() async throws {
        try await APIHarness.with { api in
            let document = try await Self.served(api)
            var references: [String] = []
            func collect(_ value: Any) {
                if let object = value as? [String: Any] {
                    if let ref = object["$ref"] as? String { references.append(ref) }
                    object.values.forEach(collect)
                } else if let array = value as? [Any] {
                    array.forEach(collect)
                }
            }
            collect(document)
            #expect(!references.isEmpty)
            for reference in Set(references) {
                #expect(reference.hasPrefix("#/"), "\(reference) is not internal")
                var node: Any? = document
                for part in reference.dropFirst(2).split(separator: "/") {
                    let key = part.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
                    node = (node as? [String: Any])?[key]
                }
                #expect(node != nil, "\(reference) resolves to nothing")
            }
        }
    }
}
