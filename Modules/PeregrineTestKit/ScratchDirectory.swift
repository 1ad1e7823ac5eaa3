#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fresh, private directory under the system's temporary directory (`$TMPDIR`, else `/tmp`),
/// made with `mkdtemp` (two never share a path, even across processes). It stays until
/// ``remove()``: call that from a `defer` right after making one.
public final class ScratchDirectory: Sendable, CustomStringConvertible {
    /// The directory's absolute path, without a trailing slash.
    public let path: String

    /// Makes the directory.
    ///
    /// - Parameter prefix: the start of its name, to tell leftovers apart.
    /// - Throws: ``TestKitError`` when `mkdtemp` fails.
    public init(prefix: String = "peregrine-test") throws(TestKitError) {
        var base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw TestKitError("mkdtemp under \(base) failed: \(String(cString: strerror(errno)))")
        }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The path of `name` inside the directory (`name` may have further components).
    public func path(_ name: String) -> String { "\(path)/\(name)" }

    /// Removes the directory and everything in it; nothing when it is gone already.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }

    public var description: String { path }
}

/// What the test kit throws: a directory it could not make, or a wait that timed out (with
/// what had arrived by then).
public struct TestKitError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
