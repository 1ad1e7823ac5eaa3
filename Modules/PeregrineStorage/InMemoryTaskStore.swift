import PeregrineCore
import Synchronization

/// A ``TaskStore`` that keeps everything in memory: the test double, shipped as part of the
/// product so that applications test with it (like swift-log's in-memory handler).
///
/// Thread-safe. ``load()`` returns what was recorded; ``save()`` counts its calls.
public final class InMemoryTaskStore: TaskStore {
    private struct State {
        var snapshot: StoreSnapshot
        var positions: [String: Int] = [:]
        var recordedChanges = 0
        var saves = 0
        var isClosed = false
    }

    public let identifier: String
    private let state: Locked<State>

    /// A store holding `snapshot` at first.
    public init(identifier: String = "default", snapshot: StoreSnapshot = StoreSnapshot()) {
        self.identifier = identifier
        var initial = State(snapshot: snapshot)
        for (index, task) in snapshot.tasks.enumerated() { initial.positions[task.urlString] = index }
        self.state = Locked(initial)
    }

    public func load() throws(StoreError) -> StoreSnapshot {
        try state.withLock { state throws(StoreError) in
            guard !state.isClosed else { throw StoreError(.closed, "the store \(identifier) is closed") }
            return state.snapshot
        }
    }

    public func record(_ changes: [StoreChange]) throws(StoreError) {
        try state.withLock { state throws(StoreError) in
            guard !state.isClosed else { throw StoreError(.closed, "the store \(identifier) is closed") }
            for change in changes { Self.apply(change, to: &state) }
            state.recordedChanges += changes.count
        }
    }

    public func save() throws(StoreError) {
        try state.withLock { state throws(StoreError) in
            guard !state.isClosed else { throw StoreError(.closed, "the store \(identifier) is closed") }
            state.saves += 1
        }
    }

    public func compact() throws(StoreError) {
        try state.withLock { state throws(StoreError) in
            guard !state.isClosed else { throw StoreError(.closed, "the store \(identifier) is closed") }
        }
    }

    public func close() throws(StoreError) {
        state.withLock { $0.isClosed = true }
    }

    /// How many changes were recorded so far.
    public var recordedChangeCount: Int { state.withLock { $0.recordedChanges } }

    /// How many times ``save()`` was called.
    public var saveCount: Int { state.withLock { $0.saves } }

    private static func apply(_ change: StoreChange, to state: inout State) {
        switch change {
        case .putTask(let task):
            if let index = state.positions[task.urlString] {
                state.snapshot.tasks[index] = task
            } else {
                state.positions[task.urlString] = state.snapshot.tasks.count
                state.snapshot.tasks.append(task)
            }
        case .removeTask(let urlString):
            guard let index = state.positions.removeValue(forKey: urlString) else { return }
            state.snapshot.tasks.remove(at: index)
            // Removal is O(n) here; the file stores keep O(1) per change.
            for position in index..<state.snapshot.tasks.count {
                state.positions[state.snapshot.tasks[position].urlString] = position
            }
            state.snapshot.customThumbnails[urlString] = nil
        case .putList(let list):
            state.snapshot.lists[list.identifier] = list
        case .removeList(let identifier):
            state.snapshot.lists[identifier] = nil
        case .setConfiguration(let configuration):
            state.snapshot.configuration = configuration
        case .setCustomThumbnail(let urlString, let thumbnail):
            state.snapshot.customThumbnails[urlString] = thumbnail
        }
    }
}
