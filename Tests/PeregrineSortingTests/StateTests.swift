import Foundation
import PeregrineSorting
import Testing

@Suite struct StateTests {
    let url = { (name: String) in "https://example.com/\(name)" }

    func items(of list: DownloadList) -> [ListItem] {
        list.allTasksSet.sorted().map { list.item(for: $0)! }
    }

    func roundTrip(_ list: DownloadList) throws -> DownloadList {
        let data = try JSONEncoder().encode(list.state)
        let state = try JSONDecoder().decode(DownloadListState.self, from: data)
        #expect(state == list.state)
        return try DownloadList(restoring: state, items: items(of: list), clock: list.clock, calendar: list.calendar)
    }

    @Test(arguments: ListSortType.allCases, ListSortOrder.allCases)
    func aSavedListComesBackExactly(type: ListSortType, order: ListSortOrder) throws {
        var list = Fixtures.list(sectioning: [.addTime, .fileSize, .fileNameIndex])
        try list.add([
            item("b", size: 5_000_000, added: Fixtures.noon - 3 * Fixtures.day, kind: .video),
            item("a", size: 10, kind: .image), item("2c", size: -1, added: Fixtures.noon - 50 * Fixtures.day),
            item("trashed"),
        ])
        try list.remove([url("trashed")], moveToTrash: true)
        list.sortListBy(type: type, order: order)
        if type == .manual {
            try list.insertPlaceholderSection(at: 1, title: "Later")
        }
        let restored = try roundTrip(list)
        #expect(restored.state == list.state)
        #expect(ShownList(restored) == ShownList(list))
        #expect(restored.sortType == type)
        for url in list.downloadTaskSet { #expect(restored[url] == list[url]) }
    }

    @Test func aRestoredListKeepsWorking() throws {
        var list = Fixtures.list(order: .descending, sectioning: .addTime)
        try list.add((0..<5).map { item("t\($0)", added: Fixtures.noon + Double($0)) })
        var restored = try roundTrip(list)
        try list.add([item("new", added: Fixtures.noon + 10)])
        try expectChange(&restored) { try $0.add([item("new", added: Fixtures.noon + 10)]) }
        #expect(restored.state == list.state)
    }

    @Test func aRestoredListWhoseOrderNoLongerHoldsIsSortedAgain() throws {
        var list = Fixtures.list()
        try list.add([item("a", size: 1), item("b", size: 2)])
        list.sortListBy(type: .fileSize)
        var changed = items(of: list)
        changed[0].fileSize = 3
        let restored = try DownloadList(
            restoring: list.state, items: changed, clock: list.clock, calendar: list.calendar)
        #expect(names(restored) == [["b", "a"]])
    }

    @Test func invalidStatesAreRefused() throws {
        let a = item("a")
        let b = item("b")
        func refuse(_ state: DownloadListState, _ items: [ListItem], sourceLocation: SourceLocation = #_sourceLocation)
        {
            #expect(sourceLocation: sourceLocation) {
                try DownloadList(restoring: state, items: items)
            } throws: { ($0 as? DownloadListError)?.code == .invalidState }
        }
        refuse(DownloadListState(sections: [[a.url]], sectionTitles: []), [a])
        refuse(DownloadListState(sections: [[a.url, a.url]], sectionTitles: ["T"]), [a])
        refuse(DownloadListState(sections: [[a.url]], sectionTitles: ["T"], toDeleteList: [a.url]), [a])
        refuse(DownloadListState(sections: [[a.url]], sectionTitles: ["T"]), [])
        refuse(DownloadListState(sections: [[a.url]], sectionTitles: ["T"]), [a, b])
        refuse(DownloadListState(sections: [[a.url]], sectionTitles: ["T"]), [a, a])
        refuse(DownloadListState(sections: [[a.url], []], sectionTitles: ["T", "U"]), [a])
        refuse(DownloadListState(sections: [[a.url]], sectionTitles: [""], sortType: .manual), [a])
        let fine = try DownloadList(
            restoring: DownloadListState(sections: [[a.url], []], sectionTitles: ["T", "U"], sortType: .manual),
            items: [a]
        )
        #expect(fine.sectionTitles == ["T", "U"])
    }
}
