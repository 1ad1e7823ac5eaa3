import PeregrineCore

/// aria2's status names.
public enum DownloadStatus: String, Sendable, Hashable, CaseIterable {
    case active, waiting, paused, error, complete, removed

    /// The status of a Peregrine task: `downloading` is active; `pending` in the queue is
    /// waiting, `pending` outside it waiting too unless a client paused it; `stopped` and
    /// `paused` are paused; `finished` is complete; `failed` is error; a task in the trash is
    /// removed.
    public init(_ state: DownloadState, isQueued: Bool, pausedByClient: Bool, inTrash: Bool) {
        if inTrash {
            self = .removed
            return
        }
        switch state {
        case .downloading: self = .active
        case .pending: self = pausedByClient && !isQueued ? .paused : .waiting
        case .stopped, .paused: self = .paused
        case .finished: self = .complete
        case .failed: self = .error
        case .notInList: self = .removed
        }
    }

    /// Whether a download with this status is in `tellStopped`'s list.
    var isStopped: Bool { self == .error || self == .complete || self == .removed }

    /// aria2's exit code for a failure (see aria2c's manual, "EXIT STATUS").
    static func errorCode(of reason: FailureReason) -> String {
        switch reason.code {
        case .timeout: "2"
        case .httpStatus where reason.httpStatus == 404: "3"
        case .tooSlow: "5"
        case .network: "6"
        case .cannotResume: "8"
        case .diskFull: "9"
        case .fileSystem: "16"
        case .dns: "19"
        case .httpStatus: "22"
        case .authentication: "24"
        case .verification: "32"
        default: "1"
        }
    }
}
