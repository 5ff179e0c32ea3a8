@testable import Simulator
import Testing

struct QueryItemsTests {
    @Test(arguments: [
        ("a=1&b=2", [("a", "1"), ("b", "2")]),
        ("status=1&status=2", [("status", "1"), ("status", "2")]),
        ("q=hello+world", [("q", "hello world")]),
        ("%41%62=%2B%26%3D", [("Ab", "+&=")]),
        ("name=caf%C3%A9", [("name", "café")]),
        ("flag&empty=", [("flag", ""), ("empty", "")]),
        ("&&a=1&", [("a", "1")]),
    ] as [(String, [(String, String)])])
    func decodesFormEncodedPairsInOrder(query: String, expected: [(String, String)]) throws {
        let items = try #require(QueryItems(query)).items
        #expect(items.map(\.name) == expected.map(\.0))
        #expect(items.map(\.value) == expected.map(\.1))
    }

    @Test(arguments: ["a=%zz", "a=%4", "a=%", "%G1=x", "a=%ff", "a=%C3"])
    func aBadEscapeOrBytesThatAreNotUTF8RejectTheQuery(query: String) {
        #expect(QueryItems(query) == nil)
    }

    @Test func aQueryOverTheLimitIsRejected() {
        #expect(QueryItems("a=" + String(repeating: "x", count: QueryItems.maxLength)) == nil)
    }
}
