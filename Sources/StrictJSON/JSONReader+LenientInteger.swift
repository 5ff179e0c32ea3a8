extension JSONReader {
    /// Longest decimal string `readLenientInteger` reads: an Int64 with its sign is 20 bytes, so longer text is
    /// not one, and bounding it keeps the parse and the message short whatever a document holds.
    public static let maxIntegerStringLength = 24

    /// An integer sent as a JSON number or as a decimal string, or nil for `null`. proto3's JSON mapping, which
    /// Google's APIs follow, writes 64-bit integers as strings (and accepts numbers), and Google's own examples
    /// send some 32-bit fields either way. The number must be an exact integer (as `readInt64` reads it); the
    /// string an optional sign and decimal digits, at most `maxIntegerStringLength` bytes; either must fit `T`.
    public mutating func readLenientInteger<T: FixedWidthInteger & SignedInteger>(_ type: T.Type) throws -> T? {
        switch try peekKind() {
        case .string:
            let expected = "an integer (\(T.self)) as a decimal string of at most \(Self.maxIntegerStringLength) bytes"
            return try readString(expected: expected) {
                $0.utf8.count <= Self.maxIntegerStringLength ? T($0) : nil
            }
        case .number, .null:
            let start = index
            guard let value = try readInt64() else { return nil }
            guard let integer = T(exactly: value) else {
                throw JSONReaderError(.invalidValue, "\(value) is out of the \(T.self) range", offset: start)
            }
            return integer
        case .bool, .object, .array:
            throw mismatch(expected: "an integer or a decimal string")
        }
    }
}
