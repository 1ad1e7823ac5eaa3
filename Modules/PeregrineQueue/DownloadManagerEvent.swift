/// Something that happened in a ``DownloadQueue`` (or `DownloadManager`): a task's progress through the engine, or a
/// change of a download list that a UI can animate.
public enum DownloadManagerEvent: Sendable, Hashable {
    /// A task event of the engine (added, waiting, started, progress, paused, stopped, finished,
    /// failed, deleted, fileDeleted, restored).
    case task(EngineEvent)
    /// A download list changed: the rows and sections that moved, appeared or disappeared.
    case listChanged(DownloadListKey, ListChange)
    /// Tasks were moved to the trash (``DownloadQueueing/isTrashOpened``).
    case trashed([String])
    /// Tasks came back from the trash into the list.
    case restoredFromTrash([String])
    /// Tasks were removed from the trash for good.
    case cleanedUp([String])
    /// A task came back changed after the process ended while it ran (SDE's
    /// `NNRestoreFromAppForceQuit`): it is `stopped` with its resume record, or `pending`.
    case restoredAfterForcedQuit(String, previousState: DownloadState)
    /// A task's display name changed (SDE's `NNChangeFileDisplayName`).
    case displayNameChanged(String)
    /// A task's meta info changed.
    case metaInfoChanged(String)
}
