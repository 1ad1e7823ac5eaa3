import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fresh, private directory under the system's temporary directory (`$TMPDIR`, else `/tmp`).
///
/// Made with `mkdtemp`, so two instances never share a path, even across processes. The
/// directory stays until ``remove()`` — call it from a `defer` right after creating one — or,
/// when made with `removedWhenReleased`, until the last reference to it goes (for a fixture
/// object that shares it with the fixtures made after it).
public final class TemporaryDirectory: Sendable, CustomStringConvertible {
    /// The directory's absolute path, without a trailing slash.
    public let path: String
    private let removedWhenReleased: Bool

    /// Creates the directory.
    ///
    /// - Parameter prefix: the start of the directory's name, to tell the tests' leftovers apart.
    /// - Parameter removedWhenReleased: whether the directory goes with this object.
    /// - Throws: ``CreationError`` when `mkdtemp` fails.
    public init(prefix: String = "peregrine", removedWhenReleased: Bool = false) throws(CreationError) {
        self.removedWhenReleased = removedWhenReleased
        var base = FileManager.default.temporaryDirectory.path
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard created != nil else {
            let code = errno
            throw CreationError(message: "mkdtemp under \(base) failed: \(String(cString: strerror(code)))")
        }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        if removedWhenReleased { remove() }
    }

    /// The path of `name` inside the directory (`name` may contain further components).
    public func path(_ name: String) -> String { "\(path)/\(name)" }

    /// Removes the directory and everything in it. Does nothing when it is already gone.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Whether the directory still exists.
    public var exists: Bool { FileManager.default.fileExists(atPath: path) }

    public var description: String { path }

    /// The temporary directory could not be made.
    public struct CreationError: Error, Sendable, CustomStringConvertible {
        /// What failed.
        public var message: String
        public var description: String { message }
    }
}
