@_exported import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where a download manager keeps its state between runs: one store per manager identifier.
///
/// The engine and the facade describe every change as a ``StoreChange`` and hand it to
/// ``record(_:)`` as it happens; the store appends it to a journal (O(1) per change, whatever
/// the size of the list) and folds the journal into a snapshot when it compacts. ``load()``
/// gives back everything as one ``StoreSnapshot``.
///
/// Implementations are thread-safe; ``record(_:)`` never blocks on disk I/O for longer than it
/// takes to copy the change into a buffer.
public protocol TaskStore: AnyObject, Sendable {
    /// The manager identifier this store belongs to.
    var identifier: String { get }

    /// Reads the snapshot and replays the journal. A torn last journal entry (a crash in the
    /// middle of a write) is dropped and reported in ``StoreSnapshot/repairs``; a corrupt
    /// snapshot falls back to the previous one when there is one, else throws
    /// ``StoreError/Code/corrupt`` and leaves the files untouched.
    func load() throws(StoreError) -> StoreSnapshot

    /// Records changes, in order. They reach the journal file within
    /// ``StoreConfiguration/flushDelay``; ``StoreChange/isDurable`` changes (a task added,
    /// finished, failed, removed; list, trash, configuration) are written and synced before
    /// this returns.
    func record(_ changes: [StoreChange]) throws(StoreError)

    /// Records changes, in order, like ``record(_:)``, but does not wait for the sync of the
    /// durable ones: they are written to the journal file before this returns (so they survive
    /// the process being killed), and `whenDurable` is called once they are synced (so they
    /// survive a power loss), with the sync's error if it failed. Many callers share one sync
    /// (group commit), so a stream of durable changes costs far fewer syncs than changes.
    ///
    /// `whenDurable` is called exactly once, on a thread of the store's, or on the caller's
    /// before this returns when there was nothing to sync. It is not called when this throws.
    func record(
        _ changes: [StoreChange], whenDurable: @escaping @Sendable (StoreError?) -> Void
    ) throws(StoreError)

    /// Writes and syncs every recorded change now (the seed's `saveData()`).
    func save() throws(StoreError)

    /// Folds the journal into a new snapshot, atomically, and starts an empty journal.
    func compact() throws(StoreError)

    /// Saves, and releases the files. Later calls throw ``StoreError/Code/closed``.
    func close() throws(StoreError)
}

extension TaskStore {
    /// Records the changes with ``record(_:)`` (synced before it returns), then calls
    /// `whenDurable`: the behaviour for stores without group commit.
    public func record(
        _ changes: [StoreChange], whenDurable: @escaping @Sendable (StoreError?) -> Void
    ) throws(StoreError) {
        try record(changes)
        whenDurable(nil)
    }
}

/// Options shared by the backends.
public struct StoreConfiguration: Sendable, Hashable {
    /// The directory holding one file set per manager identifier.
    public var rootDirectory: String
    /// The longest a non-durable change (progress, a resume offset) waits in memory before it
    /// is written to the journal.
    public var flushDelay: Duration
    /// Compact when the journal holds more entries than this and more than the snapshot.
    public var compactionThreshold: Int

    /// Options with a root directory, one second of flush delay and a 10 000-entry threshold.
    public init(rootDirectory: String, flushDelay: Duration = .seconds(1), compactionThreshold: Int = 10_000) {
        self.rootDirectory = rootDirectory
        self.flushDelay = flushDelay
        self.compactionThreshold = compactionThreshold
    }

    /// `$XDG_DATA_HOME/peregrine`, or `~/.local/share/peregrine`.
    public static var defaultRootDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/peregrine" }
        let home = environment["HOME"] ?? "/tmp"
        return home + "/.local/share/peregrine"
    }
}

/// A value of a property list, kept exactly: a date stays a date, data stays data, an integer
/// stays an integer (never a real) in both backends. Used for tasks' meta info and the
/// manager's configuration.
public indirect enum PropertyListValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case date(Date)
    case data(Data)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])
}

/// What a store keeps of a task's checksum verification.
public struct StoredVerification: Sendable, Hashable {
    /// `unverified`, `verified` or `mismatch`.
    public var status: String
    /// The expected checksum as `algorithm=hex`, for a mismatch.
    public var expected: String?
    /// The computed checksum as `algorithm=hex`, for a mismatch.
    public var actual: String?

