// libFuzzer harness over StoreSync's JWS / JSON decoding path: `CompactJWS`, `Base64URL`, `JSONWebKeySet` and
// `SignedDataVerifier` (notification, transaction, renewal info), with a locally generated Apple-shaped PKI so
// that mutated payloads also get past the signature and chain checks and reach payload decoding and the
// bundle / environment checks.
//
// Each input is used in these ways (bounded: at most three ES256 signatures and twelve verifications per input; each
// token goes to the `verify…` calls whose marker key its payload holds, else to one picked by payload length):
//
// 1. as text (UTF-8, lossy): `CompactJWS`, `Base64URL.decode`, `SignedDataVerifier.verify…`; as bytes: `JSONWebKeySet`;
// 2. if the text has exactly three dot-separated parts: re-signed with the PKI's leaf key
//    (`part0.part1.<real signature>`), and re-headed (`<PKI header>.part1.<real signature>`), both verified;
// 3. if the bytes contain a NUL: `header-JSON NUL payload-JSON`. An empty header means "sign the payload as the
//    App Store does" (as `LocalApplePKI.sign` would); otherwise the header bytes are used verbatim (after replacing the
//    placeholders `@PKI@`, `@LEAF@`, `@INTERMEDIATE@`, `@ROOT@` with quoted base64 certificates of the PKI) and the
//    token is signed with the leaf key. Both are verified.
//
// `FUZZJWS_WRITE_SEEDS=<dir>` writes seed inputs to <dir> and exits instead of fuzzing.

import AppStore
import CFuzzSupport
import Crypto
import Foundation
import TestPKI

private struct Harness: Sendable {
    static let bundleID = "com.example.storesync.fuzz"

    let pki: LocalApplePKI
    let verifier: SignedDataVerifier
    /// Header placeholder → the PKI's certificate(s) as quoted base64 strings, ready to sit inside an `x5c` array.
    let placeholders: [(String, String)]
    /// `base64url({"alg":"ES256","x5c":[leaf, intermediate, root]})`: the header `LocalApplePKI.sign` writes.
    let encodedHeader: String

    init() {
        do {
            // Valid from 2000 to 2100, so the signedDate of committed seeds stays inside the chain's validity.
            var options = LocalApplePKI.Options()
            options.validity = Date(timeIntervalSince1970: 946_684_800)...Date(timeIntervalSince1970: 4_102_444_800)
            pki = try LocalApplePKI.generate(options)
            verifier = try SignedDataVerifier(roots: [pki.root], bundleID: Self.bundleID, appAppleID: 1_234_567_890,
                                              environment: .sandbox)
        } catch {
            fatalError("FuzzJWS: cannot set up the PKI and verifier: \(error)")
        }
        let quoted = [pki.leaf, pki.intermediate, pki.root].map { "\"\($0.der.base64EncodedString())\"" }
        placeholders = [("@PKI@", quoted.joined(separator: ",")), ("@LEAF@", quoted[0]),
                        ("@INTERMEDIATE@", quoted[1]), ("@ROOT@", quoted[2])]
        encodedHeader = Base64URL.encode(Data("{\"alg\":\"ES256\",\"x5c\":[\(quoted.joined(separator: ","))]}".utf8))
        guard let sample = try? pki.sign(Data("{}".utf8)), sample.hasPrefix(encodedHeader + ".") else {
            fatalError("FuzzJWS: LocalApplePKI.sign no longer writes the header this harness assumes")
        }
    }

    /// `FUZZJWS_VERBOSE=1`: print each verification's outcome, to check what a seed reaches.
    static let verbose = ProcessInfo.processInfo.environment["FUZZJWS_VERBOSE"] == "1"

    enum Kind: Int, CaseIterable {
        case notification, transaction, renewal
    }

