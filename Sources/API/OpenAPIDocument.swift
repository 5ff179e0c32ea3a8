import Foundation
import Logging

/// The published OpenAPI 3.1 document of the API (`Sources/API/openapi.json`), compiled into the binary and
/// served as it is; a test holds it to the routes.
enum OpenAPIDocument {
    static let text = String(decoding: PackageResources.openapi_json, as: UTF8.self)

    static var answer: APIAnswer { APIAnswer(status: 200, body: .raw(text)) }
}
