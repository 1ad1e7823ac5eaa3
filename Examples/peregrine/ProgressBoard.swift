import PeregrineTransport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The live progress line: one line on standard error, redrawn at most ten times a second.
final class ProgressBoard: Sendable {
    private struct Entry {
        var name: String
        var received: Int64 = 0
        var expected: Int64?
        var started = ContinuousClock.now
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var nextSlot = 0
        var done = 0
        /// The board's start: a log's first line comes a second later, not at the first byte.
        var lastDraw = ContinuousClock.now
        var lineWidth = 0
    }

    private let state = Mutex(State())
    private let total: Int
    private let isEnabled: Bool
    private let isTerminal = isatty(STDERR_FILENO) == 1

    init(total: Int, isEnabled: Bool) {
        self.total = total
        self.isEnabled = isEnabled
    }

    func begin(_ name: String) -> Int {
        state.withLock { state in
            defer { state.nextSlot += 1 }
            state.entries[state.nextSlot] = Entry(name: name)
            return state.nextSlot
        }
    }

    // Every write to the terminal happens under the lock, so a redraw from one transfer can
    // never land between another's clearing of the line and its "done" message.
    func update(_ slot: Int, _ progress: TransferProgress) {
        state.withLock { state in
            state.entries[slot]?.received = progress.receivedBytes
            state.entries[slot]?.expected = progress.expectedBytes
            let now = ContinuousClock.now
            // A terminal gets a redrawn line; a log gets a new line once a second.
            let interval: Duration = isTerminal ? .milliseconds(100) : .seconds(1)
            guard isEnabled, now - state.lastDraw >= interval else { return }
            state.lastDraw = now
            draw(render(state))
        }
    }

    func end(_ slot: Int, success: String) { end(slot, message: "done  \(success)") }

    func end(_ slot: Int, failure: String) { end(slot, message: "FAILED  \(failure)", always: true) }

    private func end(_ slot: Int, message: String, always: Bool = false) {
        state.withLock { state in
            let elapsed = state.entries[slot].map { ContinuousClock.now - $0.started } ?? .zero
            state.entries[slot] = nil
            state.done += 1
            guard isEnabled || always else { return }
            clearLine()
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            writeToStandardError("\(message) (\(ByteFormat.decimal(seconds, places: 2)) s)\n")
            if isEnabled, !state.entries.isEmpty { draw(render(state)) }
        }
    }

    /// A line of its own (a retry, a file complete already), when progress is shown.
    func note(_ message: String) { line(message, always: false) }

    /// A failure of a download that never started: always shown.
    func failure(_ message: String) { line("FAILED  \(message)", always: true) }

    private func line(_ message: String, always: Bool) {
        state.withLock { state in
            guard isEnabled || always else { return }
            clearLine()
            writeToStandardError(message + "\n")
            if isEnabled, !state.entries.isEmpty { draw(render(state)) }
        }
    }

    func finish() {
        state.withLock { _ in if isEnabled { clearLine() } }
    }

    /// Runs `write` (a result on standard output, which may be the same terminal) with the
    /// progress line cleared, and draws it again after: a path never lands on it.
    func withLineCleared(_ write: () -> Void) {
        state.withLock { state in
            guard isEnabled, isTerminal else { return write() }
            clearLine()
            write()
            if !state.entries.isEmpty { draw(render(state)) }
        }
    }

    private func render(_ state: State) -> String {
        var received: Int64 = 0
        var expected: Int64 = 0
        var knowsTotal = true
        var earliest = ContinuousClock.now
        for entry in state.entries.values {
            received += entry.received
            if let size = entry.expected { expected += size } else { knowsTotal = false }
            earliest = min(earliest, entry.started)
        }
        let elapsed = ContinuousClock.now - earliest
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let speed = seconds > 0 ? Double(received) / seconds : 0
        let name = state.entries.count == 1 ? state.entries.values.first!.name : "\(state.entries.count) files"
        var figures = ""
        if knowsTotal, expected > 0 {
            figures += "\(ByteFormat.decimal(Double(received) * 100 / Double(expected), places: 1))%  "
            figures += "\(ByteFormat.size(received)) / \(ByteFormat.size(expected))"
        } else {
            figures += ByteFormat.size(received)
        }
        figures += "  \(ByteFormat.size(Int64(speed)))/s"
        // Not before a second: the first bytes' speed says nothing of the rest.
        if knowsTotal, expected > received, speed > 0, seconds >= 1 {
            figures += "  \(Self.remaining(Double(expected - received) / speed)) left"
        }
        return Self.fitted(prefix: "[\(state.done)/\(total)] ", name: name, suffix: "  " + figures, width: columns())
    }

    /// The line cut to the terminal's width (one column spare, so the cursor never wraps), the
    /// name shortened in its middle first, then left out: a wrapped line is one `\r` cannot clear.
    static func fitted(prefix: String, name: String, suffix: String, width: Int?) -> String {
        let line = prefix + name + suffix
        guard let width, width > 1, line.count >= width else { return line }
        let room = width - 1 - prefix.count - suffix.count
        if room >= 5 {
            let head = (room - 1) / 2
            let tail = room - 1 - head
            return prefix + name.prefix(head) + "…" + name.suffix(tail) + suffix
        }
        // No room for a name: the figures matter more.
        return String((prefix + suffix.drop(while: { $0 == " " })).prefix(width - 1))
    }

    /// The terminal's width in columns, when standard error is one that says.
    private func columns() -> Int? {
        guard isTerminal else { return nil }
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// A remaining time for people: "42 s", "3 min 5 s", "2 h 10 min".
    static func remaining(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total % 3600 / 60) min"
    }

    private func draw(_ line: String) {
        if isTerminal {
            writeToStandardError("\r\u{1B}[2K\(line)")
        } else {
            writeToStandardError("\(line)\n")
        }
    }

    private func clearLine() {
        if isTerminal { writeToStandardError("\r\u{1B}[2K") }
    }
}

/// Byte counts for people: "41.6 MB" in the seeds' decimal units.
enum ByteFormat {
    static func size(_ bytes: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : "\(decimal(value, places: 1)) \(units[unit])"
    }

    /// A number with a fixed count of decimals, rounded half up: `decimal(2.345, places: 2)` is "2.35".
    static func decimal(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((abs(value) * scale).rounded())
        let whole = scaled / Int64(scale)
        var fraction = String(scaled % Int64(scale))
        while fraction.count < places { fraction = "0" + fraction }
        let sign = value < 0 && scaled != 0 ? "-" : ""
        return places == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
    }
}
