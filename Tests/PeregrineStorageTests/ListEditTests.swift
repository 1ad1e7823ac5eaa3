import PeregrineJournal
import PeregrineStorage
import PeregrineStorageTestKit
import TestSupport
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The journal writes a list that changed as its edit from the record before it
/// (`StoredListEdit`): a list of 10,000 tasks that gains one costs a record of one URL. These
/// tests check that replaying the edits gives every list back exactly, across compactions and a
/// crash, that the journal grows by the edit and not by the list, and that an edit whose base
/// is gone is refused rather than applied to the wrong list.
@Suite struct ListEditTests {
    /// A random change of a list's sections, trash or settings, as the manager makes them.
    static func mutate(_ list: inout StoredList, _ random: inout SeededRandom, next: inout Int) {
        func newURL() -> String {
            next += 1
            return "https://example.com/files/\(next).bin"
        }
        if list.sections.isEmpty {
            list.sections = [[]]
            list.sectionTitles = ["First"]
        }
        let section = Int.random(in: 0..<list.sections.count, using: &random)
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<45:  // Added at the end: the common case.
            list.sections[list.sections.count - 1].append(newURL())
        case 45..<55:  // Inserted anywhere.
            let at = Int.random(in: 0...list.sections[section].count, using: &random)
            list.sections[section].insert(newURL(), at: at)
        case 55..<65:  // Removed for good.
            guard !list.sections[section].isEmpty else { return }
            list.sections[section].remove(at: Int.random(in: 0..<list.sections[section].count, using: &random))
        case 65..<73:  // Moved to the trash.
            guard !list.sections[section].isEmpty else { return }
            let url = list.sections[section].remove(
                at: Int.random(in: 0..<list.sections[section].count, using: &random))
            list.trash.insert(url, at: 0)
        case 73..<78:  // Restored from the trash.
            guard !list.trash.isEmpty else { return }
            let url = list.trash.remove(at: Int.random(in: 0..<list.trash.count, using: &random))
            list.sections[section].insert(url, at: 0)
        case 78..<81:  // Moved a few rows within its section.
            let count = list.sections[section].count
            guard count > 1 else { return }
            let from = Int.random(in: 0..<count, using: &random)
            let to = min(max(0, from + Int.random(in: -6...6, using: &random)), count - 1)
            list.sections[section].insert(list.sections[section].remove(at: from), at: to)
        case 81..<84:  // Moved to the start of the next section.
            guard section + 1 < list.sections.count, !list.sections[section].isEmpty else { return }
            list.sections[section + 1].insert(list.sections[section].removeLast(), at: 0)
        case 84..<88:  // A new section.
            let at = Int.random(in: 0...list.sections.count, using: &random)
            list.sections.insert([newURL()], at: at)
            list.sectionTitles.insert("Section \(next)", at: at)
        case 88..<91:  // A section emptied and removed.
            guard list.sections.count > 1 else { return }
            list.sections.remove(at: section)
            list.sectionTitles.remove(at: section)
        case 91..<94:  // Sorted anew: everything moves.
            var all = Array(list.sections.joined())
            all.shuffle(using: &random)
            let cut = Int.random(in: 0...all.count, using: &random)
            list.sections = [Array(all[..<cut]), Array(all[cut...])]
            list.sectionTitles = ["A", "B"]
        case 94..<97:  // A setting.
            list.sortOrder = list.sortOrder == "ascending" ? "descending" : "ascending"
            list.maxDownloadCount = Int.random(in: 0...5, using: &random)
        default:  // The trash emptied.
            list.trash = []
        }
    }

    @Test(arguments: StoreBackend.allCases, SeededRandom.seeds(from: "PEREGRINE_LIST_EDIT_SEED", defaults: [1, 2, 3]))
    func replayedEditsGiveEveryListBack(_ backend: StoreBackend, seed: UInt64) async throws {
        try await withTemporaryDirectory { root in
            var random = SeededRandom(seed: seed)
            var next = 0
            // Long enough that most changes are written as edits (a change of most of a list is
            // written whole).
            let start = (0..<150).map { "https://example.com/start/\($0)" }
            var lists = [
                "": StoredList(
                    identifier: "", sections: [Array(start[..<50]), Array(start[50...])], sectionTitles: ["A", "B"]),
                "videos": StoredList(identifier: "videos", sections: [start], sectionTitles: ["All"]),
            ]
            // A low threshold: background compactions fold edits into snapshots along the way.
            let store = try backend.open(root, flushDelay: .seconds(3600), compactionThreshold: 60)
            defer { try? store.close() }
            for step in 0..<400 {
                let key = Int.random(in: 0..<4, using: &random) == 0 ? "videos" : ""
                Self.mutate(&lists[key]!, &random, next: &next)
                try store.record([.putList(lists[key]!)])
                if step == 200 { try store.save() }
            }
            let crashed = try loadAfterCrash(backend, root: root, scratch: root + "-crash")
            defer { try? FileManager.default.removeItem(atPath: root + "-crash") }
            #expect(crashed.lists == lists, "seed \(seed)")
            #expect(crashed.repairs == [], "seed \(seed)")
            try store.close()
            let reopened = try backend.open(root)
            defer { try? reopened.close() }
            #expect(try reopened.load().lists == lists, "seed \(seed)")
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aGrowingListCostsTheJournalItsNewEntriesOnly(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root, flushDelay: .seconds(3600), compactionThreshold: 1_000_000)
            defer { try? store.close() }
            var list = StoredList(identifier: "", sections: [[]], sectionTitles: ["Today"])
            let count = 2_000
            for index in 0..<count {
                list.sections[0].append("https://example.com/files/\(index).bin")
                try store.record([.putList(list)])
            }
            // Closed first: an open segment is zero-filled ahead of its records.
            try store.close()
            let bytes = try backend.segmentPaths(root).reduce(0) {
                $0 + ((try FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0)
            }
            // Whole records would take about count² / 2 URLs (~80 MB); edits take one URL each
            // and the settings.
            #expect(bytes < count * 400, "the journal holds \(bytes) bytes for \(count) added URLs")
            let reopened = try backend.open(root)
            defer { try? reopened.close() }
            #expect(try reopened.load().lists[""] == list)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func movedAndRemovedTasksComeBackInTheirPlaces(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root, flushDelay: .seconds(3600), compactionThreshold: 1_000_000)
            defer { try? store.close() }
            let urls = (0..<40).map { "https://example.com/\($0)" }
            var list = StoredList(
                identifier: "", sections: [Array(urls[..<20]), Array(urls[20...])], sectionTitles: ["A", "B"])
            var written: [StoredList] = []
            func write() throws {
                try store.record([.putList(list)])
                written.append(list)
            }
            try write()
            list.sections[0].insert(list.sections[0].remove(at: 2), at: 5)  // moved down
            try write()
            list.sections[1].insert(list.sections[0].remove(at: 17), at: 1)  // to the next section
            try write()
            list.trash = [list.sections[0].remove(at: 0)]  // to the trash
            try write()
            list.sections[1].removeLast()  // for good
            try write()
            try store.close()
            let reopened = try backend.open(root)
            defer { try? reopened.close() }
            #expect(try reopened.load().lists[""] == list)
            #expect(Set(written).count == written.count)
        }
    }

    /// A lost record makes the edits after it refuse to apply (their base length differs),
    /// with a repair note: the list stays as the last record that fits left it.
    @Test func anEditWhoseBaseIsLostIsRefusedNotMisapplied() async throws {
        try await withTemporaryDirectory { root in
            let store = try StoreBackend.json.open(root, flushDelay: .seconds(3600), compactionThreshold: 1_000_000)
            defer { try? store.close() }
            var list = StoredList(identifier: "", sections: [["https://example.com/a"]], sectionTitles: ["Today"])
            try store.record([.putList(list)])
            let kept = list
            list.sections[0].append("https://example.com/lost-record")
            try store.record([.putList(list)])
            list.sections[0].append("https://example.com/c")
            try store.record([.putList(list)])
            try store.close()
            // The second record damaged (a control byte in it, as a torn sector leaves).
            let segment = try #require(try StoreBackend.json.segmentPaths(root).last)
            var bytes = try #require(FileManager.default.contents(atPath: segment))
            let marker = Array("lost-record".utf8)
            let at = try #require(
                (0...(bytes.count - marker.count)).first { Array(bytes[$0..<($0 + marker.count)]) == marker })
            bytes[at] = 0x01
            try bytes.write(to: URL(fileURLWithPath: segment))
            let reopened = try StoreBackend.json.open(root)
            defer { try? reopened.close() }
            let snapshot = try reopened.load()
            #expect(snapshot.lists[""] == kept)
            #expect(snapshot.repairs.contains { $0.contains("unreadable") })
            #expect(snapshot.repairs.contains { $0.contains("does not fit the list before it") })
        }
    }

    @Test func anEditIsTheSpliceBetweenCommonPrefixAndSuffix() throws {
        let old = StoredList(identifier: "x", sections: [["a", "b"], ["c", "d", "e"]], sectionTitles: ["1", "2"])
        var new = old
        new.sections[1].insert("z", at: 1)
        let edit = try #require(StoredListEdit(from: old, to: new))
        #expect(edit.sections == StoredListEdit.Splice(base: 5, at: 3, remove: 0, insert: ["z"]))
        #expect(edit.counts == [2, 4])
        var flat = FlatList(old)
        let applied = flat.apply(edit)
        #expect(applied)
        #expect(flat.list == new)
        // Applied to a list of another length, it is refused and changes nothing.
        var other = FlatList(StoredList(identifier: "x", sections: [["a"]], sectionTitles: ["1"]))
        let misapplied = other.apply(edit)
        #expect(!misapplied)
        #expect(other.list == StoredList(identifier: "x", sections: [["a"]], sectionTitles: ["1"]))
        // A change of most of the list is written whole.
        var sorted = old
        sorted.sections = [["e", "d", "c", "b", "a"]]
        sorted.sectionTitles = ["all"]
        #expect(StoredListEdit(from: old, to: sorted) == nil)
    }
}
