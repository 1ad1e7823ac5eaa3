import PeregrineAuth
import PeregrineCore
import PeregrineTransport
import Synchronization
import Testing

@Suite("Server trust map")
struct ServerTrustMapTests {
    /// Two valid pins (base64 of 32 bytes).
    static let pinA = "n4Xnrv0sYYc6LItY/7Hu/DGPxahrcIQj2uCGlrrDbWw="
    static let pinB = "Y2Urc0x6cm5KOG5uMnBpbnMtZm9yLXJvdGF0aW9uIT0="

    func url(_ string: String) throws -> DownloadURL { try DownloadURL(string) }

    @Test func hostsWithoutAnEntryGetSystemCAs() throws {
        let map = try ServerTrustMap()
        #expect(map.policy(for: try url("https://example.org/f")) == .system)
    }

    @Test func exactHostWinsOverWildcardAndLongerWildcardWinsOverShorter() throws {
        let map = try ServerTrustMap(evaluations: [
            "*.example.org": .customCA(bundlePath: "/ca/wide.pem"),
            "*.eu.example.org": .customCA(bundlePath: "/ca/eu.pem"),
            "files.eu.example.org": .pinnedPublicKeys([Self.pinA]),
        ])
        #expect(map.policy(for: try url("https://files.eu.example.org/")).pinnedPublicKeySHA256 == [Self.pinA])
        #expect(map.policy(for: try url("https://cdn.eu.example.org/")) == .customCA(path: "/ca/eu.pem"))
        #expect(map.policy(for: try url("https://a.b.example.org/")) == .customCA(path: "/ca/wide.pem"))
        #expect(map.policy(for: try url("https://example.org/")) == .system)
    }

    @Test func hostKeysIgnoreCaseBracketsAndTrailingDots() throws {
        let map = try ServerTrustMap(evaluations: [
            "Files.Example.ORG.": .customCA(bundlePath: "/ca.pem"), "[::1]": .customCA(bundlePath: "/v6.pem"),
        ])
        #expect(map.policy(for: try url("https://files.example.org/")) == .customCA(path: "/ca.pem"))
        #expect(map.policy(for: try url("https://[::1]:8443/")) == .customCA(path: "/v6.pem"))
    }

    @Test func severalPinsAreKeptForRotationAndThePrefixIsStripped() throws {
        let map = try ServerTrustMap(evaluations: [
            "h": .pinnedPublicKeys(["sha256//" + Self.pinA, Self.pinB], authorities: .file(path: "/ca.pem"))
        ])
        let policy = map.policy(for: try url("https://h/"))
        #expect(policy.pinnedPublicKeySHA256 == [Self.pinA, Self.pinB])
        #expect(policy.authorities == .file(path: "/ca.pem"))
        #expect(!policy.isInsecure)
    }

    @Test func insecureHostWarnsEachTimeItsPolicyIsHandedOut() throws {
        let warnings = Locked<[ServerTrustWarning]>([])
        let map = try ServerTrustMap(
            evaluations: ["legacy.local": .insecure], onWarning: { warning in warnings.withLock { $0.append(warning) } }
        )
        let request = map.applying(to: try TransferRequest(url: "https://legacy.local/file"))
        #expect(request.trust.isInsecure)
        #expect(map.policy(for: try url("https://secure.local/")) == .system)
        let recorded = warnings.withLock { $0 }
        #expect(recorded.map(\.host) == ["legacy.local"])
        #expect(recorded.first?.description.contains("checks are off") == true)
    }

    @Test func insecureDefaultIsRefused() {
        #expect(throws: TrustConfigurationError.self) { try ServerTrustMap(default: .insecure) }
    }

    @Test func badPinsAndHostsAreRefused() {
        #expect(throws: TrustConfigurationError.self) {
            try ServerTrustMap(evaluations: ["h": .pinnedPublicKeys(["not base64!"])])
        }
        #expect(throws: TrustConfigurationError.self) {
            try ServerTrustMap(evaluations: ["h": .pinnedPublicKeys(["AAAA"])])  // 3 bytes, not 32
        }
        #expect(throws: TrustConfigurationError.self) { try ServerTrustMap(evaluations: ["h": .pinnedPublicKeys([])]) }
        #expect(throws: TrustConfigurationError.self) { try ServerTrustMap(evaluations: ["*": .systemCAs]) }
        #expect(throws: TrustConfigurationError.self) { try ServerTrustMap(evaluations: ["a/b": .systemCAs]) }
        #expect(throws: TrustConfigurationError.self) {
            try ServerTrustMap(evaluations: ["h": .customCA(bundlePath: "")])
        }
    }

    @Test func evaluationsDescribeThemselves() {
        #expect(ServerTrustEvaluation.systemCAs.description == "system CAs")
        #expect(ServerTrustEvaluation.pinnedPublicKeys([Self.pinA, Self.pinB]).description.contains("2 public keys"))
        #expect(ServerTrustEvaluation.insecure.description.contains("no certificate checks"))
    }
}
