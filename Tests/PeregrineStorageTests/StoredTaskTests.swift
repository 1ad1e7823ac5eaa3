import PeregrineStorage
import PeregrineStorageTestKit
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `StoredTask` keeps its rarely set fields in a box shared between copies: these tests check
/// that it still behaves as a plain value, and that it stays small.
@Suite struct StoredTaskTests {
    @Test func aTaskIsSmallInline() {
        // Every field inline took 424 bytes; a million loaded tasks are 400 MB of them.
        #expect(MemoryLayout<StoredTask>.size <= 104, "\(MemoryLayout<StoredTask>.size) bytes")
    }

    @Test func everyFieldReadsBackWhatWasGiven() {
        let full = StoreFixtures.fullTask(3)
        #expect(full.urlString == "https://example.com/files/3/name%20with%20spaces.zip?x=1&y=\"2\"")
        #expect(full.list == "videos")
        #expect(full.displayName == "Display ✓ 3")
        #expect(full.temporaryFileName == ".name with spaces.zip.peregrine")
        #expect(full.preferredFileName == "preferred.zip")
        #expect(full.kind == .other)
        #expect(full.expectedLength == 9_000_000_000)
        #expect(full.state == .failed(FailureReason(.httpStatus, httpStatus: 404, message: "Not Found: \"x\"\n")))
        #expect(full.resumeRecord?.offset == 1024)
        #expect(full.finishedAt == Date(timeIntervalSince1970: 1_700_000_100.987_654))
        #expect(full.checksum == "sha256=abcdef")
        #expect(full.verification?.status == "mismatch")
        #expect(full.checksumURL == "https://example.com/SHA256SUMS")
        #expect(full.verificationRetry?.maxAttempts == 5)
        #expect(full.maxConnections == 8)
        #expect(full.speedLimit == 512 << 10)
        #expect(full.mirrors.count == 2)
        // Each kind and each state, with and without a value.
        for kind in FileKind.allCases + [nil] {
            var task = StoreFixtures.task(1)
            task.kind = kind
            #expect(task.kind == kind)
        }
        let reason = FailureReason(.diskFull, message: "full")
        for state in [DownloadState.notInList, .pending, .downloading, .paused, .stopped, .finished, .failed(reason)] {
            var task = StoreFixtures.task(1)
            task.state = state
            #expect(task.state == state)
        }
        var task = StoreFixtures.task(1)
        task.expectedLength = nil
        task.finishedAt = nil
        #expect(task.expectedLength == nil && task.finishedAt == nil)
        task.expectedLength = 0
        task.finishedAt = Date(timeIntervalSinceReferenceDate: 0)
        #expect(task.expectedLength == 0 && task.finishedAt == Date(timeIntervalSinceReferenceDate: 0))
    }

    @Test func aCopyIsIndependentOfItsOriginal() {
        let original = StoreFixtures.fullTask(1)
        var copy = original
        copy.metaInfo["new"] = .string("value")
        copy.mirrors.append("https://third.example.org/f")
        copy.state = .finished
        copy.list = ""
        #expect(original == StoreFixtures.fullTask(1))
        #expect(original.metaInfo["new"] == nil)
        #expect(original.mirrors.count == 2)
        #expect(original.list == "videos")
        #expect(copy.state == .finished)
        #expect(copy.mirrors.count == 3)
        #expect(copy != original)
        // A plain task copied, then given a rare field: the plain one stays plain.
        let plain = StoreFixtures.task(2)
        var given = plain
        given.checksum = "sha256=00"
        #expect(plain.checksum == nil)
        #expect(given.checksum == "sha256=00")
    }

    @Test func equalTasksAreEqualHoweverTheyWereMade() {
        // The same values, one set field by field and back, one made at once.
        var edited = StoreFixtures.task(5)
        edited.state = .failed(FailureReason(.timeout, message: "slow"))
        edited.checksum = "sha256=11"
        edited.metaInfo = ["a": .integer(1)]
        edited.state = .finished
        edited.checksum = nil
        edited.metaInfo = [:]
        let made = StoreFixtures.task(5, state: .finished)
        #expect(edited == made)
        #expect(edited.hashValue == made.hashValue)
        #expect(Set([edited, made]).count == 1)
        var other = made
        other.displayName = "shown"
        #expect(other != made)
        #expect(Set([other, made]).count == 2)
    }

    @Test func aFileNameTakenFromTheURLReadsBackAndFollowsNoLaterURL() {
        let date = Date(timeIntervalSinceReferenceDate: 0)
        let names = [
            "a-name-longer-than-15.bin", "short.bin", "ünïcödé-file-ñame.txt",
            "\u{301}-combining-mark-after-the-slash.bin", "",
        ]
        for name in names {
            let url = "https://example.com/files/" + name
            var task = StoredTask(urlString: url, fileName: name, state: .pending, addedAt: date)
            #expect(task.fileName == name)
            // Only a name that would take an allocation of its own is worth reading from the URL.
            #expect(task.fileNameIsReadFromURL == (name.utf8.count > 15), "\(name)")
            // The same name given apart from the URL: the same value.
            var apart = StoredTask(
                urlString: "https://example.com/other", fileName: name, state: .pending, addedAt: date)
            apart.urlString = url
            #expect(apart == task)
            #expect(apart.hashValue == task.hashValue)
            // A new URL does not rename the file.
            task.urlString = "https://mirror.example.org/elsewhere/renamed-on-the-server.bin"
            #expect(task.fileName == name)
            #expect(!task.fileNameIsReadFromURL)
            #expect(task.urlString == "https://mirror.example.org/elsewhere/renamed-on-the-server.bin")
            // Set after the URL: the same again.
            task.fileName = "renamed-on-the-server.bin"
            #expect(task.fileName == "renamed-on-the-server.bin")
            #expect(task.fileNameIsReadFromURL)
            task.fileName = nil
            #expect(task.fileName == nil)
        }
        // Not the last path component: kept as given.
        let query = StoredTask(
            urlString: "https://example.com/files/name-longer-than-15.bin?x=1", fileName: "name-longer-than-15.bin",
            state: .pending, addedAt: date)
        #expect(query.fileName == "name-longer-than-15.bin" && !query.fileNameIsReadFromURL)
        let slash = StoredTask(
            urlString: "https://example.com/a-name-longer-than-15/", fileName: "a-name-longer-than-15",
            state: .pending, addedAt: date)
        #expect(slash.fileName == "a-name-longer-than-15")
        let noSlash = StoredTask(
            urlString: "no-slash-at-all-in-this-url", fileName: "no-slash-at-all-in-this-url", state: .pending,
            addedAt: date)
        #expect(noSlash.fileName == "no-slash-at-all-in-this-url")
        #expect(noSlash.urlString == "no-slash-at-all-in-this-url")
    }
}
