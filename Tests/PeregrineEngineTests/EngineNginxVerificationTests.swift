import Foundation
import PeregrineCore
import PeregrineCurlTransport
import PeregrineEngine
import PeregrineTransport
import PeregrineVerification
import TestSupport
import Testing

/// Checksum verification end to end: libcurl against a real nginx on 127.0.0.1, digests
/// checked against `sha256sum`.
@Suite("DownloadEngine verification with nginx")
struct EngineNginxVerificationTests {
    static func isFinal(_ event: EngineEvent) -> Bool {
        switch event {
        case .finished, .failed: true
        default: false
        }
    }

    @Test func aSHA256VerifiedDownloadAndOneFromASumsFile() async throws {
        let server = try NginxServer(.init(limitRate: 8 << 20))
        defer { server.stop() }
        try await server.start()
        try EngineNginxTests.writeFile(size: 3 << 20 + 17, seed: 11, to: server.documentPath("/a.bin"))
        try EngineNginxTests.writeFile(size: 1 << 20 + 5, seed: 12, to: server.documentPath("/b.bin"))
        let digests = try await EngineNginxTests.sha256([server.documentPath("/a.bin"), server.documentPath("/b.bin")])
        try Data("\(digests[1])  b.bin\n\(digests[0])  a.bin\n".utf8).write(
            to: URL(fileURLWithPath: server.documentPath("/SHA256SUMS")))
        let scratch = try TemporaryDirectory(prefix: "peregrine-engine-nginx-verify")
        defer { scratch.remove() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let engine = try DownloadEngine(
            transport: transport, configuration: .init(directory: scratch.path("downloads"), digests: OpenSSLDigests()))
        let recorder = EventRecorder(engine)

        let a = server.httpURL("/a.bin")
        let b = server.httpURL("/b.bin")
        let added = engine.download([
            DownloadItem(a, checksum: "sha256=" + digests[0]),
            DownloadItem(b, checksumURL: server.httpURL("/SHA256SUMS")),
        ])
        #expect(added.added == [a, b])
        await recorder.wait(timeout: .seconds(60)) { $0.filter(Self.isFinal).count == 2 }
        for url in [a, b] {
            #expect(engine.state(ofTask: url) == .finished, "\(url): \(engine.state(ofTask: url))")
            #expect(engine.verificationResult(ofTask: url) == .verified, "\(url)")
        }
        let downloaded = try await EngineNginxTests.sha256([
            scratch.path("downloads/a.bin"), scratch.path("downloads/b.bin"),
        ])
        #expect(downloaded == digests)
        #expect(engine.task(b)?.record.checksum == "sha256=" + digests[1])
    }

    @Test func aMismatchFailsAndKeepsTheFileAside() async throws {
        let server = try NginxServer(.init(limitRate: 8 << 20))
        defer { server.stop() }
        try await server.start()
        try EngineNginxTests.writeFile(size: 2 << 20, seed: 13, to: server.documentPath("/c.bin"))
        let served = try await EngineNginxTests.sha256([server.documentPath("/c.bin")])
        let scratch = try TemporaryDirectory(prefix: "peregrine-engine-nginx-verify")
        defer { scratch.remove() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let engine = try DownloadEngine(
            transport: transport,
            configuration: .init(
                directory: scratch.path("downloads"), digests: OpenSSLDigests(),
                verificationRetry: .init(maxAttempts: 2)))
        let recorder = EventRecorder(engine)

        let url = server.httpURL("/c.bin")
        let wrong = "sha256=" + String(repeating: "0", count: 64)
        engine.download([DownloadItem(url, checksum: wrong)])
        let events = await recorder.wait(timeout: .seconds(60)) { $0.contains(where: Self.isFinal) }
        guard case .failed(let reason) = engine.state(ofTask: url) else {
            Issue.record("expected failed, got \(engine.state(ofTask: url))")
            return
        }
        #expect(reason.code == .verification)
        #expect(reason.message.contains(served[0]), "\(reason.message)")
        #expect(engine.task(url)?.mismatchCount == 2)
        #expect(events.filter { if case .started = $0 { true } else { false } }.count == 2, "one retry from zero")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path("downloads")) == ["c.bin.mismatch"])
        let kept = try await EngineNginxTests.sha256([scratch.path("downloads/c.bin.mismatch")])
        #expect(kept == served)
        guard case .mismatch(_, let actual)? = engine.verificationResult(ofTask: url) else {
            Issue.record("expected a mismatch, got \(String(describing: engine.verificationResult(ofTask: url)))")
            return
        }
        #expect(actual.hex == served[0])
    }

    @Test func aStoppedDownloadResumesAndVerifiesTheWholeFile() async throws {
        let server = try NginxServer(.init(limitRate: 1 << 20))
        defer { server.stop() }
        try await server.start()
        try EngineNginxTests.writeFile(size: 4 << 20, seed: 14, to: server.documentPath("/big.bin"))
        let served = try await EngineNginxTests.sha256([server.documentPath("/big.bin")])
        let scratch = try TemporaryDirectory(prefix: "peregrine-engine-nginx-verify")
        defer { scratch.remove() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let engine = try DownloadEngine(
            transport: transport,
            configuration: .init(
                directory: scratch.path("downloads"), pauseDownloadBySuspendingSessionTask: false,
                checkpoint: CheckpointPolicy(interval: .milliseconds(100)), digests: OpenSSLDigests(),
                verificationRetry: .never))
        let recorder = EventRecorder(engine)
        let url = server.httpURL("/big.bin")
        engine.download([DownloadItem(url, checksum: "sha256=" + served[0])])
        // Watched from a thread of its own: the cooperative pool can be busy for seconds.
        let (stopped, resumed) = await onOwnThread {
            while engine.receivedByteCount(ofTask: url) < 1 << 20, engine.state(ofTask: url) == .downloading {
                usleep(1_000)
            }
            return (engine.stopTasks([url]).changed, engine.resumeTasks([url]).changed)
        }
        #expect(stopped == [url])
        #expect(resumed == [url])
        let events = await recorder.wait(timeout: .seconds(60)) { $0.contains(where: Self.isFinal) }
        let offsets = events.compactMap { event -> Int64? in
            if case .started(_, let offset) = event { offset } else { nil }
        }
        #expect(offsets.count == 2)
        #expect(offsets.last ?? 0 >= 1 << 20, "resumed with a Range: \(offsets)")
        #expect(engine.state(ofTask: url) == .finished, "\(engine.state(ofTask: url))")
        #expect(engine.verificationResult(ofTask: url) == .verified)
    }
}
