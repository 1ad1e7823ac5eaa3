#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a ``LoopbackHTTPServer`` could not start.
public struct LoopbackServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failed call and the system's reason.
    public var message: String
    /// The errno of the failed call.
    public var errno: Int32

    /// Creates an error.
    public init(message: String, errno: Int32) {
        self.message = message
        self.errno = errno
    }

    /// An error for the system call `call` that just failed, with the current errno.
    package static func lastError(_ call: String) -> LoopbackServerError {
        let code = currentErrno()
        return LoopbackServerError(message: "\(call) failed: \(String(cString: strerror(code)))", errno: code)
    }

    public var description: String { "loopback HTTP server: \(message)" }
}

private func currentErrno() -> Int32 { errno }
