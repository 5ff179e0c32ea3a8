import HTTP

/// What every credential and store identifier the API accepts is made of: visible ASCII, no space and no
/// control byte. A header or field with anything else cannot be one, so it is refused before any lookup.
enum VisibleASCII {
    static func contains(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7f }

    /// `value` without HTTP's surrounding whitespace, when that is 1…`maxLength` visible ASCII bytes.
    static func bounded(_ value: some StringProtocol, maxLength: Int) -> String? {
        let trimmed = value.trimmingHTTPWhitespace
        guard (1...maxLength).contains(trimmed.utf8.count), trimmed.utf8.allSatisfy(contains) else { return nil }
        return trimmed
    }
}
