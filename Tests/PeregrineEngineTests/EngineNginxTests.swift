import Foundation
import PeregrineCore
import PeregrineCurlTransport
import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

/// The engine end to end: libcurl against a real nginx on 127.0.0.1.
@Suite("DownloadEngine with nginx")
struct EngineNginxTests {
    /// Writes `size` seeded pseudo-random bytes to `path`.
    static func writeFile(size: Int, seed: UInt64, to path: String) throws {
        var state = seed
        var bytes = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 8) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            withUnsafeBytes(of: state.littleEndian) { word in
                for offset in 0..<min(8, size - index) { bytes[index + offset] = word[offset] }
            }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func sha256(_ paths: [String]) async throws -> [String] {
        let tool = try ChildProcess.executable(named: "sha256sum", debianPackage: "coreutils")
        let output = try await ChildProcess.run(tool, paths)
        return output.text.split(separator: "\n").map { String($0.split(separator: " ")[0]) }
    }

    @Test func threeFilesTwoAtATimeArriveIntact() async throws {
        let server = try NginxServer(.init(limitRate: 4 << 20))
        defer { server.stop() }
        try await server.start()
        let names = ["one.bin", "two.bin", "three.bin"]
        for (index, name) in names.enumerated() {
            try Self.writeFile(
                size: (3 - index) << 20 + 12_345, seed: UInt64(index + 1), to: server.documentPath("/" + name))
        }
        let scratch = try TemporaryDirectory(prefix: "peregrine-engine-nginx")
        defer { scratch.remove() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let engine = try DownloadEngine(
            transport: transport,
            configuration: .init(directory: scratch.path("downloads"), maxDownloadCount: 2))
        let recorder = EventRecorder(engine)

        let urls = names.map { server.httpURL("/" + $0) }
        #expect(engine.download(urls).added == urls)
        #expect(engine.slotHolders().count == 2)
        #expect(engine.waitingTasks() == [urls[2]])

        let events = await recorder.wait(timeout: .seconds(60)) { events in
            events.filter { if case .finished = $0 { true } else if case .failed = $0 { true } else { false } }.count
                == 3
        }
        for url in urls { #expect(engine.state(ofTask: url) == .finished, "\(url): \(engine.state(ofTask: url))") }

        // Never more than two transfers at once.
        var running = 0
        var most = 0
        for event in events {
            switch event {
            case .started: running += 1
            case .finished, .failed: running -= 1
            default: continue
            }
            most = max(most, running)
        }
        #expect(most == 2)

        let served = try await Self.sha256(names.map { server.documentPath("/" + $0) })
        let downloaded = try await Self.sha256(names.map { scratch.path("downloads/" + $0) })
        #expect(downloaded == served)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path("downloads")).sorted() == names.sorted())
        #expect(engine.fileByteCount(ofTask: urls[0]) == Int64(3 << 20 + 12_345))
    }

    @Test func aStoppedDownloadResumesWithRangeFromNginx() async throws {
        let server = try NginxServer(.init(limitRate: 1 << 20))
        defer { server.stop() }
        try await server.start()
        try Self.writeFile(size: 4 << 20, seed: 9, to: server.documentPath("/big.bin"))
        let scratch = try TemporaryDirectory(prefix: "peregrine-engine-nginx")
        defer { scratch.remove() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let engine = try DownloadEngine(
            transport: transport,
            configuration: .init(
                directory: scratch.path("downloads"), pauseDownloadBySuspendingSessionTask: false,
                checkpoint: CheckpointPolicy(interval: .milliseconds(100))))
        let recorder = EventRecorder(engine)
        let url = server.httpURL("/big.bin")
        engine.download([url])
        // Watched from a thread of its own: under a loaded test run the cooperative pool can be
        // busy for seconds, longer than the download lasts.
        let (paused, stateAfterPause, resumed) = await onOwnThread {
            while engine.receivedByteCount(ofTask: url) < 1 << 20, engine.state(ofTask: url) == .downloading {
                usleep(1_000)
            }
            let paused = engine.pauseTasks([url]).changed
            let state = engine.state(ofTask: url)
            // Resumed before the stopped transfer drained: the new one starts at its synced offset.
            return (paused, state, engine.resumeTasks([url]).changed)
        }
        #expect(paused == [url])
        #expect(stateAfterPause == .stopped)
        #expect(resumed == [url])
        let events = await recorder.wait(timeout: .seconds(60)) {
            $0.contains { if case .finished = $0 { true } else { false } }
        }
        let offsets = events.compactMap { event -> Int64? in
            if case .started(_, let offset) = event { offset } else { nil }
        }
        #expect(offsets.count == 2)
        #expect(offsets[0] == 0)
        #expect(offsets.last ?? 0 >= 1 << 20, "resumed with a Range from the synced offset: \(offsets)")
        let served = try await Self.sha256([server.documentPath("/big.bin")])
        let downloaded = try await Self.sha256([scratch.path("downloads/big.bin")])
        #expect(downloaded == served)
    }

    /// Takes its time over every finished task's record, as a store's sync does on a busy disk,
    /// so that transfers finishing together keep every finishing thread busy.
    final class SlowFinishLog: TaskRecordObserver, @unchecked Sendable {
        func engineDidChange(_ changes: [TaskRecordChange]) {
            for change in changes {
                if case .upsert(let record) = change.kind, record.state == .finished { usleep(300_000) }
            }
        }
    }

    /// A download that finishes after a burst of finishes kept every finishing thread busy, and
    /// after those threads went idle and ended, still takes its name. Before, the burst left the
    /// finishing pool counting an idle thread that had ended, and the last completion waited for
    /// it forever: the part file full size, the task `downloading`, every thread idle.
    @Test func aDownloadFinishingAfterTheFinishingThreadsEndedIsPlaced() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let names = (0..<9).map { "f\($0).bin" }
        for (index, name) in names.enumerated() {
            try Self.writeFile(size: 64 << 10, seed: UInt64(index + 20), to: server.documentPath("/" + name))
        }
        let scratch = try TemporaryDirectory(prefix: "peregrine-engine-nginx")
        defer { scratch.remove() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let engine = try DownloadEngine(
            transport: transport,
            configuration: .init(
                directory: scratch.path("downloads"), maxDownloadCount: 8, recordObserver: SlowFinishLog()))
        let recorder = EventRecorder(engine)
        let urls = names.map { server.httpURL("/" + $0) }
        engine.download(Array(urls.prefix(8)))
        await recorder.wait(timeout: .seconds(120)) { $0.filter(EngineNginxVerificationTests.isFinal).count == 8 }
        // Longer than the finishing threads' idle timeout (5 s): they end.
        try await Task.sleep(for: .seconds(7))
        engine.download([urls[8]])
        await recorder.wait(timeout: .seconds(60)) { $0.filter(EngineNginxVerificationTests.isFinal).count == 9 }
        for url in urls { #expect(engine.state(ofTask: url) == .finished, "\(url): \(engine.state(ofTask: url))") }
        let served = try await Self.sha256(names.map { server.documentPath("/" + $0) })
        let downloaded = try await Self.sha256(names.map { scratch.path("downloads/" + $0) })
        #expect(downloaded == served)
    }
}
