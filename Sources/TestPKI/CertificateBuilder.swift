import COpenSSL
import CStoreSyncShims
import Crypto
import Foundation

/// Issues X.509 certificates: the PKI the tests and the local App Store simulator sign with, shaped like
/// Apple's (P-384 root and intermediate, P-256 leaf, Apple's marker extensions). Never used to issue
/// anything a real store or client must trust.
public struct CertificateBuilder: Sendable {
    public var commonName: String
    public var serial: Int = Int.random(in: 1...Int(Int32.max))
    public var notBefore: Date
    public var notAfter: Date
    public var isCertificateAuthority = false
    /// Dotted OIDs added as non-critical extensions with an ASN.1 NULL value (presence is what counts).
    public var markerExtensions: [String] = []
    /// subjectAltName entries in OpenSSL's notation (`"DNS:localhost"`, `"IP:127.0.0.1"`): TLS clients match
    /// the host name against these, not the common name. Empty adds no extension.
    public var subjectAltNames: [String] = []

    public init(commonName: String, notBefore: Date, notAfter: Date) {
        self.commonName = commonName
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// A self-signed root for `key`.
    public func selfSigned(key: PrivateKey) throws -> Certificate {
        try issue(publicKey: key.publicKey, issuer: nil, issuerKey: key)
    }

    /// A certificate for `publicKey` signed by `issuer` with `issuerKey`.
    public func issue(publicKey: PublicKey, issuer: Certificate?, issuerKey: PrivateKey) throws -> Certificate {
        guard let certificate = X509_new() else { throw CryptoError.openSSL(.internalError, "X509_new") }
        let handle = CertificateHandle(certificate)  // frees on any throw below
        guard X509_set_version(certificate, 2) == 1,
              ASN1_INTEGER_set(X509_get_serialNumber(certificate), serial) == 1,
              ASN1_TIME_set(X509_getm_notBefore(certificate), time_t(notBefore.timeIntervalSince1970)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(notAfter.timeIntervalSince1970)) != nil,
              X509_set_pubkey(certificate, publicKey.handle.pointer) == 1
        else { throw CryptoError.openSSL(.internalError, "cannot fill in the certificate") }

        guard let name = X509_NAME_new() else { throw CryptoError.openSSL(.internalError, "X509_NAME_new") }
        defer { X509_NAME_free(name) }
        let cn = Array(commonName.utf8), organization = Array("StoreSync Test PKI".utf8)
        guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, cn, Int32(cn.count), -1, 0) == 1,
              X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, organization, Int32(organization.count), -1, 0) == 1,
              X509_set_subject_name(certificate, name) == 1,
              X509_set_issuer_name(certificate, issuer.map { X509_get_subject_name($0.handle.pointer) } ?? name) == 1
        else { throw CryptoError.openSSL(.internalError, "cannot set names") }

        var context = X509V3_CTX()
        storesync_x509v3_set_ctx_nodb(&context)
        X509V3_set_ctx(&context, issuer?.handle.pointer ?? certificate, certificate, nil, nil, 0)
        var extensions: [(Int32, String)] = [
            (NID_basic_constraints, isCertificateAuthority ? "critical,CA:TRUE" : "critical,CA:FALSE"),
            (NID_key_usage, isCertificateAuthority ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature"),
            (NID_subject_key_identifier, "hash"),
        ]
        if issuer != nil || !isCertificateAuthority { extensions.append((NID_authority_key_identifier, "keyid:always")) }
        if !subjectAltNames.isEmpty { extensions.append((NID_subject_alt_name, subjectAltNames.joined(separator: ","))) }
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw CryptoError.openSSL(.internalError, "cannot build extension \(nid)")
            }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else { throw CryptoError.openSSL(.internalError, "X509_add_ext") }
        }
        for oid in markerExtensions { try addMarker(oid, to: certificate) }

        let digest = issuerKey.kind == .ecP384 ? EVP_sha384() : EVP_sha256()
        guard X509_sign(certificate, issuerKey.handle.pointer, digest) > 0 else {
            throw CryptoError.openSSL(.internalError, "X509_sign")
        }
        return Certificate(handle: handle)
    }

    private func addMarker(_ oid: String, to certificate: OpaquePointer) throws {
        guard let object = OBJ_txt2obj(oid, 1) else { throw CryptoError.openSSL(.invalidEncoding, "bad OID \(oid)") }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else { throw CryptoError.openSSL(.internalError, "ASN1_OCTET_STRING_new") }
        defer { ASN1_OCTET_STRING_free(value) }
        let null: [UInt8] = [0x05, 0x00]
        guard ASN1_OCTET_STRING_set(value, null, Int32(null.count)) == 1,
              let ext = X509_EXTENSION_create_by_OBJ(nil, object, 0, value)
        else { throw CryptoError.openSSL(.internalError, "cannot build extension \(oid)") }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(certificate, ext, -1) == 1 else { throw CryptoError.openSSL(.internalError, "X509_add_ext") }
    }
}
