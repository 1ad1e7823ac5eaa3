#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The day boundaries that file add times into ``AddTimeGroup``s, computed for one moment.
///
/// Groups are calendar days in the calendar's time zone, so a day of 23 or 25 hours (a daylight
/// saving change) is still one day. With `D` the start of today:
/// - Future: on or after the start of tomorrow;
/// - Today: from `D` to the start of tomorrow;
/// - Yesterday: the day before `D`;
/// - Last 7 Days: from the start of the 7th day before today up to yesterday (days −7 … −2);
/// - Last 30 Days: from the start of the 30th day before today up to day −8;
/// - Older: before that.
///
/// This is the seed's own example (`today.timeIntervalSince(addTime) < 7 * day`) with whole
/// calendar days, half-open at every boundary. ``DownloadList`` makes a new grouping for
/// every sort, so the groups never go stale after midnight (SDEDownloadManager captured "now"
/// once).
public struct AddTimeGrouping: Sendable, Hashable {
    /// The moment the grouping was made for.
    public let reference: Date
    /// The start of the reference moment's day.
    public let startOfToday: Date
    let startOfTomorrow: Date
    let startOfYesterday: Date
    let startOfLast7Days: Date
    let startOfLast30Days: Date

    /// Computes the boundaries around `now` in `calendar`. Complexity: O(1) (five calendar calls).
    public init(now: Date, calendar: Calendar) {
        reference = now
        let today = calendar.startOfDay(for: now)
        func day(_ offset: Int) -> Date {
            // Adding days to a start of day lands on that day; startOfDay repairs a day that does
            // not begin at midnight. The fallback only guards a calendar that cannot add days.
            let shifted =
                calendar.date(byAdding: .day, value: offset, to: today)
                ?? today.addingTimeInterval(Double(offset) * 86_400)
            return calendar.startOfDay(for: shifted)
        }
        startOfToday = today
        startOfTomorrow = day(1)
        startOfYesterday = day(-1)
        startOfLast7Days = day(-7)
        startOfLast30Days = day(-30)
    }

    /// The group a creation date falls in. Complexity: O(1), no calendar call.
    public func group(of date: Date) -> AddTimeGroup {
        if date >= startOfToday {
            return date >= startOfTomorrow ? .future : .today
        }
        if date >= startOfYesterday { return .yesterday }
        if date >= startOfLast7Days { return .last7Days }
        if date >= startOfLast30Days { return .last30Days }
        return .older
    }

    /// Whether a moment falls in the reference moment's day. Complexity: O(1).
    public func contains(_ date: Date) -> Bool { date >= startOfToday && date < startOfTomorrow }

    /// Whether both groupings put every date in the same group (they were made on the same day).
    /// Complexity: O(1).
    public func hasSameBoundaries(as other: AddTimeGrouping) -> Bool {
        startOfToday == other.startOfToday && startOfTomorrow == other.startOfTomorrow
            && startOfYesterday == other.startOfYesterday && startOfLast7Days == other.startOfLast7Days
            && startOfLast30Days == other.startOfLast30Days
    }
}
