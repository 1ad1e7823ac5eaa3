import PeregrineCore
import PeregrineJSONStorage
import PeregrineJournal
import PeregrinePlistStorage
import PeregrineStorage
import Synchronization
import TestSupport
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The backends every conformance test runs against.
enum StoreBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case json
    case plist

    var testDescription: String { rawValue }

    /// Opens the backend's store for `identifier` under `root`.
    func open(
        _ root: String, identifier: String = "manager", flushDelay: Duration = .seconds(1),
        compactionThreshold: Int = 10_000, fileSystem: StoreFileSystem = .posix, readWindow: Int = 16 << 20
    ) throws(StoreError) -> any TaskStore {
        let configuration = StoreConfiguration(
            rootDirectory: root, flushDelay: flushDelay, compactionThreshold: compactionThreshold)
        switch self {
        case .json:
            return try JSONTaskStore(
                identifier: identifier, configuration: configuration, fileSystem: fileSystem, readWindow: readWindow)
        case .plist:
            return try PlistTaskStore(
                identifier: identifier, configuration: configuration, fileSystem: fileSystem, readWindow: readWindow)
        }
    }

    /// The journaled store behind a store this backend opened.
    func journaled(_ store: any TaskStore) -> (compactedEntries: () -> Int, segments: () throws -> [Int64]) {
        switch self {
        case .json:
            let store = (store as! JSONTaskStore).journaled
            return ({ store.journalEntryCount }, { try store.journalSegments() })
        case .plist:
            let store = (store as! PlistTaskStore).journaled
            return ({ store.journalEntryCount }, { try store.journalSegments() })
        }
    }

    /// The snapshot file's path.
    func snapshotPath(_ root: String, identifier: String = "manager") -> String { "\(root)/\(identifier).\(rawValue)" }

    /// The journal segment files' paths, in order.
    func segmentPaths(_ root: String, identifier: String = "manager") throws -> [String] {
        let prefix = "\(identifier).\(rawValue).journal."
        return try StoreFiles.names(in: root).filter { $0.hasPrefix(prefix) && Int($0.dropFirst(prefix.count)) != nil }
            .sorted { Int($0.dropFirst(prefix.count))! < Int($1.dropFirst(prefix.count))! }.map { "\(root)/\($0)" }
    }
}

/// A fresh directory for one test, removed at the end.
func withTemporaryDirectory<Result>(_ body: (String) async throws -> Result) async throws -> Result {
    let directory = try TemporaryDirectory(prefix: "peregrine-store")
    defer { directory.remove() }
    return try await body(directory.path)
}

/// Reads a whole file.
func readBytes(_ path: String) throws -> [UInt8] {
    guard let file = try MappedFile(path: path) else { throw StoreError(.ioFailed, path: path, "missing") }
    return file.withUnsafeBytes { Array($0) }
}

/// Replaces a file's contents (not atomically: this is the test damaging it).
func writeBytes(_ bytes: [UInt8], to path: String) throws {
    let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard descriptor >= 0 else { throw StoreError(.ioFailed, path: path, "cannot open") }
    defer { Glibc.close(descriptor) }
    try StoreFiles.writeAll(descriptor, bytes, path: path, fileSystem: .posix)
}

/// Copies the store files as they are on disk now (what a crash at this moment would leave),
/// without the lock, into `destination`.
func copyStoreFiles(from root: String, to destination: String) throws {
    try StoreFiles.makeDirectories(destination)
    for name in try StoreFiles.names(in: root) where !name.hasSuffix(".lock") {
        try StoreFiles.copy("\(root)/\(name)", to: "\(destination)/\(name)")
    }
}

/// Loads the files as a crash now would leave them, through a second store on a copy.
func loadAfterCrash(_ backend: StoreBackend, root: String, scratch: String) throws -> StoreSnapshot {
    try? FileManager.default.removeItem(atPath: scratch)
    try copyStoreFiles(from: root, to: scratch)
    let store = try backend.open(scratch)
    defer { try? store.close() }
    return try store.load()
}

/// Waits for `condition`, polling, until `timeout`; the test fails on the `#expect` after it.
func eventually(timeout: Duration = .seconds(20), _ condition: () throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try condition()
}

/// A file system whose writes fail with ENOSPC (after writing part of what they were given)
/// while it is armed.
final class DiskFullSwitch: Sendable {
    let armed = Atomic<Bool>(false)
    /// When set, only syncs fail (with ENOSPC); writes pass.
    let failsSyncsOnly = Atomic<Bool>(false)

    var fileSystem: StoreFileSystem {
        StoreFileSystem(
            write: { [self] descriptor, bytes, count in
                if armed.load(ordering: .relaxed) {
                    if count > 1 { return Glibc.write(descriptor, bytes, count / 2) }
                    errno = ENOSPC
                    return -1
                }
                return Glibc.write(descriptor, bytes, count)
            },
            sync: { [self] descriptor in
                if armed.load(ordering: .relaxed) || failsSyncsOnly.load(ordering: .relaxed) {
                    errno = ENOSPC
                    return -1
                }
                return fdatasync(descriptor)
            })
    }
}

/// A file system whose syncs take 20 ms each (a slow disk) and are counted.
final class SlowCountingDisk: Sendable {
    let syncs = Atomic<Int>(0)

    var fileSystem: StoreFileSystem {
        StoreFileSystem(
            write: { descriptor, bytes, count in Glibc.write(descriptor, bytes, count) },
            sync: { [self] descriptor in
                syncs.add(1, ordering: .relaxed)
                usleep(20_000)
                return fdatasync(descriptor)
            })
    }
}

/// A value behind a lock, shared by reference with escaping closures.
final class Shared<Value: Sendable>: Sendable {
    let value: Locked<Value>
    init(_ initial: Value) { value = Locked(initial) }
}