    /// Which `verify…` calls a payload is worth: those whose marker key it contains, else one picked by its length.
    /// Parsing a token with a three-certificate `x5c` dominates the cost of an input, so calling all three
    /// verifiers on every token would cut the execution rate by about three for little extra coverage.
    static func kinds(for payload: Data?) -> [Kind] {
        guard let payload else { return [.notification] }  // the token fails before its payload is decoded
        var kinds: [Kind] = []
        if payload.range(of: Data("\"notificationType\"".utf8)) != nil { kinds.append(.notification) }
        if payload.range(of: Data("\"transactionId\"".utf8)) != nil { kinds.append(.transaction) }
        if payload.range(of: Data("\"autoRenew".utf8)) != nil { kinds.append(.renewal) }
        return kinds.isEmpty ? [Kind(rawValue: payload.count % 3)!] : kinds
    }

    func verify(_ token: String, payload: Data?) {
        for kind in Self.kinds(for: payload) {
            let result: Result<Any, any Error> = switch kind {
            case .notification: Result { try verifier.verifyNotification(token) }
            case .transaction: Result { try verifier.verifyTransaction(token) }
            case .renewal: Result { try verifier.verifyRenewalInfo(token) }
            }
            if Self.verbose {
                let outcome = switch result {
                case .success: "verified"
                case .failure(let error): "\(error)"
                }
                FileHandle.standardError.write(Data("FuzzJWS: \(kind) (\(token.utf8.count) bytes): \(outcome)\n".utf8))
            }
        }
    }

    /// `signingInput.<ES256 signature by the PKI's leaf>`.
    func signed(_ signingInput: String) -> String? {
        guard let signature = try? SignatureAlgorithm.es256.sign(Data(signingInput.utf8), with: pki.leafKey) else {
            return nil
        }
        return signingInput + "." + Base64URL.encode(signature)
    }

    func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        let data = Data(bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let payload = parts.count == 3 ? try? Base64URL.decode(utf8: parts[1]) : nil

        // 1. The input as it is.
        _ = try? CompactJWS(text)
        _ = try? Base64URL.decode(text)
        _ = try? JSONWebKeySet(json: data)
        verify(text, payload: payload)

        // 2. A token with a signature that matches, under its own header and under the PKI's (when its payload
        //    decodes; otherwise both fail exactly as the input did).
        if let payload {
            let encodedPayload = String(decoding: parts[1], as: UTF8.self)
            if (try? Base64URL.decode(utf8: parts[0])) != nil,
               let token = signed(String(decoding: parts[0], as: UTF8.self) + "." + encodedPayload) {
                verify(token, payload: payload)
            }
            if let token = signed(encodedHeader + "." + encodedPayload) { verify(token, payload: payload) }
        }

        // 3. `header NUL payload`: JSON documents encoded and signed here.
        if let nul = bytes.firstIndex(of: 0) {
            let header = Data(bytes[..<nul]), payload = Data(bytes[(nul + 1)...])
            if header.isEmpty {
                // What `pki.sign(payload)` produces, without re-encoding the same 2.5 KB header for every input
                // (that alone took a third of the time per input); `writeSeeds` goes through `pki.sign` itself.
                if let token = signed(encodedHeader + "." + Base64URL.encode(payload)) { verify(token, payload: payload) }
            } else {
                var headerText = String(decoding: header, as: UTF8.self)
                for (placeholder, value) in placeholders where headerText.contains(placeholder) {
                    headerText = headerText.replacingOccurrences(of: placeholder, with: value)
                }
                let input = Base64URL.encode(Data(headerText.utf8)) + "." + Base64URL.encode(payload)
                if let token = signed(input) { verify(token, payload: payload) }
            }
        }
    }

