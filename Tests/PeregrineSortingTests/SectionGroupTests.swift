import Foundation
import PeregrineSorting
import Testing

@Suite struct SectionGroupTests {
    @Test func sizeGroupsUseDecimalUnitsWithInclusiveUpperBounds() {
        #expect(FileSizeGroup(size: -1) == .unknown)
        #expect(FileSizeGroup(size: .min) == .unknown)
        #expect(FileSizeGroup(size: 0) == .upTo1MB)
        #expect(FileSizeGroup(size: 1_000_000) == .upTo1MB)
        #expect(FileSizeGroup(size: 1_000_001) == .upTo100MB)
        #expect(FileSizeGroup(size: 1_048_576) == .upTo100MB)
        #expect(FileSizeGroup(size: 100_000_000) == .upTo100MB)
        #expect(FileSizeGroup(size: 100_000_001) == .upTo1GB)
        #expect(FileSizeGroup(size: 1_000_000_000) == .upTo1GB)
        #expect(FileSizeGroup(size: 1_000_000_001) == .largerThan1GB)
        #expect(FileSizeGroup(size: .max) == .largerThan1GB)
    }

    @Test func sizeGroupTitles() {
        #expect(
            FileSizeGroup.allCases.map(\.title) == [
                "Unknown Size", "0 ~ 1 MB", "1 MB ~ 100 MB", "100 MB ~ 1 GB", "Larger Than 1 GB",
            ])
    }

    @Test func addTimeGroupTitles() {
        #expect(
            AddTimeGroup.allCases.map(\.title) == [
                "Older", "Last 30 Days", "Last 7 Days", "Yesterday", "Today", "Future",
            ])
    }

    @Test func addTimeGroupsAreWholeCalendarDaysHalfOpen() {
        let grouping = AddTimeGrouping(now: Fixtures.noon, calendar: Fixtures.utc)
        let midnight = Fixtures.noon.addingTimeInterval(-12 * 3600)
        let day = Fixtures.day
        #expect(grouping.group(of: midnight.addingTimeInterval(day)) == .future)
        #expect(grouping.group(of: midnight.addingTimeInterval(day - 1)) == .today)
        #expect(grouping.group(of: Fixtures.noon.addingTimeInterval(3600)) == .today)
        #expect(grouping.group(of: midnight) == .today)
        #expect(grouping.group(of: midnight.addingTimeInterval(-1)) == .yesterday)
        #expect(grouping.group(of: midnight.addingTimeInterval(-day)) == .yesterday)
        #expect(grouping.group(of: midnight.addingTimeInterval(-day - 1)) == .last7Days)
        #expect(grouping.group(of: midnight.addingTimeInterval(-7 * day)) == .last7Days)
        #expect(grouping.group(of: midnight.addingTimeInterval(-7 * day - 1)) == .last30Days)
        #expect(grouping.group(of: midnight.addingTimeInterval(-30 * day)) == .last30Days)
        #expect(grouping.group(of: midnight.addingTimeInterval(-30 * day - 1)) == .older)
        #expect(grouping.group(of: .distantPast) == .older)
        #expect(grouping.group(of: .distantFuture) == .future)
    }

    @Test func addTimeGroupsFollowTheCalendarsTimeZone() {
        var tokyo = Calendar(identifier: .gregorian)
        tokyo.timeZone = TimeZone(secondsFromGMT: 9 * 3600)!
        // Noon UTC is 21:00 in UTC+9; 15:30 UTC is already tomorrow there.
        let grouping = AddTimeGrouping(now: Fixtures.noon, calendar: tokyo)
        #expect(grouping.group(of: Fixtures.noon.addingTimeInterval(3.5 * 3600)) == .future)
        #expect(grouping.group(of: Fixtures.noon.addingTimeInterval(2.5 * 3600)) == .today)
        let utc = AddTimeGrouping(now: Fixtures.noon, calendar: Fixtures.utc)
        #expect(utc.group(of: Fixtures.noon.addingTimeInterval(3.5 * 3600)) == .today)
    }

    @Test func addTimeGroupsCountADaylightSavingDayAsOneDay() throws {
        var paris = Calendar(identifier: .gregorian)
        paris.timeZone = try #require(TimeZone(identifier: "Europe/Paris"))
        // 2024-03-31 is 23 hours long in Paris. Now: 2024-04-01 10:00 CEST (08:00 UTC).
        let now = Date(timeIntervalSince1970: 1_711_958_400)
        let grouping = AddTimeGrouping(now: now, calendar: paris)
        // 2024-03-31 00:30 CET (23:30 UTC on the 30th) is yesterday in Paris.
        #expect(grouping.group(of: Date(timeIntervalSince1970: 1_711_841_400)) == .yesterday)
        // 2024-03-30 23:30 CET is two days ago.
        #expect(grouping.group(of: Date(timeIntervalSince1970: 1_711_837_800)) == .last7Days)
        // 2024-04-01 00:10 CEST (22:10 UTC on the 31st) is today.
        #expect(grouping.group(of: Date(timeIntervalSince1970: 1_711_923_000)) == .today)
    }

    @Test func groupingsMadeOnTheSameDayHaveTheSameBoundaries() {
        let morning = AddTimeGrouping(now: Fixtures.noon.addingTimeInterval(-11 * 3600), calendar: Fixtures.utc)
        let evening = AddTimeGrouping(now: Fixtures.noon.addingTimeInterval(11 * 3600), calendar: Fixtures.utc)
        let tomorrow = AddTimeGrouping(now: Fixtures.noon.addingTimeInterval(13 * 3600), calendar: Fixtures.utc)
        #expect(morning.hasSameBoundaries(as: evening))
        #expect(!evening.hasSameBoundaries(as: tomorrow))
    }
}
