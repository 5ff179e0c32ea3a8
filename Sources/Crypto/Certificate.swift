import COpenSSL
import CStoreSyncShims
import Foundation

/// Owns one `X509`; immutable after construction, so safe to share across threads. `package` so that the
/// test PKI adapter (`TestPKI`) can issue certificates without this module carrying an issuer.
package final class CertificateHandle: @unchecked Sendable {
    package let pointer: OpaquePointer

    package init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_free(pointer) }
}

/// An X.509 certificate.
public struct Certificate: Sendable {
    package let handle: CertificateHandle

    package init(handle: CertificateHandle) { self.handle = handle }

    /// Parses DER; the whole input must be one certificate.
    public init(der: Data) throws {
        guard !der.isEmpty, der.count <= 16 * 1024 else {
            throw CryptoError(.invalidCertificate, "certificate DER must be 1 byte to 16 KiB, got \(der.count)")
        }
        let parsed = der.withUnsafeBytes { buffer -> (OpaquePointer?, Int) in
            let start = buffer.bindMemory(to: UInt8.self).baseAddress
            var cursor: UnsafePointer<UInt8>? = start
            let certificate = d2i_X509(nil, &cursor, buffer.count)
            return (certificate, cursor.map { $0 - start! } ?? 0)
        }
        guard let certificate = parsed.0 else { throw CryptoError.openSSL(.invalidCertificate, "not a DER certificate") }
        guard parsed.1 == der.count else {
            X509_free(certificate)
            throw CryptoError(.invalidCertificate, "trailing bytes after the certificate")
        }
        handle = CertificateHandle(certificate)
    }

    /// Parses the first `CERTIFICATE` block of a PEM text.
    public init(pem: String) throws {
        let certificate: OpaquePointer? = try withMemoryBIO(Data(pem.utf8)) { PEM_read_bio_X509($0, nil, nil, nil) }
        guard let certificate else { throw CryptoError.openSSL(.invalidCertificate, "not a PEM certificate") }
        handle = CertificateHandle(certificate)
    }

    /// Every `CERTIFICATE` block of a PEM text, or the single certificate of a DER file.
    public static func load(_ data: Data) throws -> [Certificate] {
        if data.first == 0x30 { return [try Certificate(der: data)] }  // DER starts with a SEQUENCE tag
        let text = String(decoding: data, as: UTF8.self)
        let blocks = text.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst()
        let certificates = try blocks.map { try Certificate(pem: "-----BEGIN CERTIFICATE-----" + $0) }
        guard !certificates.isEmpty else { throw CryptoError(.invalidCertificate, "no PEM certificate found") }
        return certificates
    }

    public var der: Data {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(handle.pointer, &output)
        guard length > 0, let output else { return Data() }
        defer { storesync_openssl_free(output) }
        return Data(bytes: output, count: Int(length))
    }

    public var pem: String {
        (try? withOutputBIO { PEM_write_bio_X509($0, handle.pointer) }) ?? ""
    }

    /// SHA-256 of the DER encoding: how certificates are pinned and compared.
    public var fingerprint: Data { Digest.sha256(der) }

    /// The subject, one line (`/CN=…/O=…`), for messages.
    public var subject: String {
        guard let line = X509_NAME_oneline(X509_get_subject_name(handle.pointer), nil, 0) else { return "?" }
        defer { storesync_openssl_free(line) }
        return String(cString: line)
    }

    public func publicKey() throws -> PublicKey {
        guard let key = X509_get_pubkey(handle.pointer) else {
            throw CryptoError.openSSL(.invalidCertificate, "certificate has no usable public key")
        }
        return PublicKey(KeyHandle(key))
    }

    /// Whether the certificate carries an extension with this dotted OID (presence only, any value).
    public func hasExtension(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else {
            _ = drainErrorQueue()
            return false
        }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(handle.pointer, object, -1) >= 0
    }

    /// Whether basic constraints mark this certificate as a CA.
    public var isCertificateAuthority: Bool { X509_check_ca(handle.pointer) == 1 }

    public var notBefore: Date? { Self.date(X509_get0_notBefore(handle.pointer)) }
    public var notAfter: Date? { Self.date(X509_get0_notAfter(handle.pointer)) }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}

