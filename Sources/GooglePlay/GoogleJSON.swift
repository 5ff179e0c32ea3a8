import Foundation
import StrictJSON

/// How Google's JSON is read: with `JSONReader`, as Apple's is. Times are RFC 3339 strings (`readGoogleTime`),
/// 64-bit integers decimal strings or numbers (Google's JSON mapping of `int64`: `readLenientInteger`), and some
/// 32-bit enums arrive as strings in its own examples (`readLenientInteger` too). Every reader of Google's answers
/// and notifications goes through these so all accept the same spellings.
enum GoogleJSON {
    /// `json` without the whitespace between tokens (Google pretty-prints by default), byte for byte otherwise:
    /// what is kept for on-call is what Google sent. `json` must be valid JSON.
    static func compact(_ json: Data) -> Data {
        var result = Data(capacity: json.count)
        var inString = false
        var escaped = false
        for byte in json {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                continue
            }
            result.append(byte)
        }
        return result
    }
}

extension JSONReader {
    /// Google's `google-datetime` (RFC 3339, see `GoogleTimestamp`), or nil for `null`.
    mutating func readGoogleTime() throws -> Date? {
        try readString(expected: "an RFC 3339 time", GoogleTimestamp.parse)
    }

    /// Reads a `oneof` object (`offerPhase`, `canceledStateContext`), handing each member to `member` to read
    /// or skip, and returns which case it holds: the key whose value is not `null` (the first in sorted order,
    /// should Google ever send more than one; a repeated key counts by its last value). nil for `null`, or for an
    /// object with no such key.
    mutating func readOneof(_ member: (inout JSONReader, JSONKey) throws -> Void) throws -> String? {
        try readOptional { reader in
            var present = Set<String>()
            try reader.readObject { reader, key in
                if try reader.peekKind() == .null {
                    present.remove(key.description)
                } else {
                    present.insert(key.description)
                }
                try member(&reader, key)
            }
            return present.min()
        } ?? nil
    }
}
