import Foundation
import PeregrineCore
import PeregrineSorting

/// A slow, obvious model of the download list for the random-operations test: it keeps a set
/// of tasks and lays the whole list out from scratch, with its own (naive) comparisons.
struct ReferenceList {
    var calendar: Calendar
    var items: [String: ListItem] = [:]
    var type: ListSortType
    var order: ListSortOrder = .ascending
    var sectioning: ListSectioning = []
    /// The manual layout (used in manual mode only).
    var manual: [(title: String, urls: [String])] = []
    /// Tasks in the list, for predefined modes.
    var inList: Set<String> = []
    /// Newest first.
    var trash: [String] = []
    /// The "now" the add-time groups were made with.
    var groupNow: Date?
    /// The order tasks were added in (ties of time added keep it).
    var sequences: [String: UInt64] = [:]
    var nextSequence: UInt64 = 0

    init(type: ListSortType, calendar: Calendar) {
        self.type = type
        self.calendar = calendar
    }

    // MARK: naive rules

    enum Token: Comparable {
        case char(UInt32)
        case number(String)

        static func < (a: Token, b: Token) -> Bool {
            switch (a, b) {
            case let (.char(x), .char(y)): return x < y
            case let (.number(x), .number(y)): return (x.count, x) < (y.count, y)
            case let (.number, .char(y)): return 0x30 < y
            case let (.char(x), .number): return x < 0x30
            }
        }
    }

    static func tokens(_ name: String) -> [Token] {
        var result: [Token] = []
        var digits: String?
        func flush() {
            guard let run = digits else { return }
            let stripped = String(run.drop { $0 == "0" })
            result.append(.number(stripped.isEmpty ? "0" : stripped))
            digits = nil
        }
        for character in name.lowercased() {
            if character.isASCII, character.isNumber {
                digits = (digits ?? "") + String(character)
                continue
            }
            flush()
            let folded: Character = character == "é" ? "e" : character
            result.append(.char(folded.unicodeScalars.first!.value))
        }
        flush()
        return result
    }

