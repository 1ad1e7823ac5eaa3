// The SQLite peer of P4 (issue 19): the same tasks in one SQLite table through GRDB, in WAL
// mode with `synchronous=FULL` (every commit durable, as Peregrine's durable changes are),
// loaded into the same `StoredTask` values the stores load.
import GRDB
import PeregrineStorage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

enum SQLitePeer {
    static func path(_ root: String) -> String { "\(root)/bench.sqlite" }

    static func open(_ root: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let queue = try DatabaseQueue(path: path(root), configuration: configuration)
        _ = try queue.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
        return queue
    }

    /// One row per task: the columns a store needs to give the task back, meta info as JSON.
    static func prepare(_ tasks: [StoredTask], root: String) throws {
        let queue = try open(root)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE tasks (
                        url TEXT PRIMARY KEY, list TEXT NOT NULL, fileName TEXT, kind TEXT, mimeType TEXT,
                        expectedLength INTEGER, receivedLength INTEGER NOT NULL, state TEXT NOT NULL,
                        resumeOffset INTEGER, entityTag TEXT, addedAt REAL NOT NULL, finishedAt REAL,
                        checksum TEXT, meta TEXT)
                    """)
            let insert = try db.makeStatement(sql: "INSERT INTO tasks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
            for task in tasks {
                var entityTag: String?
                if case .entityTag(let tag) = task.resumeRecord?.validator { entityTag = tag }
                let meta = task.metaInfo.isEmpty ? nil : metaText(task.metaInfo)
                try insert.execute(arguments: [
                    task.urlString, task.list, task.fileName, task.kind?.rawValue, task.mimeType,
                    task.expectedLength, task.receivedLength, stateName(task.state), task.resumeRecord?.offset,
                    entityTag, task.addedAt.timeIntervalSinceReferenceDate,
                    task.finishedAt?.timeIntervalSinceReferenceDate, task.checksum, meta,
                ])
            }
        }
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// Every task, as `StoredTask` values.
    static func load(root: String) throws -> [StoredTask] {
        let queue = try open(root)
        return try queue.read { db in
            var tasks: [StoredTask] = []
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM tasks")
            while let row = try rows.next() {
                let url: String = row[0]
                let state = try state(named: row[7])
                var task = StoredTask(
                    urlString: url, fileName: row[2], kind: (row[3] as String?).flatMap(FileKind.init(rawValue:)),
                    mimeType: row[4], expectedLength: row[5], receivedLength: row[6], state: state,
                    addedAt: Date(timeIntervalSinceReferenceDate: row[10]),
                    finishedAt: (row[11] as Double?).map { Date(timeIntervalSinceReferenceDate: $0) })
                task.list = row[1]
                if let offset = row[8] as Int64? {
                    task.resumeRecord = ResumeRecord(
                        offset: offset, validator: (row[9] as String?).map { .entityTag($0) },
                        expectedLength: task.expectedLength)
                }
                task.checksum = row[12]
                if let meta = row[13] as String? { task.metaInfo = try metaInfo(meta) }
                tasks.append(task)
            }
            return tasks
        }
    }

    /// `changes` changes as the stores' `change` mode makes them — nine progress updates for
    /// each state change — each its own durable transaction; prints the same figures.
    static func change(root: String, changes: Int, count: Int) throws -> (
        progress: Duration, progressCount: Int, durable: [Duration], overall: Duration, checkpoint: Duration
    ) {
        let queue = try open(root)
        let urls = try queue.read { db in try String.fetchAll(db, sql: "SELECT url FROM tasks") }
        var rng = SplitMix64(state: 7)
        var progress: Duration = .zero
        var progressCount = 0
        var durable: [Duration] = []
        let clock = ContinuousClock()
        let overall = clock.now
        for number in 0..<changes {
            let url = urls[Int(rng.next() % UInt64(urls.count))]
            let start = clock.now
            if number % 10 != 9 {
                try queue.write { db in
                    try db.execute(
                        sql:
                            "UPDATE tasks SET state = 'downloading', receivedLength = receivedLength + 65536 WHERE url = ?",
                        arguments: [url])
                }
                progress += clock.now - start
                progressCount += 1
            } else {
                // The finish date makes it a real change: SQLite skips writing a row whose bytes
                // do not change, and most of these tasks are finished already (a first version
                // measured those empty commits, 466 of every 500, as durable changes).
                let finished = Date().timeIntervalSinceReferenceDate
                try queue.write { db in
                    try db.execute(
                        sql: "UPDATE tasks SET state = 'finished', finishedAt = ? WHERE url = ?",
                        arguments: [finished, url])
                }
                durable.append(clock.now - start)
            }
        }
        let total = clock.now - overall
        let checkpointStart = clock.now
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        return (progress, progressCount, durable, total, clock.now - checkpointStart)
    }

    private static func stateName(_ state: DownloadState) -> String {
        switch state {
        case .finished: "finished"
        case .stopped: "stopped"
        case .pending: "pending"
        case .downloading: "downloading"
        case .paused: "paused"
        case .failed: "failed"
        case .notInList: "notInList"
        }
    }

    private static func state(named name: String) throws -> DownloadState {
        switch name {
        case "finished": .finished
        case "stopped": .stopped
        case "pending": .pending
        case "downloading": .downloading
        case "paused": .paused
        case "failed": .failed(FailureReason(.unknown, message: ""))
        default: .notInList
        }
    }

    /// A meta info value as JSON (what an application keeping tasks in SQLite would store).
    private enum MetaValue: Codable {
        case string(String), integer(Int64), boolean(Bool)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .boolean(flag)
            } else if let number = try? container.decode(Int64.self) {
                self = .integer(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let text): try container.encode(text)
            case .integer(let number): try container.encode(number)
            case .boolean(let flag): try container.encode(flag)
            }
        }
    }

    private static func metaText(_ meta: [String: PropertyListValue]) -> String {
        var values: [String: MetaValue] = [:]
        for (key, value) in meta {
            switch value {
            case .string(let text): values[key] = .string(text)
            case .integer(let number): values[key] = .integer(number)
            case .boolean(let flag): values[key] = .boolean(flag)
            default: values[key] = .string("\(value)")
            }
        }
        let data = (try? JSONEncoder().encode(values)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private static func metaInfo(_ text: String) throws -> [String: PropertyListValue] {
        try JSONDecoder().decode([String: MetaValue].self, from: Data(text.utf8)).mapValues { value in
            switch value {
            case .string(let text): .string(text)
            case .integer(let number): .integer(number)
            case .boolean(let flag): .boolean(flag)
            }
        }
    }
}
