import Foundation

/// Runs blocking work on a thread of its own, so that no cooperative thread is held: a test
/// that waits on a socket, a child or a database for seconds would otherwise starve the other
/// tests' services of the pool's few threads.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}