    /// A verification record.
    public init(status: String, expected: String? = nil, actual: String? = nil) {
        self.status = status
        self.expected = expected
        self.actual = actual
    }
}

/// Everything a store keeps of one task.
///
/// A value type with value semantics. It is compact in memory, because a store loads every task
/// at once (a million of them, in a large queue): the fields nearly every task has are inline,
/// and the ones most tasks leave empty are in two out-of-line boxes, each copied on write and
/// absent while all its fields are empty: one for where a transfer stands (a list other than
/// the default, the temporary file, a failure's reason, a resume record), one for what callers
/// set on few tasks (names, meta info, verification, limits, mirrors). 104 bytes inline, against
/// 424 with every field inline. A file name that is the URL's last path component (the usual
/// case: the name every download manager derives from a URL) is not kept a second time but read
/// from the URL.
public struct StoredTask: Sendable, Hashable {
    /// The URL exactly as the user gave it: the task's key.
    public var urlString: String {
        get { urlStringValue }
        set {
            if present.contains(.fileNameFromURL) {
                fileNameValue = String(Self.lastPathComponent(of: urlStringValue))
                present.remove(.fileNameFromURL)
            }
            urlStringValue = newValue
        }
    }
    /// The file's name, relative to the download directory.
    public var fileName: String? {
        get { present.contains(.fileNameFromURL) ? String(Self.lastPathComponent(of: urlStringValue)) : fileNameValue }
        set { setFileName(newValue) }
    }
    /// Whether the file name is read from the URL instead of kept apart (for tests).
    package var fileNameIsReadFromURL: Bool { present.contains(.fileNameFromURL) }
    private var urlStringValue: String
    /// The file name, unless it is the URL's last path component (``Present/fileNameFromURL``).
    private var fileNameValue: String?
    /// The response's MIME type.
    public var mimeType: String?
    /// The bytes received when the record was taken.
    public var receivedLength: Int64
    /// When the task was added.
    public var addedAt: Date
    private var expectedLengthValue: Int64
    private var finishedAtValue: Date
    /// The kind's index in ``FileKind/allCases`` plus one; zero for none.
    private var kindValue: UInt8
    /// The state, without a failure's reason (which is in the box).
    private var stateValue: StateValue
    private var present: Present
    /// Where the transfer stands beyond its counts: set for a stopped, failed or listed task.
    private var transfer: CopyOnWriteFields<TransferFields>
    /// What callers set on few tasks: names, meta info, verification, limits, mirrors.
    private var extras: CopyOnWriteFields<ExtraFields>

