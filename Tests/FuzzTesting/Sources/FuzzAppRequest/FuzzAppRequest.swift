// libFuzzer harness over what the Mobile Stores API's app endpoints parse from a request before anything reaches
// the database: the account token pair's headers (`AppCredentialHeaders`) and the purchase report's JSON body
// (`ClientPurchaseRequest`, through the strict reader and the field rules). An input is header lines
// (`name: value`, one per line) up to the first blank line, then the body.
//
// Besides crashes and sanitizer reports, the harness traps when a rule of the endpoint breaks: a body is either
// a report naming one purchase of its store within the identifiers' bounds, or a 400/415/422 with a message (the
// 422's being its first field's first message); a kept token is a lowercase UUID and a kept secret printable
// ASCII of at most 256 bytes.

import API
import CFuzzSupport
import Foundation
import HTTP
import Sync

private func request(from bytes: UnsafeBufferPointer<UInt8>) -> HTTPRequest {
    let data = Array(bytes)
    let separator = data.indices.first { $0 + 1 < data.count && data[$0] == 0x0a && data[$0 + 1] == 0x0a }
    let head = separator.map { Array(data[..<$0]) } ?? []
    let body = separator.map { Data(data[($0 + 2)...]) } ?? Data(data)
    var headers: [(name: String, value: String)] = []
    for line in head.split(separator: 0x0a) {
        let text = String(decoding: line, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { continue }
        headers.append((String(text[..<colon]), String(text[text.index(after: colon)...])))
    }
    if !headers.contains(where: { $0.name.lowercased() == "content-type" }) {
        headers.append(("content-type", "application/json"))
    }
    return HTTPRequest(method: "POST", path: "/api/v1/mobile-stores/client/purchases", headers: headers, body: body)
}

private func check(_ request: HTTPRequest) {
    let credentials = AppCredentialHeaders(request)
    if let token = credentials.token, token.count != 36 || token != token.lowercased() || UUID(uuidString: token) == nil {
        fatalError("FuzzAppRequest: kept a token that is no lowercase UUID: \(token.debugDescription)")
    }
    if let secret = credentials.secret, !(1...256).contains(secret.utf8.count) || !secret.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) {
        fatalError("FuzzAppRequest: kept a secret out of bounds: \(secret.utf8.count) bytes")
    }
    do {
        let report = try ClientPurchaseRequest(request)
        switch (report.store, report.purchase) {
        case ("apple", .appleTransaction(let id)) where (1...64).contains(id.count): break
        case ("google_play", .googlePurchaseToken(let token)) where (1...2048).contains(token.count): break
        default: fatalError("FuzzAppRequest: a report of \(report.store) named \(report.purchase)")
        }
        if let connection = report.connectionID, connection < 1 { fatalError("FuzzAppRequest: connection_id \(connection)") }
    } catch {
        guard [400, 415, 422].contains(error.status), !error.message.isEmpty else {
            fatalError("FuzzAppRequest: refused with \(error.status) \(error.message.debugDescription)")
        }
        if error.status == 422, error.errors.first?.messages.first != error.message {
            fatalError("FuzzAppRequest: a 422's message \(error.message.debugDescription) is not its first field's first")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppRequestTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    check(request(from: UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)))
    return 0
}

/// The program's entry (SwiftPM links executables with `--defsym main=FuzzAppRequest_main`); see CFuzzSupport.h.
@_cdecl("FuzzAppRequest_main")
public func fuzzAppRequestMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzzAppRequestTestOneInput($0, $1) }
}
