import Foundation
import PeregrineSorting
import TestSupport
import Testing

@Suite struct CustomSortTests {
    struct Song {
        var name: String
        var singer: String?
        var year: Int?
    }

    let songs = [
        Song(name: "Hello", singer: "Adele", year: 2015),
        Song(name: "Skyfall", singer: "Adele", year: 2012),
        Song(name: "Rolling in the Deep", singer: "Adele", year: 2010),
        Song(name: "Someone Like You", singer: "Adele", year: 2010),
        Song(name: "Yellow", singer: "Coldplay", year: 2000),
        Song(name: "Clocks", singer: "Coldplay", year: nil),
        Song(name: "Bohemian Rhapsody", singer: "Queen", year: 1975),
        Song(name: "Mystery Track", singer: nil, year: 1999),
        Song(name: "Untitled", singer: nil, year: nil),
    ]

    func songList() throws -> (DownloadList, [String: Song]) {
        var list = Fixtures.list()
        var info: [String: Song] = [:]
        for song in songs {
            let new = item(song.name, kind: .audio)
            info[new.url] = song
            try list.add([new])
        }
        return (list, info)
    }

    /// The seed's example: split by singer, singers alphabetically, songs by release year then name.
    @Test func songsBySingerAndYear() throws {
        var (list, info) = try songList()
        let change = try list.sortListBy(
            order: .ascending,
            taskTrait: { info[$0.url]?.singer },
            taskAscending: { a, b in
                let (song0, song1) = (info[a.url]!, info[b.url]!)
                switch (song0.year, song1.year) {
                case (nil, nil): return song0.name < song1.name
                case (nil, _): return true
                case (_, nil): return false
                case let (year0?, year1?): return year0 != year1 ? year0 < year1 : song0.name < song1.name
                }
            }
        )
        #expect(change.isReload)
        #expect(list.sortType == .manual)
        #expect(list.sectionTitles == ["Adele", "Coldplay", "Queen", "Title"])
        #expect(
            names(list) == [
                ["Rolling in the Deep", "Someone Like You", "Skyfall", "Hello"],
                ["Clocks", "Yellow"],
                ["Bohemian Rhapsody"],
                ["Untitled", "Mystery Track"],
            ])
    }

    @Test func descendingReversesSectionsAndTasksButKeepsTheTraitlessSectionLast() throws {
        var (list, info) = try songList()
        try list.sortListBy(
            order: .descending,
            taskTrait: { info[$0.url]?.singer },
            taskAscending: { $0.fileName < $1.fileName }
        )
        #expect(list.sectionTitles == ["Queen", "Coldplay", "Adele", "Title"])
        #expect(
            names(list) == [
                ["Bohemian Rhapsody"],
                ["Yellow", "Clocks"],
                ["Someone Like You", "Skyfall", "Rolling in the Deep", "Hello"],
                ["Untitled", "Mystery Track"],
            ])
    }

    /// The seed's second example: add-time groups ordered by a priority, not alphabetically.
    @Test func addTimeGroupsWithAPriorityOrder() throws {
        let now = Fixtures.noon
        let calendar = Fixtures.utc
        let today = calendar.startOfDay(for: now)
        let dayInterval: TimeInterval = 24 * 60 * 60
        var list = Fixtures.list()
        try list.add([
            item("b-today", added: now - 60), item("a-today", added: now - 120),
            item("yesterday", added: today - 3600),
            item("week", added: today - 3 * dayInterval),
            item("month", added: today - 20 * dayInterval),
            item("old", added: today - 100 * dayInterval),
        ])
        let traitPriority = ["Today": 0, "Yesterday": -10, "Last 7 Days": -100, "Last 30 Days": -1000, "Older": -10000]
        func trait(_ task: ListItem) -> String? {
            let addTime = task.addTime
            if calendar.isDate(addTime, inSameDayAs: now) { return "Today" }
            if calendar.isDate(addTime, inSameDayAs: today - 1) { return "Yesterday" }
            if today.timeIntervalSince(addTime) < 7 * dayInterval { return "Last 7 Days" }
            if today.timeIntervalSince(addTime) < 30 * dayInterval { return "Last 30 Days" }
            return "Older"
        }

        try list.sortListBy(order: .ascending, taskTrait: trait, taskAscending: { $0.fileName < $1.fileName })
        #expect(
            list.sectionTitles == ["Last 30 Days", "Last 7 Days", "Older", "Today", "Yesterday"],
            "alphabetical without a trait predicate")

        try list.sortListBy(
            order: .ascending,
            taskTrait: trait,
            traitAscending: { traitPriority[$0]! < traitPriority[$1]! },
            taskAscending: { $0.fileName < $1.fileName }
        )
        #expect(list.sectionTitles == ["Older", "Last 30 Days", "Last 7 Days", "Yesterday", "Today"])
        #expect(names(list) == [["old"], ["month"], ["week"], ["yesterday"], ["a-today", "b-today"]])

        try list.sortListBy(
            order: .descending,
            taskTrait: trait,
            traitAscending: { traitPriority[$0]! < traitPriority[$1]! },
            taskAscending: { $0.fileName < $1.fileName }
        )
        #expect(list.sectionTitles == ["Today", "Yesterday", "Last 7 Days", "Last 30 Days", "Older"])
        #expect(names(list)[0] == ["b-today", "a-today"])
    }

    /// The seed's first example: a size sort through the custom predicate, in one section.
    @Test func withoutATraitEverythingIsInOnePlaceholderSection() throws {
        var list = Fixtures.list()
        try list.add([item("big", size: 30), item("small", size: 1), item("mid", size: 10)])
        try list.sortListBy(order: .ascending, taskAscending: { $0.fileSize < $1.fileSize })
        #expect(list.sectionTitles == ["Title"])
        #expect(names(list) == [["small", "mid", "big"]])
        try list.sortListBy(order: .descending, taskAscending: { $0.fileSize < $1.fileSize })
        #expect(names(list) == [["big", "mid", "small"]])
    }

    @Test func defaultTraitOrderIsStringOrder() throws {
        var list = Fixtures.list()
        try list.add([item("x", url: "1"), item("y", url: "2"), item("z", url: "3"), item("w", url: "4")])
        let traits = ["1": "Disc 10", "2": "disc 2", "3": "Disc 1", "4": ""]
        try list.sortListBy(order: .ascending, taskTrait: { traits[$0.url] }, taskAscending: { $0.url < $1.url })
        #expect(list.sectionTitles == ["Disc 1", "Disc 10", "disc 2", "Title"], "an empty trait counts as none")
    }

    @Test func theResultIsManualModeAndCanBeRearranged() throws {
        var (list, info) = try songList()
        try list.sortListBy(
            order: .ascending, taskTrait: { info[$0.url]?.singer }, taskAscending: { $0.fileName < $1.fileName })
        try expectChange(&list) { try $0.moveTasks(inSection: 3, to: 0) }
        try expectChange(&list) { try $0.changeTitleOfSection(0, to: "Unknown singer") }
        #expect(list.sectionTitles == ["Unknown singer", "Adele", "Coldplay", "Queen"])
    }

    @Test func anInconsistentTaskPredicateIsRefusedAndTheListKept() throws {
        var (list, _) = try songList()
        let before = list.downloadList
        #expect(throws: DownloadListError.self) {
            try list.sortListBy(order: .ascending, taskAscending: { $0.kind.rawValue <= $1.kind.rawValue })
        }
        do {
            try list.sortListBy(order: .ascending, taskAscending: { _, _ in true })
            Issue.record("an always-true predicate was accepted")
        } catch {
            #expect(error.code == .inconsistentOrdering)
        }
        #expect(list.downloadList == before)
        #expect(list.sortType == .addTime)
    }

    @Test func anInconsistentTraitPredicateIsRefusedAndTheListKept() throws {
        var (list, info) = try songList()
        let before = list.downloadList
        #expect {
            try list.sortListBy(
                order: .ascending,
                taskTrait: { info[$0.url]?.singer },
                traitAscending: { _, _ in true },
                taskAscending: { $0.fileName < $1.fileName }
            )
        } throws: { ($0 as? DownloadListError)?.code == .inconsistentOrdering }
        #expect(list.downloadList == before)
    }

    @Test func aRandomPredicateNeverLosesATask() throws {
        var (list, _) = try songList()
        var generator = SeededRandom(seed: 7)
        let all = list.downloadTaskSet
        for _ in 0..<50 {
            _ = try? list.sortListBy(
                order: .ascending,
                taskTrait: { _ in ["a", "b", nil].randomElement(using: &generator)! },
                traitAscending: { _, _ in Bool.random(using: &generator) },
                taskAscending: { _, _ in Bool.random(using: &generator) }
            )
            #expect(list.downloadTaskSet == all)
            #expect(list.downloadList.joined().count == all.count)
        }
    }
}