    /// Which optional inline fields hold a value.
    private struct Present: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let expectedLength = Present(rawValue: 1)
        static let finishedAt = Present(rawValue: 2)
        /// The file name is the URL's last path component, and not kept apart from it.
        static let fileNameFromURL = Present(rawValue: 4)
    }

    /// What follows the URL's last `/`.
    private static func lastPathComponent(of urlString: String) -> Substring {
        let utf8 = urlString.utf8
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return urlString[...] }
        return Substring(utf8[utf8.index(after: slash)...])
    }

    /// Whether `name` is what follows the URL's last `/`: the URL ends with a `/` followed by
    /// the name, and the name has no `/` of its own. Compared as bytes where both are contiguous (native
    /// strings are), by the same definition as ``lastPathComponent(of:)`` otherwise.
    private static func isLastPathComponent(_ name: String, of urlString: String) -> Bool {
        let compared = urlString.utf8.withContiguousStorageIfAvailable { url in
            name.utf8.withContiguousStorageIfAvailable { name -> Bool in
                let start = url.count - name.count
                guard start > 0, url[start - 1] == UInt8(ascii: "/"), !name.contains(UInt8(ascii: "/")) else {
                    return false
                }
                return memcmp(url.baseAddress! + start, name.baseAddress!, name.count) == 0
            }
        }
        return (compared ?? nil) ?? name.utf8.elementsEqual(lastPathComponent(of: urlString).utf8)
    }

    /// Keeps a file name, or only a mark when it is the URL's last path component and long
    /// enough to take an allocation of its own (a string of up to 15 UTF-8 bytes is inline).
    private mutating func setFileName(_ name: String?) {
        if let name, name.utf8.count > 15, Self.isLastPathComponent(name, of: urlStringValue) {
            fileNameValue = nil
            present.insert(.fileNameFromURL)
        } else {
            fileNameValue = name
            present.remove(.fileNameFromURL)
        }
    }

    private enum StateValue: UInt8, Sendable, Hashable {
        case notInList, pending, downloading, paused, stopped, finished, failed
    }

    private struct TransferFields: EmptiableFields {
        var list = ""
        var temporaryFileName: String?
        var failure: FailureReason?
        var resumeRecord: ResumeRecord?

        static let empty = TransferFields()
    }

    private struct ExtraFields: EmptiableFields {
        var displayName: String?
        var preferredFileName: String?
        var metaInfo: [String: PropertyListValue] = [:]
        var checksum: String?
        var verification: StoredVerification?
        var checksumURL: String?
        var verificationRetry: StoredVerificationRetry?
        var maxConnections: Int?
        var speedLimit: Int64?
        var mirrors: [String] = []
        var subdirectory: String?

        static let empty = ExtraFields()
    }

    /// The identifier of the download list (scope) the task belongs to; empty for the default.
    public var list: String {
        get { transfer.fields.list }
        set { transfer.update(\.list, newValue) }
    }
    /// The name shown for the task, when it differs from the file name.
    public var displayName: String? {
        get { extras.fields.displayName }
        set { extras.update(\.displayName, newValue) }
    }
    /// The hidden temporary file beside it, relative to the download directory.
    public var temporaryFileName: String? {
        get { transfer.fields.temporaryFileName }
        set { transfer.update(\.temporaryFileName, newValue) }
    }
    /// The name the caller asked for.
    public var preferredFileName: String? {
        get { extras.fields.preferredFileName }
        set { extras.update(\.preferredFileName, newValue) }
    }
    /// The file kind.
    public var kind: FileKind? {
        get { kindValue == 0 ? nil : FileKind.allCases[Int(kindValue) - 1] }
        set { kindValue = newValue.flatMap { FileKind.allCases.firstIndex(of: $0) }.map { UInt8($0 + 1) } ?? 0 }
    }
    /// The file's size, when known.
    public var expectedLength: Int64? {
        get { present.contains(.expectedLength) ? expectedLengthValue : nil }
        set {
            expectedLengthValue = newValue ?? 0
            if newValue == nil { present.remove(.expectedLength) } else { present.insert(.expectedLength) }
        }
    }
    /// The state, with its failure reason.
    public var state: DownloadState {
        get {
            switch stateValue {
            case .notInList: .notInList
            case .pending: .pending
            case .downloading: .downloading
            case .paused: .paused
            case .stopped: .stopped
            case .finished: .finished
            case .failed: .failed(transfer.fields.failure ?? FailureReason(.unknown, message: ""))
            }
        }
        set {
            let (value, failure) = Self.split(newValue)
            stateValue = value
            transfer.update(\.failure, failure)
        }
    }

    /// A state as it is kept: the value inline, a failure's reason in the box.
    private static func split(_ state: DownloadState) -> (StateValue, FailureReason?) {
        switch state {
        case .notInList: (.notInList, nil)
        case .pending: (.pending, nil)
        case .downloading: (.downloading, nil)
        case .paused: (.paused, nil)
        case .stopped: (.stopped, nil)
        case .finished: (.finished, nil)
        case .failed(let reason): (.failed, reason)
        }
    }
    /// Where the transfer can continue.
    public var resumeRecord: ResumeRecord? {
        get { transfer.fields.resumeRecord }
        set { transfer.update(\.resumeRecord, newValue) }
    }
    /// When it finished.
    public var finishedAt: Date? {
        get { present.contains(.finishedAt) ? finishedAtValue : nil }
        set {
            finishedAtValue = newValue ?? Date(timeIntervalSinceReferenceDate: 0)
            if newValue == nil { present.remove(.finishedAt) } else { present.insert(.finishedAt) }
        }
    }
    /// The caller's meta info (SDE's `metaInfo`), property-list typed.
    public var metaInfo: [String: PropertyListValue] {
        get { extras.fields.metaInfo }
        set { extras.update(\.metaInfo, newValue) }
    }
    /// The expected checksum specification (`sha256=…`).
    public var checksum: String? {
        get { extras.fields.checksum }
        set { extras.update(\.checksum, newValue) }
    }
    /// The verification result.
    public var verification: StoredVerification? {
        get { extras.fields.verification }
        set { extras.update(\.verification, newValue) }
    }
    /// Where the expected checksum is fetched from (a `.sha256` or `SHA256SUMS` URL).
    public var checksumURL: String? {
        get { extras.fields.checksumURL }
        set { extras.update(\.checksumURL, newValue) }
    }
    /// The task's own retry rule on a mismatch, when it has one.
    public var verificationRetry: StoredVerificationRetry? {
        get { extras.fields.verificationRetry }
        set { extras.update(\.verificationRetry, newValue) }
    }
    /// How many connections the task may use; nil for the engine's setting.
    public var maxConnections: Int? {
        get { extras.fields.maxConnections }
        set { extras.update(\.maxConnections, newValue) }
    }
    /// The task's own speed limit in bytes per second; nil for none.
    public var speedLimit: Int64? {
        get { extras.fields.speedLimit }
        set { extras.update(\.speedLimit, newValue) }
    }
    /// Other URLs of the same file (mirrors), in order.
    public var mirrors: [String] {
        get { extras.fields.mirrors }
        set { extras.update(\.mirrors, newValue) }
    }
    /// The folder inside the download directory the file goes in (a relative path); nil for
    /// the download directory itself.
    public var subdirectory: String? {
        get { extras.fields.subdirectory }
        set { extras.update(\.subdirectory, newValue) }
    }

    /// A task record.
    public init(
        urlString: String, list: String = "", displayName: String? = nil, fileName: String? = nil,
        temporaryFileName: String? = nil, preferredFileName: String? = nil, kind: FileKind? = nil,
        mimeType: String? = nil, expectedLength: Int64? = nil, receivedLength: Int64 = 0, state: DownloadState,
        resumeRecord: ResumeRecord? = nil, addedAt: Date, finishedAt: Date? = nil,
        metaInfo: [String: PropertyListValue] = [:], checksum: String? = nil, verification: StoredVerification? = nil,
        checksumURL: String? = nil, verificationRetry: StoredVerificationRetry? = nil, maxConnections: Int? = nil,
        speedLimit: Int64? = nil, mirrors: [String] = [], subdirectory: String? = nil
    ) {
        urlStringValue = urlString
        fileNameValue = nil
        self.mimeType = mimeType
        self.receivedLength = receivedLength
        self.addedAt = addedAt
        expectedLengthValue = 0
        finishedAtValue = Date(timeIntervalSinceReferenceDate: 0)
        kindValue = 0
        let (value, failure) = Self.split(state)
        stateValue = value
        present = []
        transfer = CopyOnWriteFields(
            TransferFields(
                list: list, temporaryFileName: temporaryFileName, failure: failure, resumeRecord: resumeRecord))
        extras = CopyOnWriteFields(
            ExtraFields(
                displayName: displayName, preferredFileName: preferredFileName, metaInfo: metaInfo,
                checksum: checksum, verification: verification, checksumURL: checksumURL,
                verificationRetry: verificationRetry, maxConnections: maxConnections, speedLimit: speedLimit,
                mirrors: mirrors, subdirectory: subdirectory))
        self.kind = kind
        self.expectedLength = expectedLength
        self.finishedAt = finishedAt
        setFileName(fileName)
    }

    public static func == (lhs: StoredTask, rhs: StoredTask) -> Bool {
        lhs.urlStringValue == rhs.urlStringValue
            && (lhs.present.contains(.fileNameFromURL) && rhs.present.contains(.fileNameFromURL)
                || lhs.fileName == rhs.fileName)
            && lhs.mimeType == rhs.mimeType
            && lhs.receivedLength == rhs.receivedLength && lhs.addedAt == rhs.addedAt
            && lhs.expectedLength == rhs.expectedLength && lhs.finishedAt == rhs.finishedAt
            && lhs.kindValue == rhs.kindValue && lhs.stateValue == rhs.stateValue
            && lhs.transfer == rhs.transfer && lhs.extras == rhs.extras
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(urlString)
        hasher.combine(fileName)
        hasher.combine(mimeType)
        hasher.combine(receivedLength)
        hasher.combine(addedAt)
        hasher.combine(expectedLength)
        hasher.combine(finishedAt)
        hasher.combine(kindValue)
        hasher.combine(stateValue)
        hasher.combine(transfer)
        hasher.combine(extras)
    }
}

