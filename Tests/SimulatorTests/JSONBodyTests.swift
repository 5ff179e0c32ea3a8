import Foundation
@testable import Simulator
import Testing

struct JSONBodyTests {
    /// What the simulator signs must be byte-stable: keys sorted at every level, each value in its JSON form.
    @Test func writesSortedKeysAndEveryValueShape() throws {
        let missing: String? = nil
        let object: [String: Any] = [
            "zeta": [1, "two", true, NSNull(), ["b": 2, "a": 1] as [String: Any]] as [Any],
            "alpha": "a \"quoted\" line\n/slash",
            "flag": false, "count": 42, "big": Int64(9_007_199_254_740_993), "small": Int32(-7),
            "price": 9.5, "present": Optional("x") as Any, "absent": missing as Any, "empty": [String: Any](),
        ]
        let json = try JSONBody.string(object)
        #expect(json == #"{"absent":null,"alpha":"a \"quoted\" line\n/slash","big":9007199254740993,"count":42,"#
            + #""empty":{},"flag":false,"present":"x","price":9.5,"small":-7,"zeta":[1,"two",true,null,{"a":1,"b":2}]}"#)
    }

    @Test func aValueWithNoJSONFormIsRefused() {
        #expect(throws: SimulatorError.self) { try JSONBody.encode(["when": Date()]) }
    }
}
