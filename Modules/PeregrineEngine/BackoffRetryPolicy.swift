import PeregrineCore
import PeregrineTransport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The retry policy that ships, and the default of `DownloadManager` and the `peregrine`
/// command: transient failures are tried again after an exponentially growing, jittered delay,
/// from the bytes already on disk; a server's `Retry-After` is honoured.
///
/// Retried: a connection that failed, broke or was reset (`FailureReason.Code.network`), a
/// timeout or a transfer slower than its minimum, a response that broke HTTP (more bytes than
/// announced, a garbled head: often a proxy's or a restarting server's), and the HTTP statuses
/// 408, 429 and 5xx. Never retried: any other 4xx, DNS and TLS failures, authentication, disk and
/// file-system errors, checksum mismatches (the engine's `VerificationRetryPolicy` decides
/// those first).
///
/// The n-th retry (from 0) waits `min(maxDelay, initialDelay × multiplierⁿ)`, less a random
/// part of up to `jitter` of it, so that many clients do not come back at the same instant. On
/// a 429 or 503 with `Retry-After` (seconds or an HTTP date) it waits what the server asks —
/// unless that is longer than ``maxRetryAfter``, when the task fails at once with the server's
/// answer.
public struct BackoffRetryPolicy: RetryPolicy {
    /// Retries after the first transfer before the task fails; 0 turns retrying off.
    public var maxRetries: Int
    /// The wait before the first retry.
    public var initialDelay: Duration
    /// How much each wait grows over the previous one.
    public var multiplier: Double
    /// The longest wait the backoff reaches.
    public var maxDelay: Duration
    /// The random part of each wait, from 0 (none) to 1 (anything from 0 to the whole wait).
    public var jitter: Double
    /// The longest `Retry-After` honoured.
    public var maxRetryAfter: Duration
    /// A random number in `0 ..< 1`, for the jitter (seed it in tests).
    public var random: @Sendable () -> Double
    /// The current date, to read a `Retry-After` given as an HTTP date.
    public var date: @Sendable () -> Date

    /// A policy; the defaults try 5 more times over about half a minute.
    ///
    /// - Throws: ``EngineError/Code/invalidArgument`` for a negative count, a negative or zero
    ///   delay, a multiplier below 1 or a jitter outside `0 ... 1`.
    public init(
        maxRetries: Int = 5, initialDelay: Duration = .seconds(1), multiplier: Double = 2,
        maxDelay: Duration = .seconds(60), jitter: Double = 0.25, maxRetryAfter: Duration = .seconds(3600),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        date: @escaping @Sendable () -> Date = { Date() }
    ) throws(EngineError) {
        guard maxRetries >= 0 else { throw EngineError(.invalidArgument, "a retry count cannot be negative") }
        guard initialDelay > .zero, maxDelay >= initialDelay else {
            throw EngineError(.invalidArgument, "retry delays must be positive, the longest at least the first")
        }
        guard multiplier >= 1, multiplier.isFinite else {
            throw EngineError(.invalidArgument, "the backoff multiplier must be at least 1")
        }
        guard (0...1).contains(jitter) else { throw EngineError(.invalidArgument, "jitter must be within 0 ... 1") }
        guard maxRetryAfter >= .zero else { throw EngineError(.invalidArgument, "maxRetryAfter cannot be negative") }
        self.maxRetries = maxRetries
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.maxRetryAfter = maxRetryAfter
        self.random = random
        self.date = date
    }

    /// The default policy.
    public static var standard: BackoffRetryPolicy {
        do {
            return try BackoffRetryPolicy()
        } catch {
            fatalError("the default retry settings are valid: \(error)")
        }
    }

    public func decision(after failure: TransferFailure, for task: TaskContext) -> RetryDecision {
        guard task.retryCount < maxRetries, Self.isTransient(failure.reason) else { return .fail }
        if let status = failure.reason.httpStatus, status == 429 || status == 503,
            let value = failure.head?.headers["Retry-After"],
            let wait = Self.retryAfter(value, now: date())
        {
            return wait <= maxRetryAfter ? .retryAfter(wait) : .fail
        }
        return .retryAfter(delay(beforeRetry: task.retryCount))
    }

