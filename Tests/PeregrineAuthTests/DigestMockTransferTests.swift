import PeregrineAuth
import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Synchronization
import Testing

/// Digest through the decorator on the in-memory transport, with the exact header values the
/// server received.
@Suite("Digest on the mock transport")
struct DigestMockTransferTests {
    typealias RFC = DigestRFCExampleTests
    static let mufasa = RFC.mufasa

    @Test func rfcExampleAnswersTheStrongestChallengeByteForByte() async throws {
        let fixture = MockAuthFixture(configuration: .init(clientNonces: .sequence([RFC.cnonce])))
        fixture.store.set(Self.mufasa, for: ProtectionSpace(scheme: "https", host: "example.org", port: 443))
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(
                RFC.expectedSHA256, challenges: [RFC.sha256Challenge, RFC.md5Challenge]),
            for: "/dir/index.html")
        let sink = MemorySink()

        let (result, log) = await fixture.transport.run(
            try fixture.request("https://example.org/dir/index.html"), sink: sink)

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(fixture.authorizations(for: "/dir/index.html") == [nil, RFC.expectedSHA256])
        #expect(sink.bytes == MockAuthFixture.body.bytes(in: 0..<1024))
        // The challenge's 401 never reaches the caller: one head, one completion.
        #expect(log.heads.map(\.status) == [200])
        #expect(log.completionCount == 1)
    }

    @Test func rfcMD5ExampleMatchesByteForByte() async throws {
        let fixture = MockAuthFixture(configuration: .init(clientNonces: .sequence([RFC.cnonce])))
        fixture.store.set(Self.mufasa, for: ProtectionSpace(scheme: "https", host: "example.org", port: 443))
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(RFC.expectedMD5, challenges: [RFC.md5Challenge]),
            for: "/dir/index.html")

        let (result, _) = await fixture.transport.run(try fixture.request("https://example.org/dir/index.html"))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(fixture.authorizations(for: "/dir/index.html") == [nil, RFC.expectedMD5])
    }

    @Test func laterRequestsToTheSpaceArePreemptiveAndCountTheNonce() async throws {
        let challenge = #"Digest realm="files", nonce="N1", algorithm=SHA-256, qop="auth""#
        let credential = Credential(user: "alice", password: "secret")
        let fixture = MockAuthFixture(configuration: .init(clientNonces: .sequence(["c1", "c2", "c3"])))
        fixture.store.set(
            credential, for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443, realm: "files"))
        func header(_ uri: String, _ count: UInt32, _ cnonce: String) throws -> String {
            try MockAuthFixture.digestHeader(
                challenge, credential: credential, uri: uri, nonceCount: count, clientNonce: cnonce)
        }
        let file = MockRoute.file(MockAuthFixture.body)
        fixture.server.setRoutes(
            [
                file.requiringAuthorization(try header("/a.bin", 1, "c1"), challenges: [challenge]),
                file.requiringAuthorization(try header("/a.bin", 1, "c1"), challenges: [challenge]),
            ], for: "/a.bin")
        fixture.server.setRoute(
            file.requiringAuthorization(try header("/b.bin", 2, "c2"), challenges: [challenge]), for: "/b.bin")
        fixture.server.setRoute(
            file.requiringAuthorization(try header("/c.bin?x=1", 3, "c3"), challenges: [challenge]), for: "/c.bin")

        for url in ["https://mock.test/a.bin", "https://mock.test/b.bin", "https://mock.test/c.bin?x=1"] {
            let (result, _) = await fixture.transport.run(try fixture.request(url))
            #expect(result.summary?.head.status == 200, "\(url): \(String(describing: result.error))")
        }

        // One challenge, then every request answered at once with the next nc.
        #expect(fixture.server.requests.count == 4)
        #expect(fixture.authorizations(for: "/b.bin").count == 1)
        #expect(fixture.authorizations(for: "/b.bin").first??.contains("nc=00000002") == true)
        #expect(fixture.authorizations(for: "/c.bin").first??.contains("nc=00000003") == true)
        let space = ProtectionSpace(scheme: "https", host: "mock.test", port: 443, realm: "files")
        #expect(fixture.cache.digestNonce(for: space)?.count == 3)
    }

    @Test func staleNonceIsAnsweredWithTheNewNonceWithoutAskingAgain() async throws {
        let first = #"Digest realm="files", nonce="OLD", qop="auth""#
        let stale = #"Digest realm="files", nonce="NEW", qop="auth", stale=true"#
        let credential = Credential(user: "alice", password: "secret")
        let asked = Locked(0)
        let fixture = MockAuthFixture(
            configuration: .init(
                challengeHandler: .closure { _ in
                    asked.withLock { $0 += 1 }
                    return .useCredential(credential)
                },
                clientNonces: .sequence(["c1", "c2", "c3"])))
        func header(_ challenge: String, _ count: UInt32, _ cnonce: String) throws -> String {
            try MockAuthFixture.digestHeader(
                challenge, credential: credential, uri: "/f", nonceCount: count, clientNonce: cnonce)
        }
        let file = MockRoute.file(MockAuthFixture.body)
        let old = try header(first, 1, "c1")
        let new = try header(stale, 1, "c3")
        fixture.server.setRoutes(
            [
                file.requiringAuthorization(old, challenges: [first]),  // no credentials yet
                file.requiringAuthorization(old, challenges: [first]),  // nc=1 on OLD: accepted
                file.requiringAuthorization(new, challenges: [stale]),  // nc=2 on OLD: the nonce expired
                file.requiringAuthorization(new, challenges: [stale]),  // nc=1 on NEW: accepted
            ], for: "/f")

        let (firstResult, _) = await fixture.transport.run(try fixture.request("https://mock.test/f"))
        let (secondResult, log) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        #expect(firstResult.summary != nil)
        #expect(secondResult.summary?.head.status == 200, "\(String(describing: secondResult.error))")
        #expect(asked.withLock { $0 } == 1)
        let sent = fixture.authorizations(for: "/f")
        #expect(sent.count == 4)
        #expect(sent[2]?.contains(#"nonce="OLD", nc=00000002"#) == true)
        #expect(sent[3] == new)
        #expect(log.heads.map(\.status) == [200])
    }

    @Test func staleChallengeRepeatingTheAnsweredNonceIsARejectionNotALoop() async throws {
        let first = #"Digest realm="files", nonce="SAME", qop="auth""#
        let repeated = #"Digest realm="files", nonce="SAME", qop="auth", stale=true"#
        let fixture = MockAuthFixture(configuration: .init(clientNonces: .sequence(["c1", "c2", "c3"])))
        fixture.store.set(
            Credential(user: "alice", password: "secret"),
            for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        let file = MockRoute.file(MockAuthFixture.body)
        fixture.server.setRoutes(
            [
                file.requiringAuthorization("never", challenges: [first]),
                file.requiringAuthorization("never", challenges: [repeated]),
            ], for: "/f")

        let (result, log) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        let error = try #require(result.error)
        #expect(error.failureReason.code == .authentication)
        #expect(error.failureReason.message.contains("\"files\""), "\(error)")
        #expect(error.message.contains("rejected"), "\(error)")
        // The challenge, one answer, and no second answer to a "stale" nonce already answered.
        #expect(fixture.server.requests(for: "/f").count == 2)
        #expect(log.heads.map(\.status) == [401])
        #expect(log.completionCount == 1)
    }

    @Test func serverThatAlwaysSaysStaleIsStoppedAtTheAttemptLimit() async throws {
        let fixture = MockAuthFixture(
            configuration: .init(maximumAttempts: 3, clientNonces: .sequence((1...9).map { "c\($0)" })))
        fixture.store.set(
            Credential(user: "alice", password: "secret"),
            for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        let file = MockRoute.file(MockAuthFixture.body)
        // Every answer is met with a fresh nonce marked stale, forever.
        fixture.server.setRoutes(
            (1...9).map { index in
                file.requiringAuthorization(
                    "never", challenges: [#"Digest realm="files", qop="auth", stale=true, nonce="N\#(index)""#])
            }, for: "/f")

        let (result, log) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        let error = try #require(result.error)
        #expect(error.failureReason.code == .authentication)
        #expect(error.failureReason.message.contains("\"files\""), "\(error)")
        #expect(fixture.server.requests(for: "/f").count == 4)
        let nonces = fixture.authorizations(for: "/f").dropFirst().map { $0?.contains("nc=00000001") }
        #expect(nonces == [true, true, true])
        #expect(log.completionCount == 1)
    }

    @Test func authIntOnlyChallengeIsAnsweredWithTheEmptyBodyHash() async throws {
        let challenge = #"Digest realm="r", nonce="N", algorithm=SHA-256, qop="auth-int""#
        let credential = Credential(user: "u", password: "p")
        let fixture = MockAuthFixture(configuration: .init(clientNonces: .sequence(["c1"])))
        fixture.store.set(credential, for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        let expected = try MockAuthFixture.digestHeader(
            challenge, credential: credential, uri: "/f", nonceCount: 1, clientNonce: "c1")
        #expect(expected.contains("qop=auth-int"))
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(expected, challenges: [challenge]), for: "/f")

        let (result, _) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(fixture.authorizations(for: "/f") == [nil, expected])
    }

    @Test func sessionAlgorithmKeepsTheFirstClientNonceInA1() async throws {
        let challenge = #"Digest realm="r", nonce="N", algorithm=MD5-sess, qop="auth""#
        let credential = Credential(user: "u", password: "p")
        let fixture = MockAuthFixture(configuration: .init(clientNonces: .sequence(["first", "second"])))
        fixture.store.set(credential, for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        let parsed = try DigestChallenge(AuthenticationChallengeParser().parse(challenge)[0])
        let one = try DigestAuthorization(
            challenge: parsed, credential: credential, method: "GET", uri: "/f", nonceCount: 1, clientNonce: "first"
        ).headerValue()
        let two = try DigestAuthorization(
            challenge: parsed, credential: credential, method: "GET", uri: "/f", nonceCount: 2, clientNonce: "second",
            sessionClientNonce: "first"
        ).headerValue()
        let file = MockRoute.file(MockAuthFixture.body)
        fixture.server.setRoutes(
            [
                file.requiringAuthorization(one, challenges: [challenge]),
                file.requiringAuthorization(one, challenges: [challenge]),
                file.requiringAuthorization(two, challenges: [challenge]),
            ], for: "/f")

        for _ in 0..<2 {
            let (result, _) = await fixture.transport.run(try fixture.request("https://mock.test/f"))
            #expect(result.summary != nil, "\(String(describing: result.error))")
        }
        #expect(fixture.server.requests.count == 3)
    }

    @Test func concurrentTransfersGetDistinctNonceCounts() async throws {
        let challenge = #"Digest realm="r", nonce="N", qop="auth""#
        let fixture = MockAuthFixture()
        fixture.store.set(
            Credential(user: "u", password: "p"), for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        // Learn the nonce with one request answered by anything that carries it.
        fixture.cache.rememberDigest(
            try DigestChallenge(AuthenticationChallengeParser().parse(challenge)[0]),
            credential: Credential(user: "u", password: "p"), for: try DownloadURL("https://mock.test/"))
        fixture.server.setRoute(.file(MockAuthFixture.body), for: "/f")

        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    _ = await fixture.transport.run(try! fixture.request("https://mock.test/f"))
                }
            }
        }
        let counts = fixture.authorizations(for: "/f").compactMap { header -> String? in
            guard let header, let range = header.range(of: "nc=") else { return nil }
            return String(header[range.upperBound...].prefix(8))
        }
        #expect(counts.count == 20)
        #expect(Set(counts).count == 20)
        #expect(Set(counts) == Set((1...20).map { String(format8: $0) }))
    }
}

extension String {
    /// Eight lower-case hex digits, as `nc` is written.
    init(format8 value: Int) {
        let digits = String(value, radix: 16)
        self = String(repeating: "0", count: 8 - digits.count) + digits
    }
}
