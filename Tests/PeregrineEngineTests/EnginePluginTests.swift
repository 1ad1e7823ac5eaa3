import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import PeregrineTransport
import Testing

/// The seams other modules plug into: request adapter and retry policy (authentication),
/// file verifier (checksums), record observer and restore (storage).
@Suite("DownloadEngine plug-ins")
struct EnginePluginTests {
    /// Answers a 401 by retrying once with the credentials the server wants.
    struct BasicAuthentication: RequestAdapter, RetryPolicy {
        func adapt(_ request: inout TransferRequest, for task: TaskContext) {
            if task.previousFailure?.head?.headers["WWW-Authenticate"] != nil {
                request.credentials = RequestCredentials(authorization: "Basic dTpw", allowPlainHTTP: true)
            }
        }
        func decision(after failure: TransferFailure, for task: TaskContext) -> RetryDecision {
            failure.reason.code == .authentication && task.retryCount == 0 ? .retry : .fail
        }
    }

    @Test func anAuthenticationPluginRetriesAfterA401() throws {
        let plugin = BasicAuthentication()
        let h = try EngineHarness {
            $0.requestAdapter = plugin
            $0.retryPolicy = plugin
        }
        let body = MockBody.generated(seed: 4, count: 5000)
        h.server.setRoute(MockRoute.file(body).requiringAuthorization("Basic dTpw"), for: "/private.bin")
        h.server.setRoute(MockRoute.file(body).requiringAuthorization("Basic other"), for: "/denied.bin")
        h.engine.download([h.url("/private.bin"), h.url("/denied.bin")])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: h.url("/private.bin")) == .finished)
        #expect(h.bytes(of: "private.bin") == body.allBytes)
        #expect(
            h.server.requests(for: "/private.bin").map { $0.headers["Authorization"] ?? "-" } == ["-", "Basic dTpw"])
        guard case .failed(let reason) = h.engine.state(ofTask: h.url("/denied.bin")) else {
            Issue.record("expected failed")
            return
        }
        #expect(reason.code == .authentication)
        #expect(h.server.requests(for: "/denied.bin").count == 2, "one retry, then the failure")
    }

    /// Counts the bytes written through it and rejects files whose count is odd.
    final class CountingVerifier: TaskFileVerifier, @unchecked Sendable {
        final class Counter: TransferSink, @unchecked Sendable {
            let downstream: any TransferSink
            var bytes: Int64 = 0
            var start: Int64
            init(_ downstream: any TransferSink, start: Int64) {
                self.downstream = downstream
                self.start = start
            }
            func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
                self.bytes += Int64(bytes.count)
                try downstream.write(bytes, at: offset)
            }
            func flush() throws { try downstream.flush() }
        }
        let contexts = Shared<[String]>([])
        func sink(wrapping sink: any TransferSink, for task: TaskContext) -> any TransferSink {
            contexts.withLock { $0.append("\(task.url.string) \(task.startOffset) \(task.checksum ?? "-")") }
            return Counter(sink, start: task.startOffset)
        }
        func verify(_ sink: any TransferSink, for task: TaskContext) -> FailureReason? {
            let counter = sink as! Counter
            return (counter.start + counter.bytes) % 2 == 1 ? FailureReason(.verification, message: "odd") : nil
        }
    }

    @Test func aVerifierSeesEveryByteAndCanRefuseTheFile() throws {
        let verifier = CountingVerifier()
        let h = try EngineHarness { $0.verifier = verifier }
        h.serve("/even.bin", count: 1000)
        h.serve("/odd.bin", count: 1001)
        h.engine.download([DownloadItem(h.url("/even.bin"), checksum: "sha256=00"), DownloadItem(h.url("/odd.bin"))])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: h.url("/even.bin")) == .finished)
        guard case .failed(let reason) = h.engine.state(ofTask: h.url("/odd.bin")) else {
            Issue.record("expected failed")
            return
        }
        #expect(reason.code == .verification)
        #expect(h.files == ["even.bin"], "a file that fails verification never takes the final name")
        #expect(
            verifier.contexts.withLock { $0 }.sorted() == [
                "\(h.url("/even.bin")) 0 sha256=00", "\(h.url("/odd.bin")) 0 -",
            ])
    }

    final class RecordLog: TaskRecordObserver, @unchecked Sendable {
        let changes = Shared<[TaskRecordChange]>([])
        func engineDidChange(_ changes: [TaskRecordChange]) { self.changes.withLock { $0 += changes } }
    }

    @Test func theObserverGetsEveryChangeInSequence() throws {
        let log = RecordLog()
        let h = try EngineHarness { $0.recordObserver = log }
        h.serve("/o.bin", count: 100)
        let url = h.url("/o.bin")
        h.engine.download([url])
        h.runUntilIdle()
        h.engine.deleteTasks([url], keepFinishedFile: true)
        let changes = log.changes.withLock { $0 }
        #expect(changes.map(\.sequence) == Array(1...UInt64(changes.count)))
        let states = changes.compactMap { change -> DownloadState? in
            if case .upsert(let record) = change.kind { record.state } else { nil }
        }
        #expect(states.first == .downloading)
        #expect(states.last == .finished)
        #expect(changes.last?.kind == .remove(urlString: url))
        if case .upsert(let finished) = changes.dropLast().last?.kind {
            #expect(finished.fileName == "o.bin")
            #expect(finished.expectedLength == 100)
            #expect(finished.finishedAt == EngineHarness.date)
            #expect(finished.resumeRecord == nil)
        }
    }

    /// A layer's operation that calls the engine several times in one step of the shared
    /// coordinator makes one section: each task it changed is handed over once, as it is at the
    /// end, and nothing before the step ends; slots are still filled after each call.
    @Test func stepsNestedInOneStepHandTheirChangesOverOnce() throws {
        let log = RecordLog()
        let coordinator = Coordinator()
        let h = try EngineHarness(coordinator: coordinator) {
            $0.recordObserver = log
            $0.downloadNewFileImmediately = false
        }
        h.serve("/a.bin", count: 100)
        h.serve("/b.bin", count: 100)
        let a = h.url("/a.bin")
        let b = h.url("/b.bin")
        coordinator.enter()
        h.engine.download([a, b])
        _ = h.engine.resumeTasks([a])
        let inside = h.engine.state(ofTask: a)
        let handedOverInside = log.changes.withLock { $0.count }
        coordinator.leave()
        #expect(inside == .downloading)
        #expect(handedOverInside == 0)
        let changes = log.changes.withLock { $0 }
        #expect(changes.map(\.urlString).sorted() == [a, b])
        #expect(Set(changes.map(\.sequence)).count == 1)
        let recorded = changes.first { $0.urlString == a }.flatMap { change -> DownloadState? in
            if case .upsert(let record) = change.kind { record.state } else { nil }
        }
        #expect(recorded == .downloading)
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: a) == .finished)
        #expect(h.engine.state(ofTask: b) == .pending)
    }

    /// Takes its time over a stopped task's record, as a store's sync does on a busy disk.
    final class SlowStopLog: TaskRecordObserver, @unchecked Sendable {
        let stoppedOffsets = Shared<[Int64]>([])
        func engineDidChange(_ changes: [TaskRecordChange]) {
            for change in changes {
                guard case .upsert(let record) = change.kind, record.state == .stopped,
                    let offset = record.resumeRecord?.offset
                else { continue }
                usleep(300_000)
                stoppedOffsets.withLock { $0.append(offset) }
            }
        }
    }

    /// A program that stops everything, waits for the transfers to drain and saves its store
    /// finds the stop's resume record in the store: the drain waits for the section that ended
    /// the transfer to hand its record over, not only for the transfer to end.
    @Test func drainingWaitsUntilTheStopsRecordIsHandedOver() async throws {
        let log = SlowStopLog()
        let h = try EngineHarness(chunkSize: 16 << 10) { $0.recordObserver = log }
        h.server.setRoute(
            .file(.generated(seed: 3, count: 1 << 20), entityTag: .fixed("\"d\"")).throttled(toBytesPerSecond: 100_000),
            for: "/d.bin")
        let url = h.url("/d.bin")
        h.engine.download([url])
        h.advance(.seconds(2))
        let received = h.engine.receivedByteCount(ofTask: url)
        #expect(received > 0)
        #expect(h.engine.stopTasks([url]).changed == [url])
        // The transfer ends (and its record goes to the slow observer) on another thread: a
        // thread of its own started here, not a task, which could wait behind every other test's
        // task for the cooperative pool longer than the drain waits.
        let stepped = DispatchSemaphore(value: 0)
        Thread {
            h.runUntilIdle()
            stepped.signal()
        }.start()
        #expect(await h.engine.waitUntilTransfersDrain(atMost: .seconds(60)))
        #expect(log.stoppedOffsets.withLock { $0 }.last == received)
        await onOwnThread { stepped.wait() }
    }

    @Test func restoringAppliesTheCrashRules() async throws {
        let h = try EngineHarness()
        let body = h.serve("/r.bin", count: 20_000, entityTag: "\"r\"")
        h.serve("/gone.bin", count: 10)
        func record(
            _ path: String, _ state: DownloadState, offset: Int64? = nil, file: String? = nil, temporary: String
        )
            -> DownloadTaskRecord
        {
            DownloadTaskRecord(
                urlString: h.url(path), state: state,
                resumeRecord: offset.map {
                    ResumeRecord(offset: $0, validator: .entityTag("\"r\""), expectedLength: 20_000)
                },
                fileName: file, temporaryFileName: temporary, addedAt: EngineHarness.date)
        }
        // A partial file holding more than recorded (bytes past the sync are not trusted).
        try Data(body.bytes(in: 0..<9000)).write(to: URL(fileURLWithPath: h.downloads + "/.peregrine-r.part"))
        try Data("done".utf8).write(to: URL(fileURLWithPath: h.downloads + "/kept.bin"))
        let result = h.engine.restore([
            record("/r.bin", .downloading, offset: 8000, temporary: ".peregrine-r.part"),
            record("/lost.bin", .paused, offset: 5000, temporary: ".peregrine-lost.part"),
            record("/kept.bin", .finished, file: "kept.bin", temporary: ".peregrine-k.part"),
            record("/gone.bin", .finished, file: "gone.bin", temporary: ".peregrine-g.part"),
            record("/p.bin", .pending, temporary: ".peregrine-p.part"),
            record("/R.BIN", .pending, temporary: ".peregrine-x.part"),
            DownloadTaskRecord(urlString: "ftp://x/y", state: .pending, temporaryFileName: ".a", addedAt: .now),
            record("/r.bin", .pending, temporary: ".peregrine-dup.part"),
            record("/n.bin", .notInList, temporary: ".peregrine-n.part"),
            record("/evil.bin", .pending, temporary: "../evil"),
        ])
        #expect(
            result.restored == [
                h.url("/r.bin"), h.url("/lost.bin"), h.url("/kept.bin"), h.url("/gone.bin"), h.url("/p.bin"),
                h.url("/R.BIN"),
            ])
        #expect(result.recovered == [h.url("/r.bin"), h.url("/lost.bin"), h.url("/gone.bin")])
        #expect(
            result.rejected.map(\.urlString) == ["ftp://x/y", h.url("/r.bin"), h.url("/n.bin"), h.url("/evil.bin")])
        #expect(h.engine.state(ofTask: h.url("/r.bin")) == .stopped)
        #expect(h.engine.state(ofTask: h.url("/lost.bin")) == .pending, "its partial file is gone")
        #expect(h.engine.state(ofTask: h.url("/kept.bin")) == .finished)
        #expect(h.engine.state(ofTask: h.url("/gone.bin")) == .pending)
        #expect(h.engine.receivedByteCount(ofTask: h.url("/r.bin")) == 8000)
        #expect(h.engine.downloadDetail(ofTask: h.url("/r.bin")) == "8 KB/20 KB")
        #expect(h.server.requests.isEmpty, "nothing starts")

        let events = await h.recorder.wait { $0.count >= 9 }
        #expect(events.contains(.restored(h.url("/r.bin"), previousState: .downloading)))
        #expect(events.contains(.restored(h.url("/lost.bin"), previousState: .paused)))
        #expect(events.contains(.restored(h.url("/gone.bin"), previousState: .finished)))

        h.engine.resumeTasks([h.url("/r.bin")])
        h.runUntilIdle()
        #expect(h.bytes(of: "r.bin") == body.allBytes)
        #expect(h.ranges("/r.bin") == ["bytes=8000- \"r\""])
    }

    /// Sees every event synchronously, with its section's number; it asks the engine about the
    /// task at once and in its afterwards closure, which would trap ("recursive call to lock") if
    /// either ran under the engine's lock.
    final class EventLogObserver: EngineEventObserver, @unchecked Sendable {
        let sections = Shared<[(section: UInt64, events: [EngineEvent])]>([])
        let statesAfterwards = Shared<[DownloadState]>([])
        weak var engine: DownloadEngine?

        var events: [EngineEvent] {
            sections.withLock { $0.sorted { $0.section < $1.section }.flatMap(\.events) }
        }

        func engineDidEmit(_ events: [EngineEvent], section: UInt64) -> (@Sendable () -> Void)? {
            if let url = events.last?.urlString { _ = engine?.state(ofTask: url) }
            sections.withLock { $0.append((section, events)) }
            guard let url = events.last?.urlString else { return nil }
            return { [self] in
                if let state = engine?.state(ofTask: url) { statesAfterwards.withLock { $0.append(state) } }
            }
        }
    }

    @Test func anEventObserverSeesEveryEventAtOnceOutsideTheLock() async throws {
        let observer = EventLogObserver()
        let h = try EngineHarness { $0.eventObserver = observer }
        observer.engine = h.engine
        let stream = EventRecorder(h.engine)
        let body = MockBody.generated(seed: 9, count: 3000)
        h.server.setRoute(.file(body), for: "/o.bin")
        let url = h.url("/o.bin")
        h.engine.download([url])
        // Synchronous: the addition is seen before `download` returns.
        #expect(observer.events.first == .added(url))
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        // Every section numbered once, from 1, none missing.
        let numbers = observer.sections.withLock { $0.map(\.section) }.sorted()
        #expect(numbers == Array(1...UInt64(numbers.count)))
        let seen = observer.events
        #expect(seen.last.map { if case .finished = $0 { true } else { false } } == true, "\(seen)")
        // The same events, in the same order, as a subscriber of events() gets.
        let streamed = await stream.wait(for: url, count: seen.count)
        #expect(streamed == seen)
        #expect(!observer.statesAfterwards.withLock { $0 }.isEmpty)
    }
}
