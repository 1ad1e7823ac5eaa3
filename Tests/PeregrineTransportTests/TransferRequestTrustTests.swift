import PeregrineCore
import PeregrineTransport
import Synchronization
import Testing

@Suite("TransferRequest.trust(for:)")
struct TransferRequestTrustTests {
    static func url(_ string: String) throws -> DownloadURL { try DownloadURL(string) }

    static let firstHostCA = TrustPolicy.customCA(path: "/first-ca.pem")
    static let pinned = TrustPolicy.pinnedPublicKeys(["n4XnQ8rH0XK5Cr4Ao7bOSRWUNUc2tEKqPETvI0g0k4Q="])

    /// A request to `a.example` that trusts `firstHostCA` there and asks `resolver` for other hosts.
    static func request(resolver: (@Sendable (DownloadURL) -> TrustPolicy)?) throws -> TransferRequest {
        var request = TransferRequest(url: try url("https://a.example/f"), trust: firstHostCA)
        request.trustForHop = resolver
        return request
    }

    @Test func withoutAResolverEveryHopGetsTheRequestsPolicy() throws {
        let request = try Self.request(resolver: nil)
        #expect(request.trust(for: request.url) == Self.firstHostCA)
        #expect(request.trust(for: try Self.url("https://b.example/g")) == Self.firstHostCA)
    }

    @Test func hopToAnotherHostGetsTheResolversAnswerForThatHop() throws {
        let asked = Locked<[String]>([])
        let request = try Self.request { hop in
            asked.withLock { $0.append(hop.string) }
            return hop.host == "b.example" ? Self.pinned : .insecure
        }
        #expect(request.trust(for: try Self.url("https://b.example/g")) == Self.pinned)
        #expect(request.trust(for: try Self.url("https://c.example/h")) == .insecure)
        #expect(asked.withLock { $0 } == ["https://b.example/g", "https://c.example/h"])
    }

    @Test func hopOnTheRequestsOwnHostKeepsTheRequestsPolicy() throws {
        let asked = Locked(0)
        let request = try Self.request { _ in
            asked.withLock { $0 += 1 }
            return .insecure
        }
        #expect(request.trust(for: request.url) == Self.firstHostCA)
        // Another path, port or scheme on the same host is still that host's policy.
        #expect(request.trust(for: try Self.url("https://A.EXAMPLE:8443/other")) == Self.firstHostCA)
        #expect(request.trust(for: try Self.url("http://a.example/f")) == Self.firstHostCA)
        #expect(asked.withLock { $0 } == 0)
    }

    @Test func requestsThatDifferOnlyInTheResolverAreEqual() throws {
        let withResolver = try Self.request { _ in .insecure }
        let without = try Self.request(resolver: nil)
        #expect(withResolver == without)
        #expect(withResolver.hashValue == without.hashValue)
        #expect(withResolver.trustForHop != nil)

        var otherTrust = without
        otherTrust.trust = Self.pinned
        #expect(otherTrust != without, "the request's own policy still takes part in equality")
    }
}
