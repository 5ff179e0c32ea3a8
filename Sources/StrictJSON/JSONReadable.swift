/// A value read from JSON by `JSONReader`, as every App Store and Google Play payload and API answer is:
/// Foundation's `JSONDecoder` cost more than the rest of reading an answer. Public, with the list readers below,
/// so both stores' modules read nested arrays of their types the same way from one copy.
public protocol JSONReadable {
    init(json reader: inout JSONReader) throws
}

extension JSONReader {
    /// An array of objects, or nil for `null`.
    public mutating func readList<T: JSONReadable>(_ type: T.Type) throws -> [T]? {
        try readOptional { reader in
            var list: [T] = []
            try reader.readArray { list.append(try T(json: &$0)) }
            return list
        }
    }

    /// An array of strings (a `null` element is refused), or nil for `null`.
    public mutating func readStrings() throws -> [String]? {
        try readOptional { reader in
            var list: [String] = []
            try reader.readArray { reader in
                // Checked before reading: once `null` is consumed, the mismatch would be judged on what follows it.
                guard try reader.peekKind() != .null, let string = try reader.readString() else {
                    throw reader.mismatch(expected: "a string")
                }
                list.append(string)
            }
            return list
        }
    }
}