    /// The wait before retry number `index` (from 0), jitter included.
    public func delay(beforeRetry index: Int) -> Duration {
        let cap = Self.seconds(maxDelay)
        var seconds = Self.seconds(initialDelay)
        for _ in 0..<max(index, 0) where seconds < cap { seconds *= multiplier }
        let capped = min(seconds, cap)
        let jittered = capped * (1 - jitter * min(max(random(), 0), 1))
        return .nanoseconds(Int64(max(jittered, 0.001) * 1e9))
    }

    /// Whether a failure is worth trying again.
    public static func isTransient(_ reason: FailureReason) -> Bool {
        switch reason.code {
        case .network, .timeout, .tooSlow, .protocolViolation: return true
        case .httpStatus:
            guard let status = reason.httpStatus else { return false }
            return status == 408 || status == 429 || (500...599).contains(status)
        default: return false
        }
    }

    /// A `Retry-After` value as a wait from `now`: delta-seconds, or an HTTP date (IMF-fixdate,
    /// RFC 850 or asctime, RFC 9110 § 10.2.3 and § 5.6.7). Nil when it is neither; a date in the
    /// past waits zero.
    public static func retryAfter(_ value: String, now: Date) -> Duration? {
        let trimmed = String(
            value.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" })
                .reversed())
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Absurdly long digit strings clamp rather than fail.
            return .seconds(Int64(trimmed.prefix(12)) ?? Int64.max / 1_000_000_000)
        }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        let interval = date.timeIntervalSince(now)
        return interval <= 0 ? .zero : .nanoseconds(Int64(min(interval, 1e9) * 1e9))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// HTTP dates (RFC 9110 § 5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms a
/// recipient must still read.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), whole seconds, rounded down.
    package static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        var days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let clock = seconds - days * 86_400
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        // The civil date of a day count (Howard Hinnant's algorithm), proleptic Gregorian.
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let name = months[month - 1].prefix(1).uppercased() + months[month - 1].dropFirst()
        return
            "\(weekday), \(two(day)) \(name) \(year) \(two(clock / 3600)):\(two(clock / 60 % 60)):\(two(clock % 60)) GMT"
    }

    /// The date, or nil when `text` is in none of the three forms.
    package static func parse(_ text: String) -> Date? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT → [Sun, 06, Nov, 1994, 08:49:37, GMT]
        if words.count == 6, words[5] == "GMT", let day = Int(words[1]), let month = month(words[2]),
            let year = Int(words[3]), words[3].count == 4
        {
            return date(year: year, month: month, day: day, time: words[4])
        }
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT → [Sunday, 06-Nov-94, 08:49:37, GMT]
        if words.count == 4, words[3] == "GMT" {
            let parts = words[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let day = Int(parts[0]), let month = month(parts[1]), let short = Int(parts[2]),
                parts[2].count == 2
            else { return nil }
            // Two-digit years more than 50 years ahead are in the past (RFC 9110 § 5.6.7).
            let year = short + (short < 70 ? 2000 : 1900)
            return date(year: year, month: month, day: day, time: words[2])
        }
        // asctime: Sun Nov  6 08:49:37 1994 → [Sun, Nov, 6, 08:49:37, 1994]
        if words.count == 5, let month = month(words[1]), let day = Int(words[2]), let year = Int(words[4]) {
            return date(year: year, month: month, day: day, time: words[3])
        }
        return nil
    }

    private static func month(_ name: String) -> Int? {
        months.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }

    private static func date(year: Int, month: Int, day: Int, time: String) -> Date? {
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]),
            (1...31).contains(day), (1...12).contains(month), (1900...9999).contains(year)
        else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm), proleptic Gregorian.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
