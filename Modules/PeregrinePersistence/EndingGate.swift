import PeregrineEngine

/// Holds a task's events back from the announcement of one of its endings (`finished`,
/// `failed`) until the store has recorded it, so that whoever reacts to the end of a task — and
/// exits, say — finds it saved. The events after a held one wait behind it, to keep their order.
///
/// The engine announces a change before it hands the record to the store; the store says when
/// the section that announced the ending is recorded (synced, or superseded by a later record). Not thread-safe: use it
/// from one thread at a time, in the order of the events (the queue's ``OrderedDrain``).
package struct EndingGate: Sendable {
    private var parked: [String: [(event: EngineEvent, ending: Int?)]] = [:]
    /// How many endings of each task were announced…
    private var announced: [String: Int] = [:]
    /// … and how many the store recorded (or saw superseded), never more than were announced (a
    /// restored finished record is no announced ending).
    private var recorded: [String: Int] = [:]

    package init() {}

    /// Whether `event` may be published now; when not, it is held until ``release(_:)`` gives
    /// it back.
    package mutating func admit(_ event: EngineEvent) -> Bool {
        let url = event.urlString
        var ending: Int?
        switch event {
        case .finished, .failed:
            announced[url, default: 0] += 1
            ending = announced[url]
        default:
            ending = nil
        }
        if parked[url] != nil || (ending ?? 0) > (recorded[url] ?? 0) {
            parked[url, default: []].append((event, ending))
            return false
        }
        return true
    }

    /// How many endings of each task a section's events announce: the section's record
    /// changes, once synced, record them all (a task's record is the latest of the section).
    package static func endings(in events: [EngineEvent]) -> [String: Int] {
        var endings: [String: Int] = [:]
        for event in events {
            switch event {
            case .finished, .failed: endings[event.urlString, default: 0] += 1
            default: break
            }
        }
        return endings
    }

    /// Counts endings as recorded (synced, or never to be) and returns the held events that
    /// may go now.
    package mutating func recorded(_ endings: [String: Int]) -> [EngineEvent] {
        var released: [EngineEvent] = []
        for (url, count) in endings.sorted(by: { $0.key < $1.key }) {
            countRecorded(url, count)
            released += release(url)
        }
        return released
    }

    /// Counts `count` endings of a task as recorded.
    package mutating func countRecorded(_ url: String, _ count: Int) {
        recorded[url] = min((recorded[url] ?? 0) + count, announced[url] ?? 0)
    }

    /// The held events of a task that may go now, in order: up to the first ending the store has
    /// not recorded yet.
    package mutating func release(_ url: String) -> [EngineEvent] {
        guard var held = parked[url] else { return [] }
        var released: [EngineEvent] = []
        let done = recorded[url] ?? 0
        while let first = held.first, (first.ending ?? 0) <= done {
            released.append(first.event)
            held.removeFirst()
        }
        parked[url] = held.isEmpty ? nil : held
        return released
    }
}
