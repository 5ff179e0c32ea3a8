// libFuzzer harness over `StrictJSON.JSONReader` alone, the reader every App Store payload and API answer goes
// through. Each input is read twice:
//
// 1. skipped as one value (`skipValue`), which checks the whole document;
// 2. walked with the typed reads a decoder makes (`readObject`, `readArray`, `readString`, `readInt64`, `readInt`,
//    `readBool`, `readStringIfPresent`, `readOptional`), the read for each value picked from its key or position,
//    so wrong-kind values and every error path are reached too.
//
// Besides crashes and sanitizer reports, the harness traps when the two disagree: a document that skips cleanly
// must never be refused as malformed by a typed walk (only as an invalid value), and every error's offset lies
// inside the input.

import CFuzzSupport
import Foundation
import StrictJSON

private enum Read: Int, CaseIterable {
    case object, array, string, int64, int, bool, stringIfPresent, optionalObject, skip
}

/// The read for a value: from the key's bytes, or from the element's position, so a mutation of a key changes it.
private func pick(for key: JSONKey?, position: Int) -> Read {
    let seed = key.map { $0.bytes.reduce(5381) { ($0 &* 33) ^ Int($1) } } ?? position
    return Read(rawValue: abs(seed % Read.allCases.count))!
}

private func walk(_ reader: inout JSONReader, _ read: Read, depth: Int) throws {
    switch read {
    case .object:
        try reader.readObject { reader, key in try walk(&reader, pick(for: key, position: 0), depth: depth + 1) }
    case .array:
        var position = depth
        try reader.readArray { reader in
            position += 1
            try walk(&reader, pick(for: nil, position: position), depth: depth + 1)
        }
    case .string: _ = try reader.readString()
    case .int64: _ = try reader.readInt64()
    case .int: _ = try reader.readInt()
    case .bool: _ = try reader.readBool()
    case .stringIfPresent: _ = try reader.readStringIfPresent()
    case .optionalObject: _ = try reader.readOptional { reader in try walk(&reader, .object, depth: depth + 1) }
    case .skip: try reader.skipValue()
    }
}

/// The reader's error for `body` over `bytes`, or nil when it reads; any other error is a bug.
private func outcome(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (inout JSONReader) throws -> Void) -> JSONReaderError? {
    do {
        try JSONReader.read(bytes, body)
        return nil
    } catch let error as JSONReaderError {
        guard (0...bytes.count).contains(error.offset) else { fatalError("FuzzJSON: offset \(error.offset) outside \(bytes.count) bytes: \(error)") }
        return error
    } catch {
        fatalError("FuzzJSON: JSONReader threw \(type(of: error)), not a JSONReaderError: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
    let skipped = outcome(bytes) { try $0.skipValue() }
    for first in [Read.object, .array, pick(for: nil, position: size)] {
        let walked = outcome(bytes) { try walk(&$0, first, depth: 0) }
        if skipped == nil, let walked, walked.code == .malformed {
            fatalError("FuzzJSON: a document skipValue accepts was refused as malformed by a typed walk: \(walked)")
        }
    }
    return 0
}

/// The program's entry (SwiftPM links executables with `--defsym main=FuzzJSON_main`); see CFuzzSupport.h.
@_cdecl("FuzzJSON_main")
public func fuzzJSONMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzzJSONTestOneInput($0, $1) }
}