/// Fields kept out of line, with a value that means "all empty".
private protocol EmptiableFields: Sendable, Hashable {
    static var empty: Self { get }
}

/// Fields in a box shared between copies of a value, copied when a copy that shares it changes
/// (copy on write), and absent while the fields are all empty.
private struct CopyOnWriteFields<Fields: EmptiableFields>: Sendable, Hashable {
    /// Mutated only while one value holds the only reference.
    private final class Box: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var box: Box?

    init(_ fields: Fields) {
        box = fields == .empty ? nil : Box(fields)
    }

    var fields: Fields { box?.fields ?? .empty }

    /// Changes one field, without a copy when this value holds the only reference.
    mutating func update<Value: Equatable>(_ path: WritableKeyPath<Fields, Value>, _ value: Value) {
        // Only a field set back to its default can leave the box empty.
        let isDefault = value == Fields.empty[keyPath: path]
        if box == nil {
            guard !isDefault else { return }
            var fields = Fields.empty
            fields[keyPath: path] = value
            box = Box(fields)
        } else if isKnownUniquelyReferenced(&box) {
            box!.fields[keyPath: path] = value
            if isDefault, box!.fields == .empty { box = nil }
        } else {
            var fields = box!.fields
            fields[keyPath: path] = value
            box = isDefault && fields == .empty ? nil : Box(fields)
        }
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.box === rhs.box || lhs.fields == rhs.fields }

