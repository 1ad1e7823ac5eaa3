import Foundation
import Logging
import Synchronization

/// `--log-format json`: one JSON object a line on standard error, for log shippers —
/// `{"time", "level", "label", "message", "source", "metadata"}`, metadata values as strings,
/// arrays and objects, as swift-log gives them.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    /// Lines from every thread, each written whole.
    private static let output = Mutex(())

    init(label: String) { self.label = label }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        var object: [String: Any] = [
            "time": Self.timestamp(), "level": event.level.rawValue, "label": label, "message": "\(event.message)",
            "source": event.source,
        ]
        if let error = event.error { object["error"] = "\(error)" }
        if !merged.isEmpty { object["metadata"] = merged.mapValues(Self.json) }
        guard
            var text = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        text.append(UInt8(ascii: "\n"))
        Self.output.withLock { _ in FileHandle.standardError.write(text) }
    }

    private static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(json)
        case .dictionary(let values): values.mapValues(json)
        }
    }

    /// RFC 3339 in UTC with milliseconds.
    private static func timestamp() -> String {
        Date.now.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
