import Peregrine

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

    /// The directory `dir` names, resolved: the root or a folder inside it (made when a file
    /// is placed there); relative paths are taken from the root.
    ///
    /// - Throws: ``PathConfinementError/Code/parentReference`` or
    ///   ``PathConfinementError/Code/outsideRoot``.
    public func directory(_ dir: String) throws(PathConfinementError) -> String {
        guard !dir.contains("\0") else { throw PathConfinementError(.outsideRoot, path: dir) }
        let components = dir.split(separator: "/", omittingEmptySubsequences: true)
        if components.contains("..") { throw PathConfinementError(.parentReference, path: dir) }
        let joined = dir.hasPrefix("/") ? dir : root + "/" + dir
        let resolved = Self.resolve(joined)
        guard resolved == root || resolved.hasPrefix(root == "/" ? "/" : root + "/") else {
            throw PathConfinementError(.outsideRoot, path: dir)
        }
        return resolved
    }

    /// The folder `dir` names as a path relative to the root (`music/2026`), nil for the root:
    /// a download's `DownloadItem.subdirectory`.
    ///
    /// - Throws: as ``directory(_:)``, and ``PathConfinementError/Code/invalidFileName`` for a
    ///   folder name the engine cannot use (a component too long).
    public func subdirectory(_ dir: String) throws(PathConfinementError) -> String? {
        let resolved = try directory(dir)
        guard resolved != root else { return nil }
        let relative = String(resolved.dropFirst(root == "/" ? 1 : root.utf8.count + 1))
        guard let normalized = DownloadDirectory.normalizedSubdirectory(relative) else {
            throw PathConfinementError(.invalidFileName, path: dir)
        }
        return normalized.isEmpty ? nil : normalized
    }

    /// Checks a file name for `out`: one path component, not `.` or `..`, and not an existing
    /// symbolic link in the root or in `subdirectory` of it (the engine would write through it).
    public func fileName(_ out: String, in subdirectory: String? = nil) throws(PathConfinementError) -> String {
        if out == ".." || out.hasPrefix("../") || out.contains("/../") {
            throw PathConfinementError(.parentReference, path: out)
        }
        if out.hasPrefix("/") { throw PathConfinementError(.outsideRoot, path: out) }
        guard !out.isEmpty, out != ".", !out.contains("/"), !out.contains("\0"), out.utf8.count <= 255 else {
            throw PathConfinementError(.invalidFileName, path: out)
        }
        var status = stat()
        let folder = subdirectory.map { root + "/" + $0 } ?? root
        if lstat(folder + "/" + out, &status) == 0, (status.st_mode & S_IFMT) == S_IFLNK {
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
