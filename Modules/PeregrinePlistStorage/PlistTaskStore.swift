import PeregrineJournal
@_exported import PeregrineStorage

/// A `TaskStore` that keeps a manager's state as binary property lists.
///
/// Files under `StoreConfiguration.rootDirectory`: `ID.plist` (the snapshot: binary property lists, one per record,
/// each framed with its length and CRC-32), `ID.plist.backup` (the snapshot before the last
/// compaction), `ID.plist.journal.N` (the journal, framed the same way) and `ID.plist.lock`.
/// Meta info is written as native property-list values.
///
/// Thread-safe. A change costs O(1): it is appended to the journal, never rewriting the list.
/// Durable changes are synced before ``record(_:)`` returns; progress is written within
/// `StoreConfiguration.flushDelay`.
public final class PlistTaskStore: TaskStore {
    private let store: JournaledTaskStore<BinaryPropertyListFormat>

    /// Opens the property-list file set of `identifier` under the configuration's root directory
    /// (created if needed) and takes its lock.
    ///
    /// - Throws: `StoreError.Code.invalidIdentifier` for an identifier that cannot name a file,
    ///   `StoreError.Code.locked` when another process or store object has it open,
    ///   `StoreError.Code.ioFailed` when the directory cannot be created.
    public convenience init(identifier: String, configuration: StoreConfiguration) throws(StoreError) {
        try self.init(identifier: identifier, configuration: configuration, fileSystem: .posix)
    }

    /// Opens the store writing through `fileSystem` (tests inject faults with it), reading
    /// files `readWindow` bytes at a time.
    package init(
        identifier: String, configuration: StoreConfiguration, fileSystem: StoreFileSystem,
        readWindow: Int = 16 << 20
    ) throws(StoreError) {
        store = try JournaledTaskStore(
            identifier: identifier, configuration: configuration, format: BinaryPropertyListFormat(),
            fileSystem: fileSystem, readWindow: readWindow)
    }

    public var identifier: String { store.identifier }
    public func load() throws(StoreError) -> StoreSnapshot { try store.load() }
    public func record(_ changes: [StoreChange]) throws(StoreError) { try store.record(changes) }
    public func record(_ changes: [StoreChange], whenDurable: @escaping @Sendable (StoreError?) -> Void)
        throws(StoreError)
    { try store.record(changes, whenDurable: whenDurable) }
    public func save() throws(StoreError) { try store.save() }
    public func compact() throws(StoreError) { try store.compact() }
    public func close() throws(StoreError) { try store.close() }

    /// The underlying journaled store, for tests and tools in this package.
    package var journaled: JournaledTaskStore<BinaryPropertyListFormat> { store }
}
