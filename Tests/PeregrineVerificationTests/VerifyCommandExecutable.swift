import Foundation
import TestSupport
import Testing

/// The `peregrine` CLI built beside this test binary (`swift build --build-tests` builds every
/// product, so it is there), and a way to run it.
enum VerifyCommandExecutable {
    /// The CLI's path, or nil when it was not built.
    static var path: String? {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: me).deletingLastPathComponent()
        // On Linux the tests run from `<bin>/PeregrinePackageTests.xctest`; elsewhere from inside a bundle.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("peregrine").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// Runs `peregrine ARGUMENTS` and returns what it printed and its exit status.
    static func run(_ arguments: [String], in directory: String? = nil) async throws -> ChildProcess.Output {
        let path = try #require(path, "no peregrine binary beside the tests: build with `swift build --build-tests`")
        return try await ChildProcess.run(path, arguments, directory: directory, allowFailure: true)
    }
}
