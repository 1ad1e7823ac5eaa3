import Foundation

/// Why a ``LighttpdServer`` could not be set up or did not come up.
public struct LighttpdServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, and what to do about it when that is known.
    public var message: String
    /// lighttpd's error log and console output at the time, when lighttpd was started.
    public var errorLog: String

    /// Creates an error.
    public init(_ message: String, errorLog: String = "") {
        self.message = message
        self.errorLog = errorLog
    }

    public var description: String {
        let log = errorLog.trimmingCharacters(in: .whitespacesAndNewlines)
        return log.isEmpty ? message : "\(message)\n--- lighttpd error log ---\n\(log)"
    }
}
