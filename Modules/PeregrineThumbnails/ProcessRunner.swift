import Foundation

/// Runs an external program with no input, its output sent to a file or discarded, and a time
/// limit after which it is killed (SIGKILL) and reaped.
enum ProcessRunner {
    /// Runs `executable` with `arguments` and returns its exit status.
    ///
    /// - Throws: ``ThumbnailError/Code/timedOut`` when it ran longer than `timeout` seconds (it is
    ///   killed first), ``ThumbnailError/Code/videoToolFailed`` when it cannot be started.
    static func run(
        _ executable: String, _ arguments: [String], timeout: Double, standardOutputPath: String? = nil
    ) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        var output: FileHandle?
        if let standardOutputPath {
            guard FileManager.default.createFile(atPath: standardOutputPath, contents: nil),
                let handle = FileHandle(forWritingAtPath: standardOutputPath)
            else {
                throw ThumbnailError(.storageFailed, "cannot create \(standardOutputPath)")
            }
            output = handle
            process.standardOutput = handle
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        defer { try? output?.close() }
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        do {
            try process.run()
        } catch {
            throw ThumbnailError(.videoToolFailed, "cannot start \(executable): \(error)")
        }
        if finished.wait(timeout: .now() + max(0, timeout)) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            finished.wait()
            throw ThumbnailError(
                .timedOut, "\((executable as NSString).lastPathComponent) ran longer than \(timeout) s and was killed")
        }
        return process.terminationStatus
    }
}