    /// Seeds for `corpus/jws/`: App Store shaped payloads in every input form above, plus malformed tokens.
    func writeSeeds(to directory: URL) throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let transaction = """
            {"transactionId":"2000000123456789","originalTransactionId":"2000000123456789","bundleId":"\(Self.bundleID)",\
            "productId":"com.example.monthly","purchaseDate":\(now),"expiresDate":\(now + 2_592_000_000),"quantity":1,\
            "type":"Auto-Renewable Subscription","inAppOwnershipType":"PURCHASED","signedDate":\(now),\
            "environment":"Sandbox","storefront":"USA","transactionReason":"PURCHASE","price":9990,"currency":"USD"}
            """
        let renewal = """
            {"originalTransactionId":"2000000123456789","autoRenewProductId":"com.example.monthly",\
            "productId":"com.example.monthly","autoRenewStatus":1,"signedDate":\(now),"environment":"Sandbox",\
            "renewalDate":\(now + 2_592_000_000),"renewalPrice":9990,"currency":"USD"}
            """
        let notification = """
            {"notificationType":"SUBSCRIBED","subtype":"INITIAL_BUY","notificationUUID":\
            "6f1b0bde-52a4-4f9c-9b7b-2d4c5e6a7f80","version":"2.0","signedDate":\(now),"data":{"appAppleId":1234567890,\
            "bundleId":"\(Self.bundleID)","bundleVersion":"1","environment":"Sandbox","status":1,\
            "signedTransactionInfo":"eyJhbGciOiJFUzI1NiJ9.e30.c2ln","signedRenewalInfo":"eyJhbGciOiJFUzI1NiJ9.e30.c2ln"}}
            """
        let summary = """
            {"notificationType":"RENEWAL_EXTENSION","subtype":"SUMMARY","notificationUUID":"u","signedDate":\(now),\
            "summary":{"environment":"Sandbox","appAppleId":1234567890,"bundleId":"\(Self.bundleID)",\
            "productId":"com.example.monthly","requestIdentifier":"r","succeededCount":5,"failedCount":0}}
            """
        let seeds: [(String, Data)] = [
            ("notification.jws", Data(try pki.sign(Data(notification.utf8)).utf8)),
            ("notification.pair", Data([0]) + Data(notification.utf8)),
            ("summary.pair", Data("{\"alg\":\"ES256\",\"x5c\":[@PKI@]}".utf8) + Data([0]) + Data(summary.utf8)),
            ("transaction.pair", Data("{\"alg\":\"ES256\",\"x5c\":[@LEAF@,@INTERMEDIATE@,@ROOT@]}".utf8) + Data([0])
                + Data(transaction.utf8)),
            ("renewal.pair", Data([0]) + Data(renewal.utf8)),
            // Same document with its dates in exponent form, which JSON allows and the decoder accepts.
            ("renewal-exponent.pair", Data([0]) + Data(renewal.replacingOccurrences(of: "\(now)", with: "1.7e12").utf8)),
            ("two-parts.jws", Data("eyJhbGciOiJFUzI1NiJ9.e30".utf8)),
            ("padded.jws", Data("eyJhbGciOiJFUzI1NiJ9.e30=.AA==".utf8)),
            ("no-x5c.jws", Data("eyJhbGciOiJFUzI1NiJ9.e30.\(String(repeating: "A", count: 86))".utf8)),
        ]
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, contents) in seeds { try contents.write(to: directory.appendingPathComponent(name)) }
    }
}

private let harness = Harness()

/// libFuzzer's usual entry point. `-sanitize=fuzzer` links libFuzzer's own `main` (whole-archive), which refers to
/// it, so it must exist even though SwiftPM's `--defsym main=FuzzJWS_main` makes `FuzzJWS_main` the program's entry.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWSTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    harness.run(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

@_cdecl("FuzzJWS_main")
public func fuzzJWSMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    if let directory = ProcessInfo.processInfo.environment["FUZZJWS_WRITE_SEEDS"] {
        do {
            try harness.writeSeeds(to: URL(fileURLWithPath: directory))
            return 0
        } catch {
            FileHandle.standardError.write(Data("FuzzJWS: cannot write seeds: \(error)\n".utf8))
            return 1
        }
    }
    _ = harness  // set up the PKI before the first input, so its cost is not charged to it
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzzJWSTestOneInput($0, $1) }
}
