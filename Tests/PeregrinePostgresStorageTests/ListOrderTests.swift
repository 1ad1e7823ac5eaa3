import PeregrineStorage
import TestSupport
import Testing

@testable import PeregrinePostgresStorage

/// The list diff, without a database: what a change writes, and that the rows always read back
/// as the list.
@Suite("ListOrder")
struct ListOrderTests {
    private func list(_ sections: [[String]], trash: [String] = []) -> StoredList {
        StoredList(identifier: "l", sections: sections, sectionTitles: sections.map { _ in "" }, trash: trash)
    }

    /// Applies a change to rows as the database would.
    private func apply(_ change: ListOrder.Change, to rows: [ListOrder.Entry]) -> [ListOrder.Entry] {
        var rows = rows
        if change.rewritesAll { rows = [] }
        if let deleted = change.deleted { rows.removeAll { deleted.contains($0.position) } }
        rows += change.inserted
        #expect(Set(rows.map(\.position)).count == rows.count, "positions are unique")
        return rows.sorted { $0.position < $1.position }
    }

    @Test func anInsertInTheMiddleWritesOneRow() {
        let before = list([["a", "b", "c"]])
        let order = ListOrder(list: before)
        let (change, after) = order.change(to: list([["a", "x", "b", "c"]]))
        #expect(change.deleted == nil)
        #expect(change.inserted.map(\.url) == ["x"])
        #expect(change.rowsTouched == 1)
        #expect(after.sectionsAndTrash(sectionCount: 1).sections == [["a", "x", "b", "c"]])
    }

    @Test func movingToTheTrashAndAnotherSectionAreRowChanges() {
        let order = ListOrder(list: list([["a", "b"], ["c"]]))
        let target = list([["a"], ["b", "c"]], trash: ["d"])
        let (change, after) = order.change(to: target)
        let rows = apply(change, to: order.entries)
        #expect(ListOrder(entries: rows).sectionsAndTrash(sectionCount: 2).sections == [["a"], ["b", "c"]])
        #expect(after.sectionsAndTrash(sectionCount: 2).trash == ["d"])
        // Two edits (b to section 1, d to the trash) in one change: the rows between them are
        // written again — b and c out, b, c and d in.
        #expect(change.rowsTouched == 5)
    }

    @Test func aUsedUpGapRewritesTheList() {
        var order = ListOrder(list: list([["a", "z"]]))
        var urls = ["a", "z"]
        var rewrites = 0
        // Always inserting right after "a" halves the same gap until it is gone.
        for number in 0..<60 {
            urls.insert("n\(number)", at: 1)
            let (change, after) = order.change(to: list([urls]))
            if change.rewritesAll { rewrites += 1 }
            #expect(after.sectionsAndTrash(sectionCount: 1).sections == [urls])
            order = after
        }
        #expect(rewrites >= 1, "the gap of 2^20 is used up within 60 halvings")
        #expect(rewrites <= 3)
    }

    @Test(arguments: SeededRandom.seeds(from: "PEREGRINE_LIST_ORDER_SEED", defaults: [1, 2, 3, 20_261_127]))
    func randomEditsReadBackExactly(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var sections: [[String]] = [(0..<50).map { "u\($0)" }, [], (50..<60).map { "u\($0)" }]
        var trash: [String] = []
        var order = ListOrder(list: list(sections, trash: trash))
        var rows = order.entries
        var next = 1_000
        for _ in 0..<400 {
            switch random.next() % 5 {
            case 0:
                let section = Int(random.next() % 3)
                sections[section].insert("u\(next)", at: Int(random.next() % UInt64(sections[section].count + 1)))
                next += 1
            case 1:
                let section = Int(random.next() % 3)
                if !sections[section].isEmpty {
                    let url = sections[section].remove(at: Int(random.next() % UInt64(sections[section].count)))
                    trash.insert(url, at: 0)
                }
            case 2:
                if !trash.isEmpty { trash.removeLast() }
            case 3:
                let from = Int(random.next() % 3)
                let to = Int(random.next() % 3)
                if !sections[from].isEmpty {
                    let url = sections[from].remove(at: Int(random.next() % UInt64(sections[from].count)))
                    sections[to].insert(url, at: Int(random.next() % UInt64(sections[to].count + 1)))
                }
            default:
                sections[Int(random.next() % 3)].shuffle(using: &random)
            }
            let (change, after) = order.change(to: list(sections, trash: trash))
            rows = apply(change, to: rows)
            #expect(rows == after.entries)
            let read = ListOrder(entries: rows).sectionsAndTrash(sectionCount: 3)
            #expect(read.sections == sections)
            #expect(read.trash == trash)
            order = after
        }
    }
}