    func hash(into hasher: inout Hasher) { hasher.combine(fields) }
}

/// A task's own rule for a checksum mismatch, as a store keeps it.
public struct StoredVerificationRetry: Sendable, Hashable {
    /// How many downloads run in all before a mismatch fails the task.
    public var maxAttempts: Int
    /// What becomes of the mismatched file (the policy's raw value, e.g. `keepAside`).
    public var mismatchedFile: String

    /// A retry record.
    public init(maxAttempts: Int, mismatchedFile: String) {
        self.maxAttempts = maxAttempts
        self.mismatchedFile = mismatchedFile
    }
}

/// Everything a store keeps of one download list: its order, sections, sorting and trash.
public struct StoredList: Sendable, Hashable {
    /// The list's identifier; empty for the default list.
    public var identifier: String
    /// The URL strings, section by section.
    public var sections: [[String]]
    /// One title per section.
    public var sectionTitles: [String]
    /// The trash (SDE's `toDeleteList`), most recently deleted first.
    public var trash: [String]
    /// The sort type's raw value (`manual`, `addTime`, `fileName`, `fileSize`, `fileType`).
    public var sortType: String
    /// The sort order's raw value (`ascending`, `descending`).
    public var sortOrder: String
    /// The sectioning options' raw bits.
    public var sectioning: Int
    /// The moment add-time groups were computed for.
    public var addTimeReference: Date?
    /// The list's concurrency limit (≤ 0 unlimited); nil for the manager's.
    public var maxDownloadCount: Int?

    /// A list record.
    public init(
        identifier: String = "", sections: [[String]] = [], sectionTitles: [String] = [], trash: [String] = [],
        sortType: String = "addTime", sortOrder: String = "ascending", sectioning: Int = 0,
        addTimeReference: Date? = nil, maxDownloadCount: Int? = nil
    ) {
        self.identifier = identifier
        self.sections = sections
        self.sectionTitles = sectionTitles
        self.trash = trash
        self.sortType = sortType
        self.sortOrder = sortOrder
        self.sectioning = sectioning
        self.addTimeReference = addTimeReference
        self.maxDownloadCount = maxDownloadCount
    }
}

