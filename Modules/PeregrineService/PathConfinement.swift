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

/// Keeps a client's `dir` and `out` inside the download root: no `..`, no absolute path
/// outside it, no symbolic link that leads out of it.
///
/// Pure apart from reading the file system to resolve symbolic links; thread-safe.
public struct PathConfinement: Sendable {
    /// The download root, with its symbolic links resolved.
    public let root: String

    /// Confines paths to `root` (resolved once here).
    public init(root: String) {
        self.root = Self.resolve(root)
    }

    /// The directory `dir` names, resolved; relative paths are taken from the root.
    ///
    /// - Throws: ``PathConfinementError/Code/parentReference``,
    ///   ``PathConfinementError/Code/outsideRoot``, or
    ///   ``PathConfinementError/Code/subdirectoryUnsupported`` for a directory inside the root
    ///   other than the root (the engine has one download directory).
    public func directory(_ dir: String) throws(PathConfinementError) -> String {
        guard !dir.contains("\0") else { throw PathConfinementError(.outsideRoot, path: dir) }
        let components = dir.split(separator: "/", omittingEmptySubsequences: true)
        if components.contains("..") { throw PathConfinementError(.parentReference, path: dir) }
        let joined = dir.hasPrefix("/") ? dir : root + "/" + dir
        let resolved = Self.resolve(joined)
        guard resolved == root || resolved.hasPrefix(root == "/" ? "/" : root + "/") else {
            throw PathConfinementError(.outsideRoot, path: dir)
        }
        // TODO(segmented engine): per-download directories once the engine can place a file in
        // a directory of its own; until then only the root itself is accepted.
        guard resolved == root else { throw PathConfinementError(.subdirectoryUnsupported, path: dir) }
        return resolved
    }

    /// Checks a file name for `out`: one path component, not `.` or `..`, and not an existing
    /// symbolic link in the root (the engine would write through it).
    public func fileName(_ out: String) throws(PathConfinementError) -> String {
        if out == ".." || out.hasPrefix("../") || out.contains("/../") {
            throw PathConfinementError(.parentReference, path: out)
        }
        if out.hasPrefix("/") { throw PathConfinementError(.outsideRoot, path: out) }
        guard !out.isEmpty, out != ".", !out.contains("/"), !out.contains("\0"), out.utf8.count <= 255 else {
            throw PathConfinementError(.invalidFileName, path: out)
        }
        var status = stat()
        if lstat(root + "/" + out, &status) == 0, (status.st_mode & S_IFMT) == S_IFLNK {
            throw PathConfinementError(.outsideRoot, path: out)
        }
        return out
    }

    /// The path with every symbolic link of its longest existing prefix resolved and `.`
    /// components removed; the part that does not exist yet is appended as given.
    static func resolve(_ path: String) -> String {
        var existing = path
        var rest: [Substring] = []
        while true {
            if let real = realpath(existing, nil) {
                defer { free(real) }
                var result = String(cString: real)
                for component in rest.reversed() where component != "." {
                    result += (result.hasSuffix("/") ? "" : "/") + component
                }
                return result
            }
            guard let slash = existing.lastIndex(of: "/") else { return path }
            rest.append(existing[existing.index(after: slash)...])
            existing = slash == existing.startIndex ? "/" : String(existing[..<slash])
        }
    }
}
