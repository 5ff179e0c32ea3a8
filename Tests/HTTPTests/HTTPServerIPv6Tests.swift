import Foundation
import HTTP
import Testing

/// Whether this machine can bind the IPv6 loopback at all (containers often run without IPv6); the tests that
/// need it are skipped, and reported as skipped, where it cannot.
enum IPv6Loopback {
    static let isAvailable: Bool = {
        let probe = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
            }
        }
    }()
}

/// The server on IPv6: a bracketed listen address binds an IPv6 socket that answers real requests.
@Suite struct HTTPServerIPv6Tests {
    private func start(listen: String) throws -> HTTPServer {
        let address = try ListenAddress(parsing: listen)
        var configuration = HTTPServerConfiguration()
        configuration.host = address.host
        configuration.port = address.port
        var router = HTTPRouter()
        router.route("GET", "/where") { _ in .text(200, "here") }
        return try HTTPServer(configuration: configuration, router: router)
    }

    @Test(.enabled(if: IPv6Loopback.isAvailable, "this machine cannot bind the IPv6 loopback ::1"))
    func listensOnTheIPv6Loopback() async throws {
        let server = try start(listen: "[::1]:0")
        let client = try HTTPClient()
        let response = try await client.send(HTTPClientRequest(url: "http://[::1]:\(server.port)/where",
                                                               timeout: .seconds(10)))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "here")
        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test("[::] takes IPv6 and IPv4 clients on one socket",
          .enabled(if: IPv6Loopback.isAvailable, "this machine cannot bind the IPv6 loopback ::1"))
    func everyAddressIsDualStack() async throws {
        let server = try start(listen: "[::]:0")
        let client = try HTTPClient()
        for host in ["[::1]", "127.0.0.1"] {
            let response = try await client.send(HTTPClientRequest(url: "http://\(host):\(server.port)/where",
                                                                   timeout: .seconds(10)))
            #expect(response.status == 200, "via \(host)")
        }
        await client.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test func aBracketedHostInTheConfigurationIsRefusedWithTheReason() {
        var configuration = HTTPServerConfiguration()
        configuration.host = "[::1]"
        let error = #expect(throws: HTTPServerError.self) {
            _ = try HTTPServer(configuration: configuration, router: HTTPRouter())
        }
        #expect(error?.code == .invalidAddress)
        #expect(error?.message == "[::1]: give an IPv6 host without brackets here (they belong in HOST:PORT text, "
                + "which ListenAddress reads)")
    }
}
