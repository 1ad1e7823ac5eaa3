import PeregrineCore
import PeregrineStorage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The first record of every snapshot and journal file.
package struct StoreFileHeader: Sendable, Equatable {
    /// What the file holds.
    package enum Kind: String, Sendable {
        case snapshot
        case journal
    }

    /// The format version this code writes; a file with a higher one is refused. Version 2
    /// journals may hold list edits (``StoredListEdit``); version 1 files read as before.
    package static let currentVersion: Int64 = 2

    package var kind: Kind
    package var version: Int64
    package var backend: String
    /// For a snapshot: the first journal segment it does not include. For a journal: its number.
    package var segment: Int64
    /// For a snapshot: how many records follow.
    package var records: Int64

    package init(kind: Kind, version: Int64 = currentVersion, backend: String, segment: Int64, records: Int64 = 0) {
        self.kind = kind
        self.version = version
        self.backend = backend
        self.segment = segment
        self.records = records
    }

    package var node: StoreNode {
        .dictionary([
            ("format", .string("peregrine-store")), ("kind", .string(kind.rawValue)), ("version", .integer(version)),
            ("backend", .string(backend)), ("segment", .integer(segment)), ("records", .integer(records)),
        ])
    }

    /// Reads a header; nil when the node is not one.
    package init?(_ node: StoreNode) {
        guard case .dictionary(let pairs) = node else { return nil }
        var format: String?
        var kind: Kind?
        var version: Int64?
        var backend = ""
        var segment: Int64 = 0
        var records: Int64 = 0
        for (key, value) in pairs {
            switch (key, value) {
            case ("format", .string(let text)): format = text
            case ("kind", .string(let text)): kind = Kind(rawValue: text)
            case ("version", .integer(let number)): version = number
            case ("backend", .string(let text)): backend = text
            case ("segment", .integer(let number)): segment = number
            case ("records", .integer(let number)): records = number
            default: break
            }
        }
        guard format == "peregrine-store", let kind, let version else { return nil }
        self.init(kind: kind, version: version, backend: backend, segment: segment, records: records)
    }
}

/// One record of a journal: a change, or a list written as its edit (``StoredListEdit``).
package enum StoreRecord: Sendable, Hashable {
    case change(StoreChange)
    case listEdit(StoredListEdit)
}

