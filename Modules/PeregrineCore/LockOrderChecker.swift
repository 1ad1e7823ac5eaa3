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

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lock-order check of ``SanitizerMutex``: a graph of "taken while holding" edges between
/// live locks; a new edge that closes a cycle is a lock-order inversion (two threads taking the
/// locks of the cycle in its two orders can deadlock), reported on standard error with both
/// stacks, after which the process aborts.
///
/// ThreadSanitizer's own deadlock detector would do this for a `pthread_mutex_t`, but the runtime
/// of the Swift 6.3 toolchain on Linux reports no lock-order inversion at all, not even for two
/// mutexes taken in both orders by a C program (Docs/Reliability.md, "Sanitizers").
///
/// The checker's own lock and data are hidden from ThreadSanitizer (its "ignore" annotations), so
/// that its global lock adds no happens-before edge between the threads it sees and hides no race.
package enum LockOrderChecker {
    /// A lock's identity in the graph: never reused, unlike its address.
    package typealias LockID = UInt64

    private struct Edge {
        /// The stack that first took `to` while holding `from`.
        var stack: [String]
    }

    private struct Graph {
        var nextID: LockID = 1
        /// edges[a][b]: b was taken while a was held.
        var edges: [LockID: [LockID: Edge]] = [:]
        /// The locks each thread holds, in the order it took them.
        var held: [UInt: [LockID]] = [:]
    }

    nonisolated(unsafe) private static let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        return mutex
    }()
    nonisolated(unsafe) private static var graph = Graph()

    private typealias Annotation = @convention(c) (UnsafePointer<CChar>?, Int32) -> Void
    private static func annotations(_ names: [String]) -> [Annotation] {
        names.compactMap { name in dlsym(nil, name).map { unsafeBitCast($0, to: Annotation.self) } }
    }
    private static let ignoreBegin = annotations([
        "AnnotateIgnoreSyncBegin", "AnnotateIgnoreReadsBegin", "AnnotateIgnoreWritesBegin",
    ])
    private static let ignoreEnd = annotations([
        "AnnotateIgnoreWritesEnd", "AnnotateIgnoreReadsEnd", "AnnotateIgnoreSyncEnd",
    ])

    private static func withGraph<Result>(_ body: (inout Graph) -> Result) -> Result {
        for begin in ignoreBegin { begin(nil, 0) }
        pthread_mutex_lock(mutex)
        let result = body(&graph)
        pthread_mutex_unlock(mutex)
        for end in ignoreEnd { end(nil, 0) }
        return result
    }

    /// A new lock's identity.
    package static func register() -> LockID {
        withGraph { graph in
            defer { graph.nextID += 1 }
            return graph.nextID
        }
    }

    /// Forgets a destroyed lock: no cycle can pass through it any more.
    package static func forget(_ lock: LockID) {
        withGraph { graph in
            graph.edges[lock] = nil
            for key in Array(graph.edges.keys) { graph.edges[key]?[lock] = nil }
        }
    }

    /// Called before the calling thread waits for `lock`: records an edge from every lock it
    /// holds, and reports the inversion if one closes a cycle.
    package static func willLock(_ lock: LockID) {
        let thread = ThreadIdentity.current
        let inversion: String? = withGraph { graph in
            for holding in graph.held[thread] ?? [] where holding != lock {
                guard graph.edges[holding]?[lock] == nil else { continue }
                let stack = Self.callStack()
                if let path = Self.path(from: lock, to: holding, in: graph.edges) {
                    return Self.report(taking: lock, holding: holding, stack: stack, path: path, edges: graph.edges)
                }
                graph.edges[holding, default: [:]][lock] = Edge(stack: stack)
            }
            return nil
        }
        if let inversion {
            _ = inversion.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
            abort()
        }
    }

    /// The calling thread's stack, one symbolised frame a line (glibc's `backtrace`).
    private static func callStack() -> [String] {
        var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 64)
        let count = glibcBacktrace(&frames, Int32(frames.count))
        guard count > 0, let symbols = glibcBacktraceSymbols(&frames, count) else { return [] }
        defer { free(symbols) }
        return (0..<Int(count)).map { symbols[$0].map { String(cString: $0) } ?? "?" }
    }

    /// Called once the calling thread holds `lock`.
    package static func didLock(_ lock: LockID) {
        let thread = ThreadIdentity.current
        withGraph { graph in graph.held[thread, default: []].append(lock) }
    }

    /// Called just before the calling thread releases `lock`.
    package static func willUnlock(_ lock: LockID) {
        let thread = ThreadIdentity.current
        withGraph { graph in
            guard var locks = graph.held[thread], let index = locks.lastIndex(of: lock) else { return }
            locks.remove(at: index)
            graph.held[thread] = locks.isEmpty ? nil : locks
        }
    }

    /// A path of edges from `start` to `goal`, as the locks after `start`, or nil.
    private static func path(from start: LockID, to goal: LockID, in edges: [LockID: [LockID: Edge]]) -> [LockID]? {
        var previous: [LockID: LockID] = [:]
        var queue = [start]
        var visited: Set<LockID> = [start]
        while !queue.isEmpty {
            let node = queue.removeFirst()
            for next in (edges[node] ?? [:]).keys where visited.insert(next).inserted {
                previous[next] = node
                if next == goal {
                    var path = [goal]
                    var step = goal
                    while let before = previous[step], before != start {
                        path.insert(before, at: 0)
                        step = before
                    }
                    return path
                }
                queue.append(next)
            }
        }
        return nil
    }

    private static func report(
        taking lock: LockID, holding: LockID, stack: [String], path: [LockID], edges: [LockID: [LockID: Edge]]
    ) -> String {
        var text = "==================\n"
        text += "SanitizerMutex: lock-order-inversion (potential deadlock): thread \(ThreadIdentity.current) takes"
        text += " lock #\(lock) while holding lock #\(holding), but lock #\(holding) was taken while"
        text += " lock #\(lock) was held"
        text += path.count > 1 ? " (through \(path.dropLast().map { "#\($0)" }.joined(separator: ", ")))\n" : "\n"
        text += "  lock #\(lock) taken while holding #\(holding), here:\n"
        text += stack.map { "    \($0)\n" }.joined()
        var from = lock
        for to in path {
            text += "  lock #\(to) taken while holding #\(from), first here:\n"
            text += (edges[from]?[to]?.stack ?? []).map { "    \($0)\n" }.joined()
            from = to
        }
        return text + "==================\n"
    }
}

// glibc's <execinfo.h>, which the Glibc module does not bring in.
@_silgen_name("backtrace")
private func glibcBacktrace(_ frames: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ size: Int32) -> Int32
@_silgen_name("backtrace_symbols")
private func glibcBacktraceSymbols(
    _ frames: UnsafePointer<UnsafeMutableRawPointer?>, _ size: Int32
) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