/// A persisted custom thumbnail: which image file belongs to which task.
public struct StoredCustomThumbnail: Sendable, Hashable {
    /// The image file's name inside the custom-thumbnail directory.
    public var fileName: String
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// The pixel format's raw value.
    public var pixelFormat: String
    /// The image format's raw value.
    public var format: String
    /// A hash of the image data.
    public var contentIdentifier: String

    /// A custom-thumbnail record.
    public init(
        fileName: String, width: Int, height: Int, pixelFormat: String, format: String, contentIdentifier: String
    ) {
        self.fileName = fileName
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.format = format
        self.contentIdentifier = contentIdentifier
    }
}

/// One change to a store's state.
public enum StoreChange: Sendable, Hashable {
    /// A task was added or changed: keep this record (replaces any earlier one for its URL).
    case putTask(StoredTask)
    /// A task left the manager.
    case removeTask(urlString: String)
    /// A list changed: keep this record (replaces the list with its identifier).
    case putList(StoredList)
    /// A list was removed.
    case removeList(identifier: String)
    /// The manager's configuration (max count, flags …), replaced as a whole.
    case setConfiguration([String: PropertyListValue])
    /// A task's custom thumbnail was set (or removed, with nil).
    case setCustomThumbnail(urlString: String, StoredCustomThumbnail?)

    /// Whether the change must be on disk before ``TaskStore/record(_:)`` returns: every change
    /// except a task update that only moves its progress (`downloading` with a new received
    /// length or resume offset).
    public var isDurable: Bool {
        if case .putTask(let task) = self, task.state == .downloading { return false }
        return true
    }
}

/// Everything a store holds for one manager.
public struct StoreSnapshot: Sendable, Hashable {
    /// The tasks, in the order they were first added.
    public var tasks: [StoredTask]
    /// The lists by identifier.
    public var lists: [String: StoredList]
    /// The manager's configuration.
    public var configuration: [String: PropertyListValue]
    /// Custom thumbnails by task URL string.
    public var customThumbnails: [String: StoredCustomThumbnail]
    /// What ``TaskStore/load()`` had to repair (a torn journal entry dropped, a snapshot
    /// replaced by its backup …), for the log; empty when the files were sound.
    public var repairs: [String]

    /// A snapshot.
    public init(
        tasks: [StoredTask] = [], lists: [String: StoredList] = [:], configuration: [String: PropertyListValue] = [:],
        customThumbnails: [String: StoredCustomThumbnail] = [:], repairs: [String] = []
    ) {
        self.tasks = tasks
        self.lists = lists
        self.configuration = configuration
        self.customThumbnails = customThumbnails
        self.repairs = repairs
    }
}

/// Why a store could not read or write.
public struct StoreError: PeregrineError {
    /// The kind of failure.
    public struct Code: PeregrineErrorCode {
        public let name: String
        private init(_ name: String) { self.name = name }
        /// A file could not be read or written (permissions, I/O error).
        public static let ioFailed = Code("ioFailed")
        /// The disk is full (ENOSPC, EDQUOT): nothing already stored was lost.
        public static let diskFull = Code("diskFull")
        /// A file is not what this backend wrote and no backup could replace it.
        public static let corrupt = Code("corrupt")
        /// A file was written by a newer format version.
        public static let unsupportedVersion = Code("unsupportedVersion")
        /// Another process holds the store's lock.
        public static let locked = Code("locked")
        /// The identifier cannot name a file set (empty, a path, hidden).
        public static let invalidIdentifier = Code("invalidIdentifier")
        /// The store was closed.
        public static let closed = Code("closed")
        /// The store's database server cannot be reached, or the connection to it was lost: the
        /// failed call wrote nothing (its transaction was rolled back) and the caller keeps its
        /// state; a later call connects again.
        public static let unavailable = Code("unavailable")
        /// The store's location (a connection string, an option) cannot be used as given.
        public static let invalidConfiguration = Code("invalidConfiguration")
    }

    /// The kind of failure.
    public var code: Code
    /// The file concerned, when there is one.
    public var path: String?
    /// What happened, for people.
    public var message: String

    /// An error.
    public init(_ code: Code, path: String? = nil, _ message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    public var description: String {
        if let path { return "\(code): \(path): \(message)" }
        return "\(code): \(message)"
    }
}
