import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A fresh private directory made with `mkdtemp`, removed by ``remove()``.
///
/// The default parent is `$TMPDIR` or `/tmp`: a real disk here, so `O_DIRECT` is exercised.
final class ScratchDirectory: Sendable {
    /// The directory's absolute, symlink-free path.
    let path: String

    struct CreationError: Error, CustomStringConvertible {
        var description: String
    }

    init(under parent: String? = nil) throws {
        var base = parent ?? ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        var template = Array("\(base)/peregrine-transport-tests.XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw CreationError(description: "mkdtemp under \(base) failed: errno \(errno)")
        }
        let made = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let resolved = realpath(made, nil) else {
            throw CreationError(description: "realpath \(made) failed: errno \(errno)")
        }
        defer { free(resolved) }
        path = String(cString: resolved)
    }

    /// The path of a file in the directory.
    func file(_ name: String) -> String { "\(path)/\(name)" }

    /// Removes the directory and its contents.
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
