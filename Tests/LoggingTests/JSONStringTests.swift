import Logging
import Testing

struct JSONStringTests {
    /// Every byte the scan must catch, and neighbours it must not, at every position of a word and across
    /// the tail: the fast path copies whole strings only when none of them needs escaping.
    @Test(arguments: [0x00, 0x01, 0x0a, 0x1f, 0x22, 0x5c] as [UInt8])
    func anEscapableByteIsEscapedWhereverItSits(byte: UInt8) {
        for length in 1...19 {
            for position in 0..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                bytes[position] = byte
                let value = String(decoding: bytes, as: UTF8.self)
                #expect(JSON.quoted(value) == reference(value), "length \(length), byte at \(position)")
            }
        }
    }

    @Test(arguments: [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f] as [UInt8])
    func bytesNextToTheEscapedOnesAreCopiedAsTheyAre(byte: UInt8) {
        let value = String(decoding: [UInt8](repeating: byte, count: 21), as: UTF8.self)
        #expect(JSON.quoted(value) == "\"" + value + "\"")
    }

    @Test func multiByteCharactersAreCopiedAndTheEscapesAroundThemKept() {
        let value = "prix: 9,99 € \"TTC\"\n日本\\"
        #expect(JSON.quoted(value) == #""prix: 9,99 € \"TTC\"\n日本\\""#)
    }

    /// RFC 8259 §7, one scalar at a time.
    private func reference(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
