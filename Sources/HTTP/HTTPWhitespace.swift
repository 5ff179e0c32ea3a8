extension StringProtocol {
    /// Without leading and trailing spaces, tabs, CR and LF: HTTP's optional whitespace around header values
    /// and the line end curl leaves on each header. Header lines are trimmed on every response and request,
    /// and Foundation's `trimmingCharacters` goes through `NSString` on Linux for each.
    public var trimmingHTTPWhitespace: String {
        func isWhitespace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
        }
        let bytes = String(self).utf8
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }),
              let last = bytes.lastIndex(where: { !isWhitespace($0) }) else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
