import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Named points in Peregrine's crash-sensitive steps (placing a file, recording it, syncing the
/// store) where a test can have the process killed with SIGKILL, to check what survives a kill
/// at exactly that instruction rather than at a random moment.
///
/// A test hook: compiled in debug builds only (`PEREGRINE_KILL_POINTS`, Package.swift), where
/// it is off unless the environment variable `PEREGRINE_KILL_AT` names a point when the process
/// starts: `NAME` kills at the first time the point is reached, `NAME:N` at the N-th. When it is
/// unset, reaching a point costs one load of a flag; in a release build, nothing.
///
/// Points: `engine.placed` (a finished file is linked under its final name, its record not yet
/// handed to the store), `engine.leftover-link` (the record is durable, the temporary name not
/// yet removed), `store.written` (a durable change is in the journal, not yet synced),
/// `store.synced` (synced, its callbacks not yet run), `manager.durable` (a queue's records of placed
/// files are synced, their temporary names not yet removed).
package enum KillPoint {
    #if PEREGRINE_KILL_POINTS
        /// Kills the process if `PEREGRINE_KILL_AT` names `name` and this is the time it asks for.
        package static func reach(_ name: StaticString) {
            guard let target else { return }
            target.reach(name)
        }

        static let target: Target? = getenv("PEREGRINE_KILL_AT").flatMap { Target(String(cString: $0)) }
    #else
        /// Nothing: a release build has no kill points.
        @inlinable @inline(__always)
        package static func reach(_ name: StaticString) {}
    #endif

    final class Target: Sendable {
        let name: String
        let time: Int
        let reached = Atomic<Int>(0)

        init?(_ specification: String) {
            let parts = specification.split(separator: ":", maxSplits: 1)
            guard let first = parts.first, !first.isEmpty else { return nil }
            name = String(first)
            if parts.count == 2 {
                guard let time = Int(parts[1]), time > 0 else { return nil }
                self.time = time
            } else {
                time = 1
            }
        }

        func reach(_ point: StaticString) {
            guard name == point.description else { return }
            let count = reached.add(1, ordering: .relaxed).newValue
            guard count == time else { return }
            _ = kill(getpid(), SIGKILL)
            // SIGKILL cannot be caught; this thread must not go on meanwhile.
            while true { pause() }
        }
    }
}
