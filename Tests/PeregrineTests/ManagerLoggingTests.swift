import Peregrine
import PeregrineCore
import Synchronization
import Testing

/// An app sets or silences the manager's logging with `Peregrine` alone: this file imports no
/// `Logging` (the test target does not depend on swift-log), yet builds loggers.
@Suite struct ManagerLoggingTests {
    final class Recorder: Sendable {
        let lines = Locked<[String]>([])
    }

    struct RecordingHandler: LogHandler {
        let recorder: Recorder
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { recorder.lines.withLock { $0.append("\(event.message)") } }
    }

    @Test func theManagersLoggerIsTheConfigurationsAndCanBeSilenced() throws {
        let recorder = Recorder()
        let h = try ManagerHarness {
            $0.retryPolicy = nil
            $0.logger = Logger(label: "test") { _ in RecordingHandler(recorder: recorder) }
        }
        h.server.setRoute(.status(404), for: "/missing")
        try h.manager.download([h.url("/missing")])
        h.runUntilIdle()
        #expect(recorder.lines.withLock { $0.contains("download failed") })

        let silent = try ManagerHarness {
            $0.logger = Logger(label: "quiet") { _ in SwiftLogNoOpLogHandler() }
        }
        silent.server.setRoute(.status(404), for: "/missing")
        try silent.manager.download([silent.url("/missing")])
        silent.runUntilIdle()
    }
}
