import Foundation
import Testing

/// A command's `--json` output as one JSON object; the test fails, quoting it, when it is anything else.
func jsonObject(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
}
