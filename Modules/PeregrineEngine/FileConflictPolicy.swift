import PeregrineCore

/// What happens when a finished download's name is already taken in the download directory.
public enum FileConflictPolicy: Sendable, Hashable {
    /// Keep the existing file and name the new one `name (1).ext`, `name (2).ext`, … The default.
    case rename
    /// Replace the existing file (atomically, by renaming over it).
    case replace
    /// Keep the existing file and fail the task with `FailureReason.Code.fileExists` — checked
    /// as soon as the name is known, so the rest of the body is not downloaded.
    case skip
}

extension FailureReason.Code {
    /// The destination file already exists and the conflict policy is ``FileConflictPolicy/skip``.
    public static let fileExists = FailureReason.Code(rawValue: "fileExists")
}
