import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// This process's open file descriptors, as `/proc/self` shows them (Linux).
enum OpenDescriptors {
    /// `O_DIRECT`, which Glibc exposes only under `_GNU_SOURCE`.
    static let directFlag: Int32 = {
        #if arch(arm64) || arch(arm)
            0o200000
        #else
            0o40000
        #endif
    }()

    /// The `open` flags of every descriptor of this process that refers to `path`.
    static func flags(ofDescriptorsOn path: String) -> [Int32] {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: "/proc/self/fd") else { return [] }
        var result: [Int32] = []
        for name in names {
            guard let target = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                target == path,
                let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(name)", encoding: .utf8)
            else { continue }
            for line in info.split(separator: "\n") where line.hasPrefix("flags:") {
                let octal = line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces)
                if let flags = Int32(octal, radix: 8) { result.append(flags) }
            }
        }
        return result
    }

    /// Whether some descriptor of this process has `path` open with `O_DIRECT`.
    static func hasDirectDescriptor(on path: String) -> Bool {
        flags(ofDescriptorsOn: path).contains { $0 & directFlag != 0 }
    }

    /// Whether the file system of `directory` accepts `O_DIRECT` (tmpfs refuses it before Linux 6.6).
    static func directIOIsSupported(in directory: String) -> Bool {
        let probe = "\(directory)/.direct-io-probe"
        let fd = open(probe, O_WRONLY | O_CREAT | O_CLOEXEC | directFlag, 0o644)
        defer { unlink(probe) }
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }
}