/// Maps ``StoreChange`` values to record nodes and back. A snapshot is a sequence of the same
/// records as a journal (puts only), so one coding serves both.
package enum StoreRecordCoding {
    /// The node of one change.
    package static func node(_ change: StoreChange) -> StoreNode {
        switch change {
        case .putTask(let task): return taskNode(task)
        case .removeTask(let urlString):
            return .dictionary([("op", .string("removeTask")), ("url", .string(urlString))])
        case .putList(let list): return listNode(list)
        case .removeList(let identifier):
            return .dictionary([("op", .string("removeList")), ("id", .string(identifier))])
        case .setConfiguration(let configuration):
            return .dictionary([("op", .string("configuration")), ("value", dictionaryNode(configuration))])
        case .setCustomThumbnail(let urlString, let thumbnail):
            var pairs: [(String, StoreNode)] = [("op", .string("thumbnail")), ("url", .string(urlString))]
            if let thumbnail {
                pairs.append(("file", .string(thumbnail.fileName)))
                pairs.append(("width", .integer(Int64(thumbnail.width))))
                pairs.append(("height", .integer(Int64(thumbnail.height))))
                pairs.append(("pixelFormat", .string(thumbnail.pixelFormat)))
                pairs.append(("format", .string(thumbnail.format)))
                pairs.append(("content", .string(thumbnail.contentIdentifier)))
            }
            return .dictionary(pairs)
        }
    }

    /// The record a node holds: a change, or a list edit.
    package static func record(_ node: StoreNode) throws(StoreFormatError) -> StoreRecord {
        if case .dictionary(let pairs) = node, let first = pairs.first, first.0 == "op", first.1 == .string("listEdit")
        {
            return .listEdit(try listEdit(pairs))
        }
        return .change(try change(node))
    }

    /// The change a node holds.
    package static func change(_ node: StoreNode) throws(StoreFormatError) -> StoreChange {
        guard case .dictionary(let pairs) = node else { throw StoreFormatError("a record is not a dictionary") }
        guard let first = pairs.first, first.0 == "op", case .string(let op) = first.1 else {
            throw StoreFormatError("a record has no operation")
        }
        switch op {
        case "task": return .putTask(try task(pairs))
        case "removeTask": return .removeTask(urlString: try string(pairs, "url"))
        case "list": return .putList(try list(pairs))
        case "removeList": return .removeList(identifier: try string(pairs, "id"))
        case "configuration":
            guard case .dictionary(let value)? = pairs.first(where: { $0.0 == "value" })?.1 else {
                throw StoreFormatError("a configuration record has no value")
            }
            return .setConfiguration(try propertyDictionary(value))
        case "thumbnail":
            let url = try string(pairs, "url")
            guard pairs.count > 2 else { return .setCustomThumbnail(urlString: url, nil) }
            let thumbnail = StoredCustomThumbnail(
                fileName: try string(pairs, "file"), width: Int(try integer(pairs, "width")),
                height: Int(try integer(pairs, "height")), pixelFormat: try string(pairs, "pixelFormat"),
                format: try string(pairs, "format"), contentIdentifier: try string(pairs, "content"))
            return .setCustomThumbnail(urlString: url, thumbnail)
        default: throw StoreFormatError("unknown operation \(op.prefix(40))")
        }
    }

    // MARK: Tasks

    private static func taskNode(_ task: StoredTask) -> StoreNode {
        var pairs: [(String, StoreNode)] = [("op", .string("task")), ("url", .string(task.urlString))]
        pairs.reserveCapacity(20)
        if !task.list.isEmpty { pairs.append(("list", .string(task.list))) }
        if let value = task.displayName { pairs.append(("name", .string(value))) }
        if let value = task.fileName { pairs.append(("file", .string(value))) }
        if let value = task.temporaryFileName { pairs.append(("tmp", .string(value))) }
        if let value = task.preferredFileName { pairs.append(("preferred", .string(value))) }
        if let value = task.kind { pairs.append(("kind", .string(value.rawValue))) }
        if let value = task.mimeType { pairs.append(("mime", .string(value))) }
        if let value = task.expectedLength { pairs.append(("length", .integer(value))) }
        pairs.append(("received", .integer(task.receivedLength)))
        switch task.state {
        case .notInList: pairs.append(("state", .string("notInList")))
        case .pending: pairs.append(("state", .string("pending")))
        case .downloading: pairs.append(("state", .string("downloading")))
        case .paused: pairs.append(("state", .string("paused")))
        case .stopped: pairs.append(("state", .string("stopped")))
        case .finished: pairs.append(("state", .string("finished")))
        case .failed(let reason):
            pairs.append(("state", .string("failed")))
            var failure: [(String, StoreNode)] = [("code", .string(reason.code.rawValue))]
            if let status = reason.httpStatus { failure.append(("status", .integer(Int64(status)))) }
            failure.append(("message", .string(reason.message)))
            pairs.append(("failure", .dictionary(failure)))
        }
        if let resume = task.resumeRecord {
            var record: [(String, StoreNode)] = [("offset", .integer(resume.offset))]
            switch resume.validator {
            case .entityTag(let tag): record.append(("etag", .string(tag)))
            case .lastModified(let date): record.append(("lastModified", .string(date)))
            case nil: break
            }
            if let length = resume.expectedLength { record.append(("length", .integer(length))) }
            if !resume.completedRanges.isEmpty {
                // Flat pairs: start, end, start, end…
                let bounds = resume.completedRanges.flatMap {
                    [StoreNode.integer($0.lowerBound), .integer($0.upperBound)]
                }
                record.append(("ranges", .array(bounds)))
            }
            pairs.append(("resume", .dictionary(record)))
        }
        pairs.append(("added", .real(task.addedAt.timeIntervalSinceReferenceDate)))
        if let value = task.finishedAt { pairs.append(("finished", .real(value.timeIntervalSinceReferenceDate))) }
        if !task.metaInfo.isEmpty { pairs.append(("meta", dictionaryNode(task.metaInfo))) }
        if let value = task.checksum { pairs.append(("checksum", .string(value))) }
        if let verification = task.verification {
            var record: [(String, StoreNode)] = [("status", .string(verification.status))]
            if let value = verification.expected { record.append(("expected", .string(value))) }
            if let value = verification.actual { record.append(("actual", .string(value))) }
            pairs.append(("verification", .dictionary(record)))
        }
        if let value = task.checksumURL { pairs.append(("checksumURL", .string(value))) }
        if let retry = task.verificationRetry {
            pairs.append(
                (
                    "retry",
                    .dictionary([
                        ("attempts", .integer(Int64(retry.maxAttempts))), ("mismatched", .string(retry.mismatchedFile)),
                    ])
                ))
        }
        if let connections = task.maxConnections { pairs.append(("connections", .integer(Int64(connections)))) }
        if let rate = task.speedLimit { pairs.append(("speedLimit", .integer(rate))) }
        if !task.mirrors.isEmpty { pairs.append(("mirrors", .array(task.mirrors.map { .string($0) }))) }
        if let value = task.subdirectory { pairs.append(("folder", .string(value))) }
        return .dictionary(pairs)
    }

    /// Reads `start, end, start, end…`; anything malformed (odd count, reversed, overlapping,
    /// unsorted, before the offset) drops the ranges, which only costs their bytes again.
    private static func completedRanges(_ bounds: [StoreNode], after offset: Int64) -> [Range<Int64>] {
        guard bounds.count.isMultiple(of: 2) else { return [] }
        var ranges: [Range<Int64>] = []
        var floor = offset
        for index in stride(from: 0, to: bounds.count, by: 2) {
            guard case .integer(let start) = bounds[index], case .integer(let end) = bounds[index + 1],
                start > floor, end > start
            else { return [] }
            ranges.append(start..<end)
            floor = end
        }
        return ranges
    }

    private static func task(_ pairs: [(String, StoreNode)]) throws(StoreFormatError) -> StoredTask {
        // Fields gathered first and the task made once: a `StoredTask` keeps its rare fields in
        // a shared box, which setting them one by one would rebuild each time.
        var url: String?
        var list = ""
        var displayName: String?
        var fileName: String?
        var temporaryFileName: String?
        var preferredFileName: String?
        var kind: FileKind?
        var mimeType: String?
        var expectedLength: Int64?
        var receivedLength: Int64 = 0
        var resumeRecord: ResumeRecord?
        var addedAt = Date(timeIntervalSinceReferenceDate: 0)
        var finishedAt: Date?
        var metaInfo: [String: PropertyListValue] = [:]
        var checksum: String?
        var verification: StoredVerification?
        var checksumURL: String?
        var verificationRetry: StoredVerificationRetry?
        var maxConnections: Int?
        var speedLimit: Int64?
        var mirrors: [String] = []
        var subdirectory: String?
        var state = "pending"
        var failure: FailureReason?
        for (key, value) in pairs.dropFirst() {
            // The keys nearly every record has come first: a case is a string comparison.
            switch (key, value) {
            case ("url", .string(let text)): url = text
            case ("file", .string(let text)): fileName = text
            case ("kind", .string(let text)): kind = FileKind(rawValue: text)
            case ("mime", .string(let text)): mimeType = text
            case ("length", .integer(let number)): expectedLength = number
            case ("received", .integer(let number)): receivedLength = number
            case ("state", .string(let text)): state = text
            case ("added", .real(let seconds)): addedAt = Date(timeIntervalSinceReferenceDate: seconds)
            case ("finished", .real(let seconds)): finishedAt = Date(timeIntervalSinceReferenceDate: seconds)
            case ("list", .string(let text)): list = text
            case ("name", .string(let text)): displayName = text
            case ("tmp", .string(let text)): temporaryFileName = text
            case ("preferred", .string(let text)): preferredFileName = text
            case ("failure", .dictionary(let record)):
                var code = FailureReason.Code.unknown
                var status: Int?
                var message = ""
                for (key, value) in record {
                    switch (key, value) {
                    case ("code", .string(let text)): code = FailureReason.Code(rawValue: text)
                    case ("status", .integer(let number)): status = Int(truncatingIfNeeded: number)
                    case ("message", .string(let text)): message = text
                    default: break
                    }
                }
                failure = FailureReason(code, httpStatus: status, message: message)
            case ("resume", .dictionary(let record)):
                var resume = ResumeRecord(offset: 0, validator: nil, expectedLength: nil)
                for (key, value) in record {
                    switch (key, value) {
                    case ("offset", .integer(let number)): resume.offset = number
                    case ("etag", .string(let text)): resume.validator = .entityTag(text)
                    case ("lastModified", .string(let text)): resume.validator = .lastModified(text)
                    case ("length", .integer(let number)): resume.expectedLength = number
                    case ("ranges", .array(let bounds)):
                        resume.completedRanges = completedRanges(bounds, after: resume.offset)
                    default: break
                    }
                }
                resumeRecord = resume
            case ("added", .integer(let seconds)): addedAt = Date(timeIntervalSinceReferenceDate: Double(seconds))
            case ("finished", .integer(let seconds)):
                finishedAt = Date(timeIntervalSinceReferenceDate: Double(seconds))
            case ("meta", .dictionary(let record)): metaInfo = try propertyDictionary(record)
            case ("checksum", .string(let text)): checksum = text
            case ("verification", .dictionary(let record)):
                var parsed = StoredVerification(status: "unverified")
                for (key, value) in record {
                    switch (key, value) {
                    case ("status", .string(let text)): parsed.status = text
                    case ("expected", .string(let text)): parsed.expected = text
                    case ("actual", .string(let text)): parsed.actual = text
                    default: break
                    }
                }
                verification = parsed
            case ("checksumURL", .string(let text)): checksumURL = text
            case ("retry", .dictionary(let record)):
                var retry = StoredVerificationRetry(maxAttempts: 3, mismatchedFile: "keepAside")
                for (key, value) in record {
                    switch (key, value) {
                    case ("attempts", .integer(let number)): retry.maxAttempts = Int(clamping: number)
                    case ("mismatched", .string(let text)): retry.mismatchedFile = text
                    default: break
                    }
                }
                verificationRetry = retry
            case ("connections", .integer(let number)) where (1...64).contains(number):
                maxConnections = Int(number)
            case ("speedLimit", .integer(let number)) where number > 0:
                speedLimit = number
            case ("mirrors", .array(let values)):
                // Anything but strings is dropped: a mirror less costs only its speed.
                mirrors = values.compactMap { if case .string(let text) = $0 { text } else { nil } }
            case ("folder", .string(let text)): subdirectory = text
            default: break
            }
        }
        guard let url else { throw StoreFormatError("a task record has no URL") }
        let taskState: DownloadState
        switch state {
        case "notInList": taskState = .notInList
        case "pending": taskState = .pending
        case "downloading": taskState = .downloading
        case "paused": taskState = .paused
        case "stopped": taskState = .stopped
        case "finished": taskState = .finished
        case "failed": taskState = .failed(failure ?? FailureReason(.unknown, message: ""))
        default: throw StoreFormatError("unknown task state \(state.prefix(40))")
        }
        return StoredTask(
            urlString: url, list: list, displayName: displayName, fileName: fileName,
            temporaryFileName: temporaryFileName, preferredFileName: preferredFileName, kind: kind, mimeType: mimeType,
            expectedLength: expectedLength, receivedLength: receivedLength, state: taskState,
            resumeRecord: resumeRecord, addedAt: addedAt, finishedAt: finishedAt, metaInfo: metaInfo,
            checksum: checksum, verification: verification, checksumURL: checksumURL,
            verificationRetry: verificationRetry, maxConnections: maxConnections, speedLimit: speedLimit,
            mirrors: mirrors, subdirectory: subdirectory)
    }

    // MARK: Lists

    private static func listNode(_ list: StoredList) -> StoreNode {
        var pairs: [(String, StoreNode)] = [
            ("op", .string("list")), ("id", .string(list.identifier)),
            ("sections", .array(list.sections.map { .array($0.map(StoreNode.string)) })),
            ("titles", .array(list.sectionTitles.map(StoreNode.string))),
            ("trash", .array(list.trash.map(StoreNode.string))), ("sortType", .string(list.sortType)),
            ("sortOrder", .string(list.sortOrder)), ("sectioning", .integer(Int64(list.sectioning))),
        ]
        if let date = list.addTimeReference { pairs.append(("addTimeReference", .date(date))) }
        if let count = list.maxDownloadCount { pairs.append(("maxDownloadCount", .integer(Int64(count)))) }
        return .dictionary(pairs)
    }

    /// The node of a list edit: the list's settings and titles as in a list record, and the two
    /// splices.
    package static func node(_ edit: StoredListEdit) -> StoreNode {
        guard case .dictionary(var pairs) = listNode(edit.settings) else { return .null }
        pairs[0] = ("op", .string("listEdit"))
        pairs.removeAll { $0.0 == "sections" || $0.0 == "trash" }
        pairs.append(("counts", .array(edit.counts.map { .integer(Int64($0)) })))
        pairs.append(("sections", spliceNode(edit.sections)))
        pairs.append(("trash", spliceNode(edit.trash)))
        return .dictionary(pairs)
    }

    private static func spliceNode(_ splice: StoredListEdit.Splice) -> StoreNode {
        .dictionary([
            ("base", .integer(Int64(splice.base))), ("at", .integer(Int64(splice.at))),
            ("remove", .integer(Int64(splice.remove))), ("insert", .array(splice.insert.map(StoreNode.string))),
        ])
    }

    private static func listEdit(_ pairs: [(String, StoreNode)]) throws(StoreFormatError) -> StoredListEdit {
        let settings = try list(pairs.filter { $0.0 != "sections" && $0.0 != "trash" })
        guard case .array(let countNodes)? = pairs.first(where: { $0.0 == "counts" })?.1 else {
            throw StoreFormatError("a list edit has no section lengths")
        }
        let counts = try countNodes.map { (node) throws(StoreFormatError) -> Int in
            guard case .integer(let count) = node else { throw StoreFormatError("a section length is not a number") }
            return Int(truncatingIfNeeded: count)
        }
        return StoredListEdit(
            identifier: settings.identifier, sections: try splice(pairs, "sections"), counts: counts,
            trash: try splice(pairs, "trash"), settings: settings)
    }

    private static func splice(_ pairs: [(String, StoreNode)], _ key: String) throws(StoreFormatError)
        -> StoredListEdit.Splice
    {
        guard case .dictionary(let fields)? = pairs.first(where: { $0.0 == key })?.1,
            case .array(let insert)? = fields.first(where: { $0.0 == "insert" })?.1
        else { throw StoreFormatError("a list edit has no \(key) splice") }
        return StoredListEdit.Splice(
            base: Int(truncatingIfNeeded: try integer(fields, "base")),
            at: Int(truncatingIfNeeded: try integer(fields, "at")),
            remove: Int(truncatingIfNeeded: try integer(fields, "remove")), insert: try strings(insert))
    }

    private static func list(_ pairs: [(String, StoreNode)]) throws(StoreFormatError) -> StoredList {
        var list = StoredList()
        for (key, value) in pairs.dropFirst() {
            switch (key, value) {
            case ("id", .string(let text)): list.identifier = text
            case ("sections", .array(let sections)):
                list.sections = try sections.map { (section) throws(StoreFormatError) -> [String] in
                    guard case .array(let urls) = section else { throw StoreFormatError("a section is not a list") }
                    return try strings(urls)
                }
            case ("titles", .array(let titles)): list.sectionTitles = try strings(titles)
            case ("trash", .array(let trash)): list.trash = try strings(trash)
            case ("sortType", .string(let text)): list.sortType = text
            case ("sortOrder", .string(let text)): list.sortOrder = text
            case ("sectioning", .integer(let number)): list.sectioning = Int(truncatingIfNeeded: number)
            case ("addTimeReference", .date(let date)): list.addTimeReference = date
            case ("maxDownloadCount", .integer(let number)): list.maxDownloadCount = Int(truncatingIfNeeded: number)
            default: break
            }
        }
        return list
    }

    // MARK: Values

    /// A property-list value as a node: each case to its own node case.
    package static func propertyNode(_ value: PropertyListValue) -> StoreNode {
        switch value {
        case .string(let text): .string(text)
        case .integer(let number): .integer(number)
        case .real(let number): .real(number)
        case .boolean(let flag): .boolean(flag)
        case .date(let date): .date(date)
        case .data(let data): .data(data)
        case .array(let values): .array(values.map(propertyNode))
        case .dictionary(let values): dictionaryNode(values)
        }
    }

    private static func dictionaryNode(_ values: [String: PropertyListValue]) -> StoreNode {
        // Sorted keys: the same value always gives the same bytes.
        .dictionary(values.sorted { $0.key < $1.key }.map { ($0.key, propertyNode($0.value)) })
    }

    /// A node as a property-list value; null has no property-list form.
    package static func propertyValue(_ node: StoreNode) throws(StoreFormatError) -> PropertyListValue {
        switch node {
        case .null: throw StoreFormatError("null is not a property-list value")
        case .boolean(let flag): return .boolean(flag)
        case .integer(let number): return .integer(number)
        case .real(let number): return .real(number)
        case .string(let text): return .string(text)
        case .date(let date): return .date(date)
        case .data(let data): return .data(data)
        case .array(let values):
            return .array(try values.map { (value) throws(StoreFormatError) in try propertyValue(value) })
        case .dictionary(let pairs): return .dictionary(try propertyDictionary(pairs))
        }
    }

    private static func propertyDictionary(_ pairs: [(String, StoreNode)]) throws(StoreFormatError)
        -> [String: PropertyListValue]
    {
        var values: [String: PropertyListValue] = [:]
        values.reserveCapacity(pairs.count)
        for (key, value) in pairs { values[key] = try propertyValue(value) }
        return values
    }

    private static func strings(_ nodes: [StoreNode]) throws(StoreFormatError) -> [String] {
        var result: [String] = []
        result.reserveCapacity(nodes.count)
        for node in nodes {
            guard case .string(let text) = node else { throw StoreFormatError("a list entry is not a string") }
            result.append(text)
        }
        return result
    }

    private static func string(_ pairs: [(String, StoreNode)], _ key: String) throws(StoreFormatError) -> String {
        guard case .string(let text)? = pairs.first(where: { $0.0 == key })?.1 else {
            throw StoreFormatError("a record has no \(key)")
        }
        return text
    }

    private static func integer(_ pairs: [(String, StoreNode)], _ key: String) throws(StoreFormatError) -> Int64 {
        guard case .integer(let number)? = pairs.first(where: { $0.0 == key })?.1 else {
            throw StoreFormatError("a record has no \(key)")
        }
        return number
    }
}
