import Dispatch
import PeregrineCore
import PeregrineStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The snapshot-plus-journal store both file backends are made of, generic over their
/// serializer.
///
/// Files, for identifier `ID` and format `F` (`json`, `plist`) under the root directory:
/// - `ID.F`: the snapshot, replaced atomically (temporary file, fsync, rename, directory fsync);
/// - `ID.F.backup`: the snapshot before the last compaction, for when the snapshot is damaged;
/// - `ID.F.journal.N`: journal segments, appended to; a snapshot names the first segment it
///   does not include, and segments stay until the compaction after next, so the backup plus
///   the journal still give the whole state;
/// - `ID.F.lock`: held with `flock` while the store is open.
///
/// Each session appends to a new segment, so a torn tail left by a crash is never followed by
/// new entries. Every record is framed with a CRC-32.
///
/// A segment is zero-filled ahead of its records, in steps that double from 64 KiB to 4 MiB,
/// so that most appends overwrite blocks the file already has: the `fdatasync` that makes a
/// change durable then flushes data alone, without a new file size (ext4 measured 210–290 µs
/// against 500–650 µs for a 5 KB append). A reader takes zero bytes after the last record as
/// unused space; closing or sealing a segment cuts it to its records.
package final class JournaledTaskStore<Format: StoreFormat>: TaskStore {
    private struct Journal {
        var buffer: [UInt8] = []
        /// Non-durable changes (a `downloading` task's progress) not encoded yet, in order, at
        /// most one per task: a newer one takes an older one's place. Encoded into ``buffer``
        /// before anything is written, so that the journal keeps the order of the changes.
        var pending: [StoreChange] = []
        var pendingIndex: [String: Int] = [:]
        var descriptor: Int32 = -1
        var segment: Int64
        var goodLength = 0
        /// The segment's length on disk: ``goodLength`` plus the zero-filled space after it.
        var allocatedLength = 0
        /// Whether zero-filling ahead works in this segment (not after it failed once).
        var preallocates = true
        var writtenSequence: UInt64 = 0
        var journalEntries = 0
        var snapshotRecords: Int
        var flushScheduled = false
        var compacting = false
        var closed = false
        var backgroundError: StoreError?
        /// Each list as the current segment last recorded it: a later record of the list is
        /// written as its edit (``StoredListEdit``). Emptied when a segment starts, so that a
        /// segment's first record of a list is whole.
        var writtenLists: [String: StoredList] = [:]
    }

    private struct Loaded {
        var builder: SnapshotBuilder
        var repairs: [String]
        var journalEntries: Int
        /// Whether the snapshot file itself was damaged (so it must not become the backup).
        var snapshotDamaged: Bool
    }

    private struct FileRead {
        var exists = false
        var header: StoreFileHeader?
        var applied = 0
        var problems: [String] = []
        var torn = false
    }

    package let identifier: String
    package let configuration: StoreConfiguration
    private let format: Format
    private let fileSystem: StoreFileSystem
    private let directory: String
    private let snapshotPath: String
    private let backupPath: String
    private let segmentPrefix: String
    private let fileLock: Locked<StoreLock?>
    private let state: Locked<Journal>
    private let syncedSequence = Locked<UInt64>(0)
    private let compactionLock = Locked<Int>(0)
    private let queue: DispatchQueue
    private let syncQueue: DispatchQueue
    private let readWindow: Int

    /// Opens (creating if needed) the file set of `identifier`, and takes its lock.
    ///
    /// - Throws: ``StoreError/Code/invalidIdentifier``, ``StoreError/Code/locked`` when another
    ///   store holds the file set, ``StoreError/Code/ioFailed`` when the directory cannot be made.
    /// - Parameter readWindow: how many bytes of a file are delimited, decoded and applied at
    ///   a time when it is read (16 MiB; tests make it small to read in many windows).
    package init(
        identifier: String, configuration: StoreConfiguration, format: Format, fileSystem: StoreFileSystem = .posix,
        readWindow: Int = 16 << 20
    ) throws(StoreError) {
        self.readWindow = max(1, readWindow)
        try StoreIdentifier.validate(identifier)
        var root = configuration.rootDirectory
        while root.count > 1, root.hasSuffix("/") { root.removeLast() }
        try StoreFiles.makeDirectories(root)
        self.identifier = identifier
        self.configuration = configuration
        self.format = format
        self.fileSystem = fileSystem
        directory = root
        snapshotPath = "\(root)/\(identifier).\(format.name)"
        backupPath = snapshotPath + ".backup"
        segmentPrefix = "\(identifier).\(format.name).journal."
        fileLock = Locked(try StoreLock(path: snapshotPath + ".lock"))
        queue = DispatchQueue(label: "peregrine.store.\(identifier).\(format.name)")
        syncQueue = DispatchQueue(label: "peregrine.store.\(identifier).\(format.name).sync")
        let header = Self.header(of: snapshotPath, format: format)
        let existing = try Self.segments(in: root, prefix: segmentPrefix)
        let next = max((existing.last ?? -1) + 1, header?.segment ?? 0)
        state = Locked(Journal(segment: next, snapshotRecords: Int(header?.records ?? 0)))
        unlink(snapshotPath + ".tmp")
        unlink(backupPath + ".tmp")
    }

    deinit {
        // Not closed: write what is buffered (as a crash would not), without waiting for a sync.
        state.withLock { journal in
            if !journal.closed {
                try? writeBuffer(&journal)
                trimSegment(&journal)
                if journal.descriptor >= 0 { closeFile(journal.descriptor) }
            }
        }
    }

    // MARK: TaskStore

    package func load() throws(StoreError) -> StoreSnapshot {
        try state.withLock { journal throws(StoreError) in
            try checkOpen(journal)
            try writeBuffer(&journal)
        }
        let loaded = try compactionLock.withLock { _ throws(StoreError) in try readState(upTo: nil) }
        state.withLock { journal in
            journal.snapshotRecords = loaded.builder.recordCount
            journal.journalEntries = loaded.journalEntries
        }
        return loaded.builder.snapshot(repairs: loaded.repairs)
    }

    package func record(_ changes: [StoreChange]) throws(StoreError) {
        if let sequence = try append(changes) { try syncJournal(upTo: sequence) }
        scheduleCompactionIfDue()
    }

    package func record(
        _ changes: [StoreChange], whenDurable: @escaping @Sendable (StoreError?) -> Void
    ) throws(StoreError) {
        guard let sequence = try append(changes) else {
            scheduleCompactionIfDue()
            whenDurable(nil)
            return
        }
        KillPoint.reach("store.written")
        // One serial queue runs the syncs: while one runs, later changes are written and their
        // blocks wait; the first of them syncs them all, the others find themselves synced.
        syncQueue.async { [self] in
            do throws(StoreError) {
                try syncJournal(upTo: sequence)
                KillPoint.reach("store.synced")
                whenDurable(nil)
            } catch {
                whenDurable(error)
            }
            scheduleCompactionIfDue()
        }
    }

    /// Appends changes to the buffer, writing it to the journal file when one of them is
    /// durable; returns the write sequence to sync up to then, nil otherwise.
    ///
    /// Progress is coalesced: a task's `downloading` record replaces the one still waiting for
    /// the flush, so a task that reports progress many times a second costs one journal entry per
    /// flush, and no encoding until then.
    private func append(_ changes: [StoreChange]) throws(StoreError) -> UInt64? {
        guard !changes.isEmpty else { return nil }
        let durable = changes.contains { $0.isDurable }
        // A list is written as its edit from the record before it, which only the lock orders:
        // changes with a list are encoded under it, the others before it.
        let touchesLists = changes.contains {
            switch $0 {
            case .putList, .removeList: true
            default: false
            }
        }
        var bytes: [UInt8] = []
        if durable, !touchesLists {
            var scratch: [UInt8] = []
            for change in changes { frame(StoreRecordCoding.node(change), into: &bytes, scratch: &scratch) }
        }
        return try state.withLock { journal throws(StoreError) -> UInt64? in
            try checkOpen(journal)
            if durable {
                encodePending(&journal)
                if touchesLists { encodeWithListEdits(changes, into: &bytes, &journal) }
                journal.buffer.append(contentsOf: bytes)
                journal.journalEntries += changes.count
                try writeBuffer(&journal)
                return journal.writtenSequence
            }
            for change in changes {
                guard case .putTask(let task) = change else { continue }  // only progress is not durable
                if let index = journal.pendingIndex[task.urlString] {
                    journal.pending[index] = change
                } else {
                    journal.pendingIndex[task.urlString] = journal.pending.count
                    journal.pending.append(change)
                    journal.journalEntries += 1
                }
            }
            if !journal.flushScheduled {
                journal.flushScheduled = true
                scheduleFlush()
            }
            return nil
        }
    }

    /// Encodes changes, a list as its edit from the segment's last record of it when that is
    /// smaller. Called under the lock.
    private func encodeWithListEdits(_ changes: [StoreChange], into bytes: inout [UInt8], _ journal: inout Journal) {
        var scratch: [UInt8] = []
        for change in changes {
            switch change {
            case .putList(let list):
                if let previous = journal.writtenLists[list.identifier], previous != list,
                    let edit = StoredListEdit(from: previous, to: list)
                {
                    frame(StoreRecordCoding.node(edit), into: &bytes, scratch: &scratch)
                } else {
                    frame(StoreRecordCoding.node(change), into: &bytes, scratch: &scratch)
                }
                journal.writtenLists[list.identifier] = list
            case .removeList(let identifier):
                journal.writtenLists[identifier] = nil
                frame(StoreRecordCoding.node(change), into: &bytes, scratch: &scratch)
            default:
                frame(StoreRecordCoding.node(change), into: &bytes, scratch: &scratch)
            }
        }
    }

    /// Encodes the waiting progress into the buffer, in order.
    private func encodePending(_ journal: inout Journal) {
        guard !journal.pending.isEmpty else { return }
        var scratch: [UInt8] = []
        for change in journal.pending {
            frame(StoreRecordCoding.node(change), into: &journal.buffer, scratch: &scratch)
        }
        journal.pending.removeAll(keepingCapacity: true)
        journal.pendingIndex.removeAll(keepingCapacity: true)
    }

    package func save() throws(StoreError) {
        let sequence = try state.withLock { journal throws(StoreError) in
            try checkOpen(journal)
            try writeBuffer(&journal)
            return journal.writtenSequence
        }
        try syncJournal(upTo: sequence)
    }

    package func compact() throws(StoreError) {
        try state.withLock { journal throws(StoreError) in try checkOpen(journal) }
        try compactNow()
    }

    package func close() throws(StoreError) {
        try save()
        // Let a background compaction finish before the lock is released.
        // Taking the sync lock too keeps a sync still queued from using the closed descriptor.
        compactionLock.withLock { _ in
            syncedSequence.withLock { _ in
                state.withLock { journal in
                    journal.closed = true
                    trimSegment(&journal)
                    if journal.descriptor >= 0 { closeFile(journal.descriptor) }
                    journal.descriptor = -1
                }
            }
        }
        fileLock.withLock { $0 = nil }
    }

    // MARK: For tests and tools

    /// Journal entries recorded since the snapshot (as far as this object knows).
    package var journalEntryCount: Int { state.withLock { $0.journalEntries } }

    /// The last error of a background flush or compaction, if any.
    package var backgroundError: StoreError? { state.withLock { $0.backgroundError } }

    /// The journal segments on disk, by number.
    package func journalSegments() throws(StoreError) -> [Int64] {
        try Self.segments(in: directory, prefix: segmentPrefix)
    }

    /// The path of journal segment `number`.
    package func segmentPath(_ number: Int64) -> String { "\(directory)/\(segmentPrefix)\(number)" }

    // MARK: Writing the journal

    private func checkOpen(_ journal: Journal) throws(StoreError) {
        guard !journal.closed else {
            throw StoreError(.closed, path: snapshotPath, "the store \(identifier) is closed")
        }
    }

    private func frame(_ node: StoreNode, into bytes: inout [UInt8], scratch: inout [UInt8]) {
        scratch.removeAll(keepingCapacity: true)
        format.encode(node, into: &scratch)
        format.framing.append(scratch, to: &bytes)
    }

    /// Writes the buffer to the current segment (creating it), all or nothing: a failed write
    /// is cut off again, so that the segment never holds a partial entry before later ones.
    private func writeBuffer(_ journal: inout Journal) throws(StoreError) {
        encodePending(&journal)
        guard !journal.buffer.isEmpty else { return }
        if journal.descriptor < 0 { try openSegment(&journal) }
        let path = segmentPath(journal.segment)
        if journal.preallocates, journal.goodLength + journal.buffer.count > journal.allocatedLength {
            preallocate(&journal, toHold: journal.goodLength + journal.buffer.count)
        }
        do throws(StoreError) {
            try StoreFiles.writeAll(journal.descriptor, journal.buffer, path: path, fileSystem: fileSystem)
        } catch {
            if ftruncate(journal.descriptor, off_t(journal.goodLength)) != 0
                || lseek(journal.descriptor, off_t(journal.goodLength), SEEK_SET) < 0
            {
                // The segment may now hold a partial entry: continue in a fresh one.
                closeFile(journal.descriptor)
                journal.descriptor = -1
                journal.segment += 1
            }
            journal.allocatedLength = journal.goodLength
            throw error
        }
        journal.goodLength += journal.buffer.count
        journal.allocatedLength = max(journal.allocatedLength, journal.goodLength)
        journal.buffer.removeAll(keepingCapacity: journal.buffer.capacity <= 1 << 20)
        journal.writtenSequence += 1
    }

    /// Zero-fills the segment past `needed` bytes, best effort: where it fails (a full disk, a
    /// file system that refuses), the segment is cut back and appended to as it is.
    private func preallocate(_ journal: inout Journal, toHold needed: Int) {
        let step = min(4 << 20, max(64 << 10, journal.allocatedLength))
        let target = (needed + step + 4095) & ~4095
        var offset = max(journal.allocatedLength, journal.goodLength)
        let failed = ZeroPage.bytes.withUnsafeBytes { zeros -> Bool in
            while offset < target {
                let written = pwrite(
                    journal.descriptor, zeros.baseAddress, min(zeros.count, target - offset), off_t(offset))
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return true }
                offset += written
            }
            return false
        }
        if failed {
            journal.preallocates = false
            if ftruncate(journal.descriptor, off_t(journal.goodLength)) == 0 {
                journal.allocatedLength = journal.goodLength
            } else {
                journal.allocatedLength = offset
            }
        } else {
            journal.allocatedLength = target
        }
    }

    /// Cuts the segment's zero-filled space off, before it is closed or sealed.
    private func trimSegment(_ journal: inout Journal) {
        guard journal.descriptor >= 0, journal.allocatedLength > journal.goodLength else { return }
        if ftruncate(journal.descriptor, off_t(journal.goodLength)) == 0 {
            journal.allocatedLength = journal.goodLength
        }
    }

    private func openSegment(_ journal: inout Journal) throws(StoreError) {
        while true {
            let path = segmentPath(journal.segment)
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor < 0 {
                if errno == EEXIST {
                    journal.segment += 1
                    continue
                }
                throw StoreFiles.error(errno, path: path, "cannot create the journal")
            }
            var bytes: [UInt8] = []
            var scratch: [UInt8] = []
            let header = StoreFileHeader(kind: .journal, backend: format.name, segment: journal.segment)
            frame(header.node, into: &bytes, scratch: &scratch)
            do throws(StoreError) {
                try StoreFiles.writeAll(descriptor, bytes, path: path, fileSystem: fileSystem)
                try StoreFiles.sync(descriptor, path: path, fileSystem: fileSystem)
                try StoreFiles.syncDirectory(directory)
            } catch {
                closeFile(descriptor)
                unlink(path)
                throw error
            }
            journal.descriptor = descriptor
            journal.goodLength = bytes.count
            journal.allocatedLength = bytes.count
            journal.preallocates = true
            return
        }
    }

    /// Syncs the journal up to a write sequence; one `fdatasync` serves every caller waiting
    /// at the time (group commit).
    private func syncJournal(upTo sequence: UInt64) throws(StoreError) {
        try syncedSequence.withLock { synced throws(StoreError) in
            guard synced < sequence else { return }
            let (descriptor, target, segment) = state.withLock {
                ($0.descriptor, $0.writtenSequence, $0.segment)
            }
            if descriptor >= 0 {
                try StoreFiles.sync(descriptor, path: segmentPath(segment), fileSystem: fileSystem)
            }
            synced = target
        }
    }

    private func scheduleFlush() {
        let (seconds, attoseconds) = configuration.flushDelay.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(min(nanoseconds, Int64(Int32.max))))) {
            [weak self] in
            self?.flushFromTimer()
        }
    }

    private func flushFromTimer() {
        let sequence = state.withLock { journal -> UInt64? in
            journal.flushScheduled = false
            guard !journal.closed else { return nil }
            do throws(StoreError) {
                try writeBuffer(&journal)
                return journal.writtenSequence
            } catch {
                // Keep the changes and try again after another delay (a full disk may clear).
                journal.backgroundError = error
                journal.flushScheduled = true
                scheduleFlush()
                return nil
            }
        }
        if let sequence {
            do throws(StoreError) { try syncJournal(upTo: sequence) } catch {
                state.withLock { $0.backgroundError = error }
            }
        }
        scheduleCompactionIfDue()
    }

    // MARK: Compaction

    private func scheduleCompactionIfDue() {
        let due = state.withLock { journal -> Bool in
            guard !journal.closed, !journal.compacting,
                journal.journalEntries > configuration.compactionThreshold,
                journal.journalEntries > journal.snapshotRecords
            else { return false }
            journal.compacting = true
            return true
        }
        guard due else { return }
        queue.async { [weak self] in
            guard let self else { return }
            do throws(StoreError) { try self.compactNow() } catch { self.state.withLock { $0.backgroundError = error } }
            self.state.withLock { $0.compacting = false }
        }
    }

    /// Seals the current segment, so that appends go on in a new one while the sealed ones are
    /// folded into a snapshot; returns the first segment the snapshot will not include.
    private func rotate() throws(StoreError) -> (bound: Int64, entries: Int) {
        try syncedSequence.withLock { synced throws(StoreError) in
            try state.withLock { journal throws(StoreError) in
                try checkOpen(journal)
                try writeBuffer(&journal)
                if journal.descriptor >= 0 {
                    try StoreFiles.sync(journal.descriptor, path: segmentPath(journal.segment), fileSystem: fileSystem)
                    synced = journal.writtenSequence
                    trimSegment(&journal)
                    closeFile(journal.descriptor)
                    journal.descriptor = -1
                    journal.segment += 1
                    journal.writtenLists.removeAll()
                }
                return (journal.segment, journal.journalEntries)
            }
        }
    }

    private func compactNow() throws(StoreError) {
        try compactionLock.withLock { _ throws(StoreError) in
            let (bound, entries) = try rotate()
            let loaded = try readState(upTo: bound)
            // The segments to keep are those the backup will need: the old snapshot's, or, when
            // the old snapshot is damaged and the backup stays, the backup's.
            let replacingBackup = !loaded.snapshotDamaged
            let base = Self.header(of: replacingBackup ? snapshotPath : backupPath, format: format)?.segment ?? 0
            try writeSnapshot(loaded.builder, segment: bound, replacingBackup: replacingBackup)
            // The new backup (the old snapshot) needs the segments from its base on.
            for segment in try journalSegments() where segment < base { unlink(segmentPath(segment)) }
            state.withLock { journal in
                journal.snapshotRecords = loaded.builder.recordCount
                journal.journalEntries = max(0, journal.journalEntries - entries)
            }
        }
    }

    private func writeSnapshot(_ builder: SnapshotBuilder, segment: Int64, replacingBackup: Bool)
        throws(StoreError)
    {
        let temporary = snapshotPath + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StoreFiles.error(errno, path: temporary, "cannot create the snapshot") }
        var failure: StoreError?
        var chunk: [UInt8] = []
        chunk.reserveCapacity(1 << 21)
        var scratch: [UInt8] = []
        let header = StoreFileHeader(
            kind: .snapshot, backend: format.name, segment: segment, records: Int64(builder.recordCount))
        frame(header.node, into: &chunk, scratch: &scratch)
        let flush = { (chunk: inout [UInt8]) in
            guard failure == nil else { return }
            do throws(StoreError) {
                try StoreFiles.writeAll(descriptor, chunk, path: temporary, fileSystem: self.fileSystem)
            } catch { failure = error }
            chunk.removeAll(keepingCapacity: true)
        }
        builder.forEachChange { change in
            guard failure == nil else { return }
            frame(StoreRecordCoding.node(change), into: &chunk, scratch: &scratch)
            if chunk.count >= 1 << 20 { flush(&chunk) }
        }
        flush(&chunk)
        if failure == nil {
            do throws(StoreError) { try StoreFiles.sync(descriptor, path: temporary, fileSystem: fileSystem) } catch {
                failure = error
            }
        }
        closeFile(descriptor)
        if let failure {
            unlink(temporary)
            throw failure
        }
        // Keep the snapshot being replaced as the backup, unless it is the damaged one (then
        // the backup is the last good copy, and the damaged file was kept aside by the load).
        if replacingBackup, StoreFiles.exists(snapshotPath), Self.header(of: snapshotPath, format: format) != nil {
            let linked = backupPath + ".tmp"
            unlink(linked)
            if link(snapshotPath, linked) != 0 || rename(linked, backupPath) != 0 {
                let code = errno
                unlink(temporary)
                throw StoreFiles.error(code, path: backupPath, "cannot keep the previous snapshot")
            }
        }
        guard rename(temporary, snapshotPath) == 0 else {
            let code = errno
            unlink(temporary)
            throw StoreFiles.error(code, path: snapshotPath, "cannot replace the snapshot")
        }
        try StoreFiles.syncDirectory(directory)
    }

    // MARK: Reading

    private static func header(of path: String, format: Format) -> StoreFileHeader? {
        guard let file = try? MappedFile(path: path) else { return nil }
        return file.withUnsafeBytes { bytes -> StoreFileHeader? in
            guard let first = format.framing.firstRecord(bytes), let node = try? format.decode(first) else {
                return nil
            }
            return StoreFileHeader(node)
        }
    }

    private static func segments(in directory: String, prefix: String) throws(StoreError) -> [Int64] {
        try StoreFiles.names(in: directory).compactMap { name -> Int64? in
            guard name.hasPrefix(prefix) else { return nil }
            return Int64(name.dropFirst(prefix.count))
        }.sorted()
    }

    private func readRecords(_ path: String, kind: StoreFileHeader.Kind, into builder: inout SnapshotBuilder)
        throws(StoreError) -> FileRead
    {
        var result = FileRead()
        guard let file = try MappedFile(path: path) else { return result }
        result.exists = true
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let format = self.format
        return try file.withUnsafeBytes { (bytes) throws(StoreError) -> FileRead in
            // A window at a time: delimit its records (cheap), decode them (in parallel when
            // there are many), apply them, and let the window's pages go, so that neither the
            // mapped file nor the decoded records are resident all at once.
            var offset = 0
            var end = RecordFraming.End.clean
            var started = false
            while true {
                var records: [DelimitedRecord] = []
                end = format.framing.scan(bytes, from: offset, pausingAt: offset + readWindow) {
                    payload, checksumMatches, offset in
                    let start = payload.baseAddress.map { bytes.baseAddress!.distance(to: $0) } ?? 0
                    records.append(
                        DelimitedRecord(
                            start: start, count: payload.count, checksumMatches: checksumMatches, offset: offset))
                }
                var first = 0
                if !started {
                    started = true
                    guard let record = records.first, record.offset == 0,
                        let node = try? format.decode(
                            UnsafeRawBufferPointer(rebasing: bytes[record.start..<(record.start + record.count)])),
                        let header = StoreFileHeader(node), header.kind == kind
                    else {
                        result.problems.append("\(name) does not start with a \(kind.rawValue) header")
                        return result
                    }
                    if header.version > StoreFileHeader.currentVersion {
                        throw StoreError(
                            .unsupportedVersion, path: path,
                            "written by format version \(header.version); this version reads up to "
                                + "\(StoreFileHeader.currentVersion): use a newer Peregrine (the file was left as is)")
                    }
                    guard header.backend == format.name else {
                        result.problems.append("\(name) was written by the \(header.backend) backend")
                        return result
                    }
                    result.header = header
                    if kind == .snapshot { builder.reserveCapacity(Int(clamping: min(header.records, 50_000_000))) }
                    first = 1
                }
                apply(records[first...], of: bytes, to: &builder, into: &result, name: name)
                guard case .paused(let next) = end else { break }
                file.release(upTo: next)
                offset = next
            }
            switch end {
            case .clean: break
            case .torn(let offset):
                result.torn = true
                result.problems.append(
                    "\(name) ends in an entry cut at byte \(offset) (a write interrupted by a crash); it was dropped")
            case .damaged(let offset):
                result.problems.append("\(name) is damaged from byte \(offset) on; what follows could not be read")
            case .paused: break
            }
            return result
        }
    }

    /// Decodes delimited records, in parallel when there are many, and applies them in order.
    private func apply(
        _ records: ArraySlice<DelimitedRecord>, of bytes: UnsafeRawBufferPointer, to builder: inout SnapshotBuilder,
        into result: inout FileRead, name: String
    ) {
        guard !records.isEmpty else { return }
        let count = records.count
        let chunks = count >= 20_000 ? 8 : 1
        let decoded = DecodedChunks()
        nonisolated(unsafe) let unsafeBytes = bytes
        let delimited = Array(records)
        let format = self.format
        let framing = format.framing
        let decode: @Sendable (Int) -> Void = { chunk in
            let lower = count * chunk / chunks
            let upper = count * (chunk + 1) / chunks
            var changes: [Result<StoreRecord, StoreFormatError>] = []
            changes.reserveCapacity(upper - lower)
            for index in lower..<upper {
                let record = delimited[index]
                let payload = UnsafeRawBufferPointer(
                    rebasing: unsafeBytes[record.start..<(record.start + record.count)])
                changes.append(
                    Result { () throws(StoreFormatError) in
                        // A text record that fails its checksum is taken as hand-edited only
                        // when it is still text: control bytes mean damage, not an edit.
                        if !record.checksumMatches, framing == .lines,
                            payload.contains(where: { $0 < 0x20 && $0 != 0x09 })
                        {
                            throw StoreFormatError("damaged bytes")
                        }
                        return try StoreRecordCoding.record(try format.decode(payload))
                    })
            }
            decoded.storage.withLock { $0[chunk] = changes }
        }
        if chunks == 1 { decode(0) } else { DispatchQueue.concurrentPerform(iterations: chunks, execute: decode) }
        var index = 0
        for chunk in 0..<chunks {
            let changes = decoded.storage.withLock { $0.removeValue(forKey: chunk) ?? [] }
            for change in changes {
                let record = delimited[index]
                index += 1
                switch change {
                case .success(let change):
                    guard builder.apply(change) else {
                        result.problems.append(
                            "\(name): the list edit at byte \(record.offset) does not fit the list before it "
                                + "(a record before it is missing); skipped")
                        continue
                    }
                    result.applied += 1
                    if !record.checksumMatches {
                        result.problems.append(
                            "\(name): the record at byte \(record.offset) does not match its checksum "
                                + "(edited by hand?); kept")
                    }
                case .failure(let error):
                    result.problems.append(
                        "\(name): the record at byte \(record.offset) is unreadable (\(error.message)); skipped")
                }
            }
        }
    }

    /// Reads the snapshot (or its backup) and the journal segments below `bound`.
    private func readState(upTo bound: Int64?) throws(StoreError) -> Loaded {
        var repairs: [String] = []
        var builder = SnapshotBuilder()
        var base: Int64 = 0
        var damaged = false
        let main = try readRecords(snapshotPath, kind: .snapshot, into: &builder)
        if main.exists, let header = main.header {
            base = header.segment
            var problems = main.problems
            if main.applied != Int(header.records) {
                problems.append("the snapshot holds \(main.applied) of its \(header.records) records")
            }
            if !problems.isEmpty {
                damaged = true
                repairs += problems
                keepDamaged(snapshotPath)
                var older = SnapshotBuilder()
                let backup = try readRecords(backupPath, kind: .snapshot, into: &older)
                if let backupHeader = backup.header {
                    _ = try replay(from: backupHeader.segment, upTo: base, into: &older, repairs: &repairs)
                    let added = builder.merge(missingFrom: older)
                    repairs.append("\(added) task(s) the damaged snapshot lost were taken from the backup")
                } else {
                    repairs.append("no backup snapshot could fill in what the damaged one lost")
                }
            }
        } else if main.exists || StoreFiles.exists(backupPath) {
            // The snapshot is unreadable, or gone while its backup is there: never start empty.
            damaged = true
            builder = SnapshotBuilder()
            let backup = try readRecords(backupPath, kind: .snapshot, into: &builder)
            guard let backupHeader = backup.header else {
                throw StoreError(
                    .corrupt, path: main.exists ? snapshotPath : backupPath,
                    (main.exists ? main.problems.first ?? "unreadable" : "the snapshot is missing")
                        + "; no readable backup either. Nothing was changed: restore the file or move it away")
            }
            base = backupHeader.segment
            if main.exists {
                keepDamaged(snapshotPath)
                repairs += main.problems
                repairs.append("the snapshot is unreadable: loaded the backup and the journal written since")
            } else {
                repairs.append("the snapshot is missing: loaded the backup and the journal written since")
            }
            repairs += backup.problems
        }
        let entries = try replay(from: base, upTo: bound, into: &builder, repairs: &repairs)
        return Loaded(builder: builder, repairs: repairs, journalEntries: entries, snapshotDamaged: damaged)
    }

    private func replay(
        from base: Int64, upTo bound: Int64?, into builder: inout SnapshotBuilder,
        repairs: inout [String]
    ) throws(StoreError) -> Int {
        var entries = 0
        var expected = base
        for segment in try journalSegments() where segment >= base && segment < (bound ?? Int64.max) {
            if segment > expected, expected > base {
                repairs.append("journal segments \(expected)..<\(segment) are missing")
            }
            expected = segment + 1
            let read = try readRecords(segmentPath(segment), kind: .journal, into: &builder)
            entries += read.applied
            if read.header == nil {
                repairs.append(contentsOf: read.problems)
                continue
            }
            repairs.append(contentsOf: read.problems)
            if !read.problems.isEmpty && !(read.torn && read.problems.count == 1) {
                keepDamaged(segmentPath(segment))
            }
        }
        return entries
    }

    /// Keeps a damaged file under another name (a hard link) before a compaction replaces it.
    private func keepDamaged(_ path: String) {
        let kept = path + ".damaged"
        if !StoreFiles.exists(kept) { link(path, kept) }
    }
}

/// `close(2)`, out of reach of the store's own `close()`.
private func closeFile(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// 64 KiB of zeros, the source of a segment's zero-filled space.
private enum ZeroPage {
    static let bytes = [UInt8](repeating: 0, count: 64 << 10)
}

/// Where a record's payload lies in a file, and how its framing read.
private struct DelimitedRecord: Sendable {
    var start: Int
    var count: Int
    var checksumMatches: Bool
    var offset: Int
}

/// Records decoded in parallel, by chunk.
private final class DecodedChunks: Sendable {
    let storage = Locked<[Int: [Result<StoreRecord, StoreFormatError>]]>([:])
}