    static func nameOrder(_ a: String, _ b: String) -> Int {
        let (x, y) = (tokens(a), tokens(b))
        for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    func precedes(_ a: ListItem, _ b: ListItem) -> Bool {
        switch type {
        case .addTime, .manual:
            return (a.addTime, sequences[a.url]!) < (b.addTime, sequences[b.url]!)
        case .fileName, .fileType:
            let byName = Self.nameOrder(a.fileName, b.fileName)
            if byName != 0 { return byName < 0 }
            return (a.fileSize, a.fileName, a.url) < (b.fileSize, b.fileName, b.url)
        case .fileSize:
            if a.fileSize != b.fileSize { return a.fileSize < b.fileSize }
            let byName = Self.nameOrder(a.fileName, b.fileName)
            if byName != 0 { return byName < 0 }
            return (a.fileName, a.url) < (b.fileName, b.url)
        }
    }

    var isSectioned: Bool {
        switch type {
        case .manual: false
        case .addTime: sectioning.contains(.addTime)
        case .fileName: sectioning.contains(.fileNameIndex)
        case .fileSize: sectioning.contains(.fileSize)
        case .fileType: true
        }
    }

    /// (rank, title) of a task's section.
    func group(_ item: ListItem) -> (Int, String) {
        guard isSectioned else {
            let titles: [ListSortType: String] = [
                .addTime: "Sorted by Add Time", .fileName: "Sorted by File Name", .fileSize: "Sorted by File Size",
            ]
            return (0, titles[type]!)
        }
        switch type {
        case .addTime:
            let days = calendar.dateComponents(
                [.day], from: calendar.startOfDay(for: item.addTime), to: calendar.startOfDay(for: groupNow!)
            ).day!
            switch days {
            case ..<0: return (5, "Future")
            case 0: return (4, "Today")
            case 1: return (3, "Yesterday")
            case 2...7: return (2, "Last 7 Days")
            case 8...30: return (1, "Last 30 Days")
            default: return (0, "Older")
            }
        case .fileName:
            let first = item.fileName.lowercased().first.map { $0 == "é" ? "e" : $0 }
            if let first, first.isASCII, first.isLetter {
                return (Int(first.asciiValue!), first.uppercased())
            }
            return (1000, "#")
        case .fileSize:
            switch item.fileSize {
            case ..<0: return (0, "Unknown Size")
            case 0...1_000_000: return (1, "0 ~ 1 MB")
            case 1_000_001...100_000_000: return (2, "1 MB ~ 100 MB")
            case 100_000_001...1_000_000_000: return (3, "100 MB ~ 1 GB")
            default: return (4, "Larger Than 1 GB")
            }
        case .fileType:
            let order: [FileKind] = [.image, .audio, .video, .document, .other]
            return (order.firstIndex(of: item.kind)!, item.kind.rawValue)
        case .manual:
            fatalError("manual mode has no groups")
        }
    }

    /// Takes a new task in, numbering its addition.
    mutating func take(_ item: ListItem) {
        items[item.url] = item
        nextSequence += 1
        sequences[item.url] = nextSequence
    }

    /// Numbers the additions again in the order the list stores them (ascending, whatever the
    /// order shown; the trash after, oldest first), as a list restored from its saved state does.
    mutating func renumberAsRestored() {
        var ascending = self
        ascending.order = .ascending
        let stored = ascending.layout().sections.flatMap { $0 } + trash.reversed()
        nextSequence = 0
        for url in stored {
            nextSequence += 1
            sequences[url] = nextSequence
        }
    }

    /// The whole list as it must be shown.
    func layout() -> (sections: [[String]], titles: [String]) {
        if type == .manual { return (manual.map(\.urls), manual.map(\.title)) }
        var groups: [Int: (title: String, items: [ListItem])] = [:]
        for url in inList {
            let item = items[url]!
            let (rank, title) = group(item)
            groups[rank, default: (title, [])].items.append(item)
        }
        var result = groups.sorted { $0.key < $1.key }.map {
            (title: $0.value.title, urls: $0.value.items.sorted(by: precedes).map(\.url))
        }
        if order == .descending {
            if type != .fileType { result.reverse() }
            for index in result.indices { result[index].urls.reverse() }
        }
        return (result.map(\.urls), result.map(\.title))
    }

    // MARK: operations

    func isStale(now: Date) -> Bool {
        guard type == .addTime, sectioning.contains(.addTime) else { return false }
        guard let groupNow else { return true }
        return calendar.startOfDay(for: groupNow) != calendar.startOfDay(for: now)
    }

    mutating func rebuild(now: Date) {
        groupNow = type == .addTime && sectioning.contains(.addTime) ? now : nil
    }

    /// The predefined add: returns the URLs actually added.
    mutating func add(_ new: [ListItem], now: Date) -> [String] {
        var added: [String] = []
        for item in new where items[item.url] == nil {
            take(item)
            added.append(item.url)
        }
        guard !added.isEmpty else { return [] }
        if type != .addTime {
            type = .addTime
            rebuild(now: now)
        } else if isStale(now: now) {
            rebuild(now: now)
        }
        inList.formUnion(added)
        return added
    }

    mutating func insertManually(_ new: [ListItem], at path: ListIndexPath) {
        var added: [String] = []
        for item in new where items[item.url] == nil {
            take(item)
            added.append(item.url)
        }
        manual[path.section].urls.insert(contentsOf: added, at: path.item)
        inList.formUnion(added)
    }

    mutating func insertSections(_ groups: [[ListItem]], titles: [String], at section: Int) {
        var next = section
        for (group, title) in zip(groups, titles) {
            var added: [String] = []
            for item in group where items[item.url] == nil {
                take(item)
                added.append(item.url)
            }
            guard !added.isEmpty else { continue }
            manual.insert((title, added), at: next)
            inList.formUnion(added)
            next += 1
        }
    }

    /// Removes tasks in the list; `urls` must be in shown order.
    mutating func remove(_ urls: [String], toTrash: Bool) {
        let removing = Set(urls)
        if type == .manual {
            for index in manual.indices { manual[index].urls.removeAll { removing.contains($0) } }
        }
        inList.subtract(removing)
        if toTrash {
            trash.insert(contentsOf: urls, at: 0)
        } else {
            for url in urls { items[url] = nil }
        }
    }

    mutating func restore(_ urls: [String], to location: ListIndexPath, now: Date) {
        let restoring = Set(urls)
        trash.removeAll { restoring.contains($0) }
        if type == .manual {
            manual[location.section].urls.insert(contentsOf: urls, at: location.item)
        } else if isStale(now: now) {
            rebuild(now: now)
        }
        inList.formUnion(urls)
    }

    mutating func forget(_ urls: [String]) {
        let forgetting = Set(urls)
        trash.removeAll { forgetting.contains($0) }
        for url in urls { items[url] = nil }
    }

    func sortAttributesDiffer(_ a: ListItem, _ b: ListItem) -> Bool {
        switch type {
        case .manual: false
        case .addTime: a.addTime != b.addTime
        case .fileName, .fileSize: a.fileName != b.fileName || a.fileSize != b.fileSize
        case .fileType: a.fileName != b.fileName || a.fileSize != b.fileSize || a.kind != b.kind
        }
    }

    mutating func update(_ item: ListItem, now: Date) {
        let old = items[item.url]!
        items[item.url] = item
        if type != .manual, inList.contains(item.url), sortAttributesDiffer(old, item), isStale(now: now) {
            rebuild(now: now)
        }
    }

    mutating func sort(type newType: ListSortType, order newOrder: ListSortOrder, now: Date) {
        if newType == .manual {
            guard type != .manual else { return }
            let all = layout().sections.flatMap { $0 }
            manual = all.isEmpty ? [] : [("Title", all)]
            type = .manual
            groupNow = nil
            return
        }
        type = newType
        order = newOrder
        rebuild(now: now)
    }

    mutating func setSectioning(_ options: ListSectioning, now: Date) {
        let was = isSectioned
        sectioning = options
        if type != .manual, type != .fileType, was != isSectioned { rebuild(now: now) }
    }

    mutating func customSort(
        order sortOrder: ListSortOrder,
        trait: (ListItem) -> String?,
        traitAscending: ((String, String) -> Bool)?,
        taskAscending: (ListItem, ListItem) -> Bool
    ) {
        let all = layout().sections.flatMap { $0 }
        var groups: [String: [ListItem]] = [:]
        var untraited: [ListItem] = []
        for url in all {
            let item = items[url]!
            if let value = trait(item), !value.isEmpty {
                groups[value, default: []].append(item)
            } else {
                untraited.append(item)
            }
        }
        var sections = groups.keys.sorted(by: traitAscending ?? (<)).map {
            ($0, groups[$0]!.sorted(by: taskAscending).map(\.url))
        }
        if sortOrder == .descending {
            sections.reverse()
            for index in sections.indices { sections[index].1.reverse() }
        }
        if !untraited.isEmpty {
            let rows = untraited.sorted(by: taskAscending).map(\.url)
            sections.append(("Title", sortOrder == .descending ? rows.reversed() : rows))
        }
        manual = sections.map { (title: $0.0, urls: $0.1) }
        type = .manual
        groupNow = nil
    }
}
