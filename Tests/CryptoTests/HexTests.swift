import Crypto
import Foundation
import Testing

@Suite struct HexTests {
    @Test("lowercase, two digits a byte, leading zeros kept", arguments: [
        ([], ""), ([0], "00"), ([0x0f, 0xa0, 0xff], "0fa0ff"), (Array(0...255), nil),
    ] as [([UInt8], String?)])
    func encodes(_ bytes: [UInt8], _ expected: String?) {
        let text = Hex.encode(bytes)
        #expect(text == (expected ?? bytes.map { String(format: "%02x", $0) }.joined()))
        #expect(Hex.encode(Data(bytes)) == text)
    }
}