/// Certificates trusted as roots, and path validation against them at a chosen time.
public struct TrustStore: Sendable {
    public let roots: [Certificate]
    private let store: StoreHandle

    private final class StoreHandle: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { X509_STORE_free(pointer) }
    }

    public init(roots: [Certificate]) throws {
        guard !roots.isEmpty else { throw CryptoError(.invalidCertificate, "a trust store needs at least one root") }
        guard let store = X509_STORE_new() else { throw CryptoError.openSSL(.internalError, "X509_STORE_new") }
        for root in roots where X509_STORE_add_cert(store, root.handle.pointer) != 1 {
            X509_STORE_free(store)
            throw CryptoError.openSSL(.invalidCertificate, "cannot add root \(root.subject)")
        }
        self.roots = roots
        self.store = StoreHandle(store)
    }

    /// Validates leaf → intermediates → one of the roots as of `date` (RFC 5280 path validation with
    /// OpenSSL's strict X.509 checks). Roots come only from this store; certificates the caller passes
    /// are untrusted intermediates. Throws `.untrustedChain` naming OpenSSL's reason.
    ///
    /// Returns the path OpenSSL built, leaf first and root last, and the span in which it is valid.
    @discardableResult
    public func verify(leaf: Certificate, intermediates: [Certificate], at date: Date) throws -> ValidatedPath {
        guard let untrusted = storesync_sk_X509_new_null() else { throw CryptoError.openSSL(.internalError, "sk_X509_new") }
        defer { storesync_sk_X509_pop_free(untrusted) }
        for certificate in intermediates {
            X509_up_ref(certificate.handle.pointer)
            guard storesync_sk_X509_push(untrusted, certificate.handle.pointer) > 0 else {
                X509_free(certificate.handle.pointer)
                throw CryptoError.openSSL(.internalError, "sk_X509_push")
            }
        }
        guard let context = X509_STORE_CTX_new() else { throw CryptoError.openSSL(.internalError, "X509_STORE_CTX_new") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store.pointer, leaf.handle.pointer, untrusted) == 1 else {
            throw CryptoError.openSSL(.internalError, "X509_STORE_CTX_init")
        }
        let parameters = X509_STORE_CTX_get0_param(context)
        guard let seconds = time_t(exactly: date.timeIntervalSince1970.rounded(.down)) else {
            throw CryptoError(.invalidEncoding, "validation time \(date.timeIntervalSince1970) s is out of range")
        }
        X509_VERIFY_PARAM_set_time(parameters, seconds)
        X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_X509_STRICT))
        guard X509_verify_cert(context) == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            _ = drainErrorQueue()
            let reason = String(cString: X509_verify_cert_error_string(Int(code)))
            let which = depth == 0 ? "leaf" : depth == 1 ? "intermediate" : "certificate at depth \(depth)"
            throw CryptoError(.untrustedChain, "\(which): \(reason)")
        }
        guard let chain = X509_STORE_CTX_get1_chain(context) else {
            throw CryptoError.openSSL(.internalError, "X509_STORE_CTX_get1_chain")
        }
        defer { storesync_sk_X509_pop_free(chain) }
        let certificates = (0..<storesync_sk_X509_num(chain)).compactMap { index -> Certificate? in
            guard let pointer = storesync_sk_X509_value(chain, index) else { return nil }
            X509_up_ref(pointer)
            return Certificate(handle: CertificateHandle(pointer))
        }
        return ValidatedPath(certificates: certificates, at: date)
    }
}

/// A certificate path that validated, and when.
public struct ValidatedPath: Sendable {
    /// Leaf first, trusted root last.
    public let certificates: [Certificate]
    /// The whole seconds at which every certificate of the path is valid — from the latest `notBefore` to one
    /// second before the earliest `notAfter`, since OpenSSL treats a certificate as expired at `notAfter`
    /// itself. The same path validates at any moment of this span, which is what makes a verdict cacheable.
    public let validity: ClosedRange<Date>

    init(certificates: [Certificate], at date: Date) {
        self.certificates = certificates
        let start = certificates.compactMap(\.notBefore).max() ?? date
        let end = (certificates.compactMap(\.notAfter).min() ?? date).addingTimeInterval(-1)
        validity = start...max(start, end)
    }
}
