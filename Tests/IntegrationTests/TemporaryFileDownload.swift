import Foundation
import PeregrineEngine
import PeregrineTransport

/// The engine's rule in small: download to a temporary file beside the destination and rename
/// it into place only when the transfer succeeded; a failed transfer leaves nothing behind.
enum TemporaryFileDownload {
    /// The temporary file's suffix.
    static let suffix = ".part"

    /// Runs `request` into `destination + ".part"`, renames it to `destination` on success and
    /// removes it on failure.
    ///
    /// - Throws: a sink error when the temporary file cannot be opened or closed, or
    ///   ``TransferTimeout``.
    static func run(
        _ request: TransferRequest,
        on transport: any Transport,
        to destination: String,
        timeout: Duration = .seconds(120)
    ) async throws -> TransferRecord {
        let partial = destination + suffix
        let sink = try FileSink(path: partial, mode: .truncate)
        let record: TransferRecord
        do {
            record = try await TransferMonitor.run(request, on: transport, sink: sink, timeout: timeout)
            try sink.close()
        } catch {
            try? sink.close()
            unlink(partial)
            throw error
        }
        if record.summary != nil {
            guard rename(partial, destination) == 0 else {
                let code = errno
                unlink(partial)
                throw SinkWriteError(errno: code, message: "cannot rename \(partial) to \(destination)")
            }
        } else {
            unlink(partial)
        }
        return record
    }
}
