import Peregrine
import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension RPCDispatcher {
    /// The per-download options a fleet's queue carries to the service that claims the task.
    static let fleetOptions: Set<String> = ["out", "checksum"]

    /// `aria2.addUri` on a service of a fleet (``RPCServiceConfiguration/fleetQueue``): the URL
    /// goes into the shared queue, where any service of the fleet may claim it, and the answer
    /// is a GID of this service's. Until a service claims it, `tellStatus` reports it
    /// `waiting`; then as the queue records it (see ``fleetStatusObject(gid:url:queue:)``).
    func addToFleet(
        _ url: String, options: DownloadOptions, fileName: String?, mirrors: Int, position: Int?,
        queue: any ClaimingTaskQueue
    ) throws(RPCError) -> JSONValue {
        guard mirrors == 0 else { throw RPCError("A fleet's shared queue takes one URI per download.") }
        if let unsupported = options.values.keys.filter({ !Self.fleetOptions.contains($0) }).sorted().first {
            throw RPCError("The option \(unsupported) is not carried by the fleet's shared queue.")
        }
        guard position == nil else { throw RPCError("A fleet's shared queue keeps no positions.") }
        // The queue's key is the normalized URL, so that every service (and every spelling of
        // the URL) names the same task.
        let key: String
        do throws(URLValidationError) {
            key = try DownloadURL(url).normalizedKey
        } catch {
            throw RPCError("Invalid URI \(url): \(error)")
        }
        let task = StoredTask(
            urlString: key, preferredFileName: fileName, state: .pending, addedAt: Date(),
            checksum: options.values["checksum"])
        do throws(StoreError) {
            // A URL the queue already has is left as it is; its GID here is the same one.
            _ = try queue.enqueue([task])
        } catch {
            throw RPCError("The fleet's shared queue is unreachable: \(error.message)")
        }
        let gid = state.withLock { state in
            state.table.gid(for: key, preferring: GID.fleet(key), using: &state.generator).0
        }
        return .string(gid.description)
    }

    /// `tellStatus`'s object for a task of the fleet's queue that this service does not hold:
    /// `waiting` while unclaimed (or its lease expired), `active` while another service holds
    /// it (`peregrine.holder` names that service; progress as of its last lease renewal, no
    /// speed), `complete` or `error` once a service finished it. Nil when the queue does not
    /// have it.
    func fleetStatusObject(gid: GID, url: String, queue: any ClaimingTaskQueue) throws(RPCError) -> [String: JSONValue]?
    {
        let entry: QueuedTask?
        do throws(StoreError) {
            entry = try queue.entries([url])[url]
        } catch {
            throw RPCError("The fleet's shared queue is unreachable: \(error.message)")
        }
        guard let entry else { return nil }
        let task = entry.task
        let status: DownloadStatus =
            switch task.state {
            case .pending: .waiting
            case .downloading: .active
            case .finished: .complete
            case .failed: .error
            case .stopped, .paused: .paused
            case .notInList: .removed
            }
        let total = task.expectedLength ?? (status == .complete ? task.receivedLength : 0)
        let completed = status == .complete ? max(task.receivedLength, total) : task.receivedLength
        let pieceLength: Int64 = 1 << 20
        let name = task.fileName ?? task.preferredFileName
        var object: [String: JSONValue] = [
            "gid": .string(gid.description),
            "status": .string(status.rawValue),
            "totalLength": .string(String(total)),
            "completedLength": .string(String(completed)),
            "uploadLength": "0",
            "downloadSpeed": "0",
            "uploadSpeed": "0",
            "connections": "0",
            "numPieces": .string(String((total + pieceLength - 1) / pieceLength)),
            "pieceLength": .string(String(pieceLength)),
            // The file is (or will be) on whichever service downloads it.
            "dir": "",
            "files": [
                [
                    "index": "1", "path": .string(name ?? ""), "length": .string(String(total)),
                    "completedLength": .string(String(completed)), "selected": "true",
                    "uris": uriObjects(url, started: status != .waiting),
                ]
            ],
        ]
        if let holder = entry.holder { object["peregrine.holder"] = .string(holder) }
        if case .failed(let reason) = task.state {
            object["errorCode"] = .string(DownloadStatus.errorCode(of: reason))
            object["errorMessage"] = .string(reason.description)
        } else if status == .complete {
            object["errorCode"] = "0"
            object["errorMessage"] = ""
        }
        return object
    }
}
