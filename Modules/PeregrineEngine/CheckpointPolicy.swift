/// How often a running download's temporary file is synced to disk so that its resume
/// record moves forward, and how finished files are made durable.
///
/// A checkpoint calls `FileSink.synchronize()` (flush and `fsync`) and records the offset it
/// returns: the persisted resume offset never exceeds the bytes on stable storage. Each
/// checkpoint costs an `fsync` on the transport's thread, so they are rate-limited.
public struct CheckpointPolicy: Sendable, Hashable {
    /// A checkpoint happens at least this long after the previous one, when bytes arrived.
    public var interval: Duration
    /// … or as soon as this many bytes arrived since the previous one.
    public var byteThreshold: Int64
    /// Whether a finished file is `fsync`ed before it is renamed into place (skipped for an
    /// empty file), so that a crash cannot leave a torn file under the final name.
    public var syncsFinishedFile: Bool
    /// Whether the directory is `fsync`ed after the rename, so that the rename itself
    /// survives a crash. Off by default: a lost rename is found on restore (the finished file
    /// is missing, the task comes back pending) and costs one journal commit per file.
    public var syncsDirectory: Bool

    /// Creates a policy: every second or 64 MiB, finished files synced, directory not.
    public init(
        interval: Duration = .seconds(1), byteThreshold: Int64 = 64 << 20, syncsFinishedFile: Bool = true,
        syncsDirectory: Bool = false
    ) {
        self.interval = interval
        self.byteThreshold = byteThreshold
        self.syncsFinishedFile = syncsFinishedFile
        self.syncsDirectory = syncsDirectory
    }

    /// Whether a checkpoint is due after `bytes` new bytes and `elapsed` time.
    func isDue(newBytes bytes: Int64, elapsed: Duration) -> Bool {
        bytes > 0 && (elapsed >= interval || bytes >= byteThreshold)
    }
}
