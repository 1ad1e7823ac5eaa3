import Foundation
import TestSupport
import Testing

/// The `peregrine` CLI built beside this test binary (`swift build --build-tests` builds every
/// product, so it is there), and a way to run it.
enum VerifyCommandExecutable {
    /// The CLI's path, or nil when it was not built.
    static var path: String? { ChildProcess.builtProduct(named: "peregrine") }

    /// Runs `peregrine ARGUMENTS` and returns what it printed and its exit status.
    static func run(_ arguments: [String], in directory: String? = nil) async throws -> ChildProcess.Output {
        let path = try #require(path, "no peregrine binary beside the tests: build with `swift build --build-tests`")
        return try await ChildProcess.run(path, arguments, directory: directory, allowFailure: true)
    }
}
