import Crypto
import Foundation
import HTTP
import TestPKI
import TestSupport
import Testing

/// A CA and a server certificate for localhost / 127.0.0.1, generated once per process.
enum LocalPKI {
    struct Material: Sendable {
        let caFile: String
        let certificatePEM: String
        let privateKeyPEM: String
    }

    /// A Result rather than `try!`: a failure fails the TLS tests instead of crashing the test process.
    static let material = Result { try make() }

    private static func make() throws -> Material {
        let now = Date()
        let caKey = try PrivateKey.generate(.ecP256)
        var caBuilder = CertificateBuilder(commonName: "HTTPTests CA", notBefore: now - 3600, notAfter: now + 86400)
        caBuilder.isCertificateAuthority = true
        let ca = try caBuilder.selfSigned(key: caKey)

        let serverKey = try PrivateKey.generate(.ecP256)
        var serverBuilder = CertificateBuilder(commonName: "localhost", notBefore: now - 3600, notAfter: now + 86400)
        serverBuilder.subjectAltNames = ["DNS:localhost", "IP:127.0.0.1"]
        let server = try serverBuilder.issue(publicKey: serverKey.publicKey, issuer: ca, issuerKey: caKey)

        let caFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("storesync-httptests-ca-\(getpid()).pem").path
        try Data(ca.pem.utf8).write(to: URL(fileURLWithPath: caFile))
        return Material(caFile: caFile, certificatePEM: server.pem, privateKeyPEM: try serverKey.pem())
    }
}

@Suite struct HTTPClientTLSTests {
    private func startTLSServer() throws -> (HTTPServer, LocalPKI.Material) {
        let pki = try LocalPKI.material.get()
        var configuration = HTTPServerConfiguration()
        configuration.tls = (certificatePEM: pki.certificatePEM, privateKeyPEM: pki.privateKeyPEM)
        let (server, _) = try startServer({ router in
            router.route("POST", "/secure") { request in
                .json(200, #"{"received":\#(request.body.count)}"#)
            }
        }, configuration: configuration)
        return (server, pki)
    }

    @Test func httpsWithTheGeneratedCA() async throws {
        let (server, pki) = try startTLSServer()
        var configuration = HTTPClientConfiguration()
        configuration.caFile = pki.caFile
        let client = try HTTPClient(configuration: configuration)

        for host in ["127.0.0.1", "localhost"] {
            let response = try await client.send(HTTPClientRequest(
                method: "POST", url: "https://\(host):\(server.port)/secure", body: Data(count: 5), timeout: .seconds(10)))
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/json")
            #expect(String(decoding: response.body, as: UTF8.self) == #"{"received":5}"#)
        }

        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test func serverRefusesToStartWithAnUnusableCertificate() throws {
        let pki = try LocalPKI.material.get()
        var configuration = HTTPServerConfiguration()
        configuration.tls = (certificatePEM: "not a certificate", privateKeyPEM: pki.privateKeyPEM)
        let error = try #require(throws: HTTPServerError.self) {
            _ = try HTTPServer(configuration: configuration, router: HTTPRouter())
        }
        #expect(error.code == .cannotListen)
        #expect(error.message.contains("TLS"))
    }

    @Test func httpsWithoutTheCAFailsVerification() async throws {
        let (server, _) = try startTLSServer()
        var configuration = HTTPClientConfiguration()
        configuration.connectTimeout = .seconds(20)  // loading the system CA bundle is slow under sanitizers
        let client = try HTTPClient(configuration: configuration)

        let code = await clientErrorCode {
            try await client.send(HTTPClientRequest(method: "POST", url: "https://127.0.0.1:\(server.port)/secure",
                                                    timeout: .seconds(10)))
        }
        #expect(code == .tls)

        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    /// OpenSSL reports a peer hanging up mid-handshake as libcurl's SSL connect error, the code a handshake
    /// that fails outright has too: a failed handshake, worth retrying (a bounded few times), not a trust failure.
    @Test(arguments: [HangUpListener.HangUp.reset, .close])
    func aConnectionDroppedDuringTheHandshakeIsAFailedHandshake(hangUp: HangUpListener.HangUp) async throws {
        let listener = try HangUpListener(hangUp)
        let pki = try LocalPKI.material.get()
        var configuration = HTTPClientConfiguration()
        configuration.caFile = pki.caFile
        let client = try HTTPClient(configuration: configuration)

        do {
            _ = try await client.send(get("https://127.0.0.1:\(listener.port)/"))
            Issue.record("a listener that hangs up answered")
        } catch let error as HTTPClientError {
            #expect(error.code == .tlsHandshake, "\(error)")
            #expect(HTTPRetry.classify(.failure(error)) == .retryable(after: nil))
        }

        await client.shutdown()
        listener.stop()
    }

    /// An https URL at a plain-HTTP port: the server answers the ClientHello with an HTTP error, which no
    /// retry changes. It is the same class as a dropped handshake, with libcurl's reason in the message.
    @Test func httpsToAPlainHTTPServerIsAFailedHandshake() async throws {
        let (server, _) = try startServer({ router in router.route("GET", "/") { _ in .text(200, "plain\n") } })
        let client = try HTTPClient()

        do {
            let response = try await client.send(get("https://127.0.0.1:\(server.port)/"))
            Issue.record("a plain-HTTP server answered https with \(response.status)")
        } catch let error as HTTPClientError {
            #expect(error.code == .tlsHandshake, "\(error)")
            #expect(error.message.hasPrefix("SSL connect error: "), "\(error)")
            #expect(error.message.count > "SSL connect error: ".count, "\(error)")
        }

        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }
}
