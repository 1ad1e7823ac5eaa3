import PeregrineJSONStorage
import PeregrineJournal
import PeregrinePlistStorage
import PeregrineStorage
import PeregrineStorageTestKit
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// What the journaled backends (JSON, binary plist) do beyond the store conformance kit: crash
/// repair, the flush delay, locks, compaction of the journal, group commit, full disks. Each
/// test runs once per backend.
@Suite struct JournaledStoreTests {
    @Test(arguments: StoreBackend.allCases)
    func aClosedStoreRefusesWorkAndReleasesItsFiles(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            try store.record([.putTask(StoreFixtures.task(1))])
            try store.close()
            #expect(throws: StoreError.self) { try store.load() }
            do throws(StoreError) {
                try store.record([.putTask(StoreFixtures.task(2))])
                Issue.record("record after close did not throw")
            } catch { #expect(error.code == .closed) }
            let reopened = try backend.open(root)
            defer { try? reopened.close() }
            #expect(try reopened.load().tasks == [StoreFixtures.task(1)])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func durableChangesAreOnDiskWhenRecordReturns(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root, flushDelay: .seconds(3600))
            defer { try? store.close() }
            try store.record([.putTask(StoreFixtures.task(1))])
            try store.record([.putTask(StoreFixtures.task(1, state: .finished, received: 1000))])
            try store.record([.putTask(StoreFixtures.task(2)), .removeTask(urlString: StoreFixtures.task(2).urlString)])
            try store.record([.putList(StoreFixtures.list)])
            // A crash now: the files as they are, read by another store.
            let crashed = try loadAfterCrash(backend, root: root, scratch: root + "-crash")
            defer { try? FileManager.default.removeItem(atPath: root + "-crash") }
            #expect(crashed.tasks == [StoreFixtures.task(1, state: .finished, received: 1000)])
            #expect(crashed.lists == ["videos": StoreFixtures.list])
            #expect(crashed.repairs == [])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func progressReachesDiskWithinTheFlushDelay(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root, flushDelay: .milliseconds(50))
            defer { try? store.close() }
            try store.record([.putTask(StoreFixtures.task(1))])
            let progress = StoreFixtures.task(1, state: .downloading, received: 500)
            #expect(!StoreChange.putTask(progress).isDurable)
            try store.record([.putTask(progress)])
            let scratch = root + "-crash"
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let arrived = try await eventually {
                try loadAfterCrash(backend, root: root, scratch: scratch).tasks == [progress]
            }
            #expect(arrived, "the progress change never reached the journal")
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func progressWaitsForTheFlushDelayButSaveWritesIt(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root, flushDelay: .seconds(3600))
            defer { try? store.close() }
            try store.record([.putTask(StoreFixtures.task(1))])
            let progress = StoreFixtures.task(1, state: .downloading, received: 500)
            try store.record([.putTask(progress)])
            let scratch = root + "-crash"
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            #expect(try loadAfterCrash(backend, root: root, scratch: scratch).tasks == [StoreFixtures.task(1)])
            try store.save()
            #expect(try loadAfterCrash(backend, root: root, scratch: scratch).tasks == [progress])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aTornJournalTailIsDroppedAndReported(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            for index in 0..<3 { try store.record([.putTask(StoreFixtures.fullTask(index))]) }
            try store.close()
            let segment = try #require(try backend.segmentPaths(root).last)
            let bytes = try readBytes(segment)
            try writeBytes(Array(bytes.dropLast(25)), to: segment)
            let reopened = try backend.open(root)
            let snapshot = try reopened.load()
            #expect(snapshot.tasks == [StoreFixtures.fullTask(0), StoreFixtures.fullTask(1)])
            #expect(snapshot.repairs.count == 1)
            #expect(snapshot.repairs.first?.contains("cut") == true)
            // New entries go on after the torn one without being lost behind it.
            try reopened.record([.putTask(StoreFixtures.task(9))])
            try reopened.close()
            let again = try backend.open(root)
            defer { try? again.close() }
            #expect(
                try again.load().tasks == [StoreFixtures.fullTask(0), StoreFixtures.fullTask(1), StoreFixtures.task(9)])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func theZeroFilledSpaceACrashLeavesIsNotDamage(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            defer { try? store.close() }
            let tasks = (0..<3).map { StoreFixtures.fullTask($0) }
            for task in tasks { try store.record([.putTask(task)]) }
            let scratch = root + "-crash"
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            try copyStoreFiles(from: root, to: scratch)
            let segment = try #require(try backend.segmentPaths(scratch).last)
            let bytes = try readBytes(segment)
            // The open segment runs on past its records in zeros, as a crash would leave it.
            let used = (bytes.lastIndex { $0 != 0 } ?? 0) + 1
            #expect(bytes.count >= used + 4096, "\(bytes.count) bytes on disk for \(used) of records")
            let crashed = try backend.open(scratch)
            let snapshot = try crashed.load()
            #expect(snapshot.tasks == tasks)
            #expect(snapshot.repairs.isEmpty, "\(snapshot.repairs)")
            try crashed.close()
            // The last record cut short inside that space is a torn write, not damage.
            var cut = bytes
            for index in (used - 25)..<used { cut[index] = 0 }
            try writeBytes(cut, to: segment)
            let torn = try backend.open(scratch)
            defer { try? torn.close() }
            let reloaded = try torn.load()
            #expect(reloaded.tasks == Array(tasks.prefix(2)))
            #expect(reloaded.repairs.count == 1)
            #expect(reloaded.repairs.first?.contains("cut") == true, "\(reloaded.repairs)")
            #expect(!StoreFiles.exists(segment + ".damaged"))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aFileReadAWindowAtATimeLoadsAsAWholeOne(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            let tasks = (0..<300).map { StoreFixtures.fullTask($0) }
            try store.record(tasks.prefix(200).map { .putTask($0) })
            try store.compact()
            for task in tasks.dropFirst(200) { try store.record([.putTask(task)]) }
            try store.record([.removeTask(urlString: tasks[5].urlString)])
            try store.close()
            var expected = tasks
            expected.remove(at: 5)
            let snapshotPath = backend.snapshotPath(root)
            let segment = try #require(try backend.segmentPaths(root).last)
            let intact = (snapshot: try readBytes(snapshotPath), segment: try readBytes(segment))
            // Intact, then damaged in the middle of the snapshot, of the journal, and cut short.
            let damages: [(String, (inout [UInt8], inout [UInt8]) -> Void)] = [
                ("intact", { _, _ in }),
                ("snapshot byte", { snapshot, _ in snapshot[snapshot.count / 2] ^= 0x5A }),
                ("journal byte", { _, journal in journal[journal.count / 2] ^= 0x5A }),
                ("journal cut", { _, journal in journal.removeLast(journal.count / 3) }),
            ]
            for (damage, apply) in damages {
                var loads: [Int: StoreSnapshot] = [:]
                for window in [16 << 20, 1, 700, 4096] {
                    var snapshotBytes = intact.snapshot
                    var segmentBytes = intact.segment
                    apply(&snapshotBytes, &segmentBytes)
                    let copy = root + "-\(window)"
                    defer { try? FileManager.default.removeItem(atPath: copy) }
                    try copyStoreFiles(from: root, to: copy)
                    try writeBytes(snapshotBytes, to: backend.snapshotPath(copy))
                    try writeBytes(
                        segmentBytes, to: copy + "/" + (segment.split(separator: "/").last.map(String.init) ?? ""))
                    let reopened = try backend.open(copy, readWindow: window)
                    loads[window] = try reopened.load()
                    try reopened.close()
                }
                let whole = try #require(loads[16 << 20])
                for (window, load) in loads {
                    #expect(load.tasks == whole.tasks, "\(damage), window \(window)")
                    #expect(load.repairs == whole.repairs, "\(damage), window \(window)")
                }
                if damage == "intact" {
                    #expect(whole.tasks == expected)
                    #expect(whole.repairs.isEmpty, "\(whole.repairs)")
                } else {
                    #expect(!whole.repairs.isEmpty, "\(damage) was not reported")
                }
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aClosedSegmentEndsAtItsLastRecord(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            for index in 0..<3 { try store.record([.putTask(StoreFixtures.fullTask(index))]) }
            try store.close()
            let bytes = try readBytes(try #require(try backend.segmentPaths(root).last))
            #expect(bytes.last != 0, "the closed segment keeps zero-filled space")
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aGarbageSnapshotFallsBackToTheBackupAndTheJournal(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            try store.record([.putTask(StoreFixtures.task(1))])
            try store.compact()
            try store.record([.putTask(StoreFixtures.task(2))])
            try store.compact()
            try store.record([.putTask(StoreFixtures.task(3))])
            try store.close()
            let path = backend.snapshotPath(root)
            let garbage = Array("this is not a snapshot at all\n\u{0}\u{1}".utf8)
            try writeBytes(garbage, to: path)
            let reopened = try backend.open(root)
            let snapshot = try reopened.load()
            #expect(snapshot.tasks == [1, 2, 3].map { StoreFixtures.task($0) })
            #expect(snapshot.repairs.contains { $0.contains("backup") })
            #expect(try readBytes(path + ".damaged") == garbage, "the damaged snapshot is kept aside")
            // Compacting now writes a good snapshot and keeps the good backup.
            try reopened.compact()
            try reopened.close()
            let again = try backend.open(root)
            defer { try? again.close() }
            let repaired = try again.load()
            #expect(repaired.tasks == [1, 2, 3].map { StoreFixtures.task($0) })
            #expect(repaired.repairs == [])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aGarbageSnapshotWithoutBackupIsCorruptAndLeftUntouched(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            try store.record([.putTask(StoreFixtures.task(1))])
            try store.compact()
            try store.close()
            let path = backend.snapshotPath(root)
            var bytes = try readBytes(path)
            for index in 0..<min(12, bytes.count) { bytes[index] = 0x2A }
            try writeBytes(bytes, to: path)
            let namesBefore = try StoreFiles.names(in: root).sorted()
            let reopened = try backend.open(root)
            defer { try? reopened.close() }
            do throws(StoreError) {
                _ = try reopened.load()
                Issue.record("a load of a garbage snapshot without backup did not throw")
            } catch {
                #expect(error.code == .corrupt)
                #expect(error.path == path)
            }
            #expect(throws: StoreError.self) { try reopened.compact() }
            #expect(try readBytes(path) == bytes, "the damaged file is left as it was")
            #expect(try StoreFiles.names(in: root).sorted() == namesBefore)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aDamagedRecordInTheSnapshotIsRecoveredFromTheBackup(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            try store.record((0..<20).map { .putTask(StoreFixtures.task($0)) })
            try store.compact()
            try store.record([.putTask(StoreFixtures.task(20))])
            try store.compact()
            try store.close()
            let path = backend.snapshotPath(root)
            var bytes = try readBytes(path)
            let middle = bytes.count / 2
            for index in middle..<(middle + 6) { bytes[index] = 0x00 }
            try writeBytes(bytes, to: path)
            let reopened = try backend.open(root)
            defer { try? reopened.close() }
            let snapshot = try reopened.load()
            #expect(Set(snapshot.tasks) == Set((0...20).map { StoreFixtures.task($0) }))
            #expect(!snapshot.repairs.isEmpty)
            // A compaction writes the repaired state and keeps the good backup.
            try reopened.compact()
            try reopened.record([.putTask(StoreFixtures.task(21))])
            try reopened.compact()
            let repaired = try reopened.load()
            #expect(Set(repaired.tasks) == Set((0...21).map { StoreFixtures.task($0) }))
            #expect(repaired.repairs == [])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aMissingSnapshotBesideItsBackupIsNeverAnEmptyStore(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            try store.record([.putTask(StoreFixtures.task(1))])
            try store.compact()
            try store.record([.putTask(StoreFixtures.task(2))])
            try store.compact()
            try store.record([.putTask(StoreFixtures.task(3))])
            try store.close()
            unlink(backend.snapshotPath(root))
            let reopened = try backend.open(root)
            defer { try? reopened.close() }
            let snapshot = try reopened.load()
            #expect(snapshot.tasks == [1, 2, 3].map { StoreFixtures.task($0) })
            #expect(snapshot.repairs.contains { $0.contains("missing") })
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aNewerFormatVersionIsRefused(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let format: any StoreFormat = backend == .json ? JSONRecordFormat() : BinaryPropertyListFormat()
            var payload: [UInt8] = []
            format.encode(
                StoreFileHeader(kind: .snapshot, version: 99, backend: backend.rawValue, segment: 0).node,
                into: &payload)
            var bytes: [UInt8] = []
            format.framing.append(payload, to: &bytes)
            let path = backend.snapshotPath(root)
            try writeBytes(bytes, to: path)
            let store = try backend.open(root)
            defer { try? store.close() }
            do throws(StoreError) {
                _ = try store.load()
                Issue.record("a newer version was loaded")
            } catch { #expect(error.code == .unsupportedVersion) }
            #expect(try readBytes(path) == bytes)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func hostileIdentifiersAreRefused(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let hostile = [
                "", "/etc/passwd", "..", "a/../b", "../x", ".hidden", "a\u{0}b", "tab\there",
                String(repeating: "x", count: 201), "a/b",
            ]
            for identifier in hostile {
                do throws(StoreError) {
                    let store = try backend.open(root, identifier: identifier)
                    try? store.close()
                    Issue.record("the identifier \(identifier.debugDescription) was accepted")
                } catch { #expect(error.code == .invalidIdentifier) }
            }
            #expect(try StoreFiles.names(in: root).isEmpty, "nothing was created")
            for identifier in [String(repeating: "x", count: 200), "日本語 manager", "a.b-c_d"] {
                let store = try backend.open(root, identifier: identifier)
                try store.record([.putTask(StoreFixtures.task(1))])
                try store.close()
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aSecondStoreOnTheSameFilesIsLockedOut(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let first = try backend.open(root)
            do throws(StoreError) {
                let second = try backend.open(root)
                try? second.close()
                Issue.record("a second store opened the same files")
            } catch { #expect(error.code == .locked) }
            let other = try backend.open(root, identifier: "other")
            try other.close()
            try first.close()
            let third = try backend.open(root)
            try third.close()
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func compactionEmptiesTheJournal(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            try store.record((0..<50).map { .putTask(StoreFixtures.task($0)) })
            try store.record(
                (0..<50).filter { $0 % 3 == 0 }.map { .removeTask(urlString: StoreFixtures.task($0).urlString) })
            try store.record([.putList(StoreFixtures.list), .setConfiguration(StoreFixtures.configuration)])
            let before = try store.load()
            try store.compact()
            let journal = backend.journaled(store)
            #expect(journal.compactedEntries() == 0)
            #expect(try store.load() == before)
            try store.compact()
            try store.close()
            let reopened = try backend.open(root)
            defer { try? reopened.close() }
            #expect(try reopened.load() == before)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func compactionRunsOnItsOwnPastTheThreshold(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root, compactionThreshold: 10)
            defer { try? store.close() }
            for index in 0..<40 { try store.record([.putTask(StoreFixtures.task(index % 5, received: Int64(index)))]) }
            let journal = backend.journaled(store)
            let compacted = await eventually { FileManager.default.fileExists(atPath: backend.snapshotPath(root)) }
            #expect(compacted, "no compaction after 40 entries with a threshold of 10")
            let expected = (0..<5).map { StoreFixtures.task($0, received: Int64(35 + $0)) }
            #expect(try store.load().tasks == expected)
            #expect(journal.compactedEntries() < 40)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aCrashBetweenWritingAndRenamingTheSnapshotLosesNothing(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            try store.record([.putTask(StoreFixtures.task(1))])
            try store.compact()
            try store.record([.putTask(StoreFixtures.task(2))])
            try store.close()
            // What a compaction killed before its rename leaves: a half-written temporary file.
            let temporary = backend.snapshotPath(root) + ".tmp"
            try writeBytes(Array(try readBytes(backend.snapshotPath(root)).prefix(20)), to: temporary)
            let reopened = try backend.open(root)
            defer { try? reopened.close() }
            let snapshot = try reopened.load()
            #expect(snapshot.tasks == [StoreFixtures.task(1), StoreFixtures.task(2)])
            #expect(snapshot.repairs == [])
            #expect(!FileManager.default.fileExists(atPath: temporary))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aFullDiskLosesNothingAlreadyStored(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let disk = DiskFullSwitch()
            let store = try backend.open(root, fileSystem: disk.fileSystem)
            defer { try? store.close() }
            try store.record([.putTask(StoreFixtures.task(1))])
            try store.compact()
            try store.record([.putTask(StoreFixtures.task(2))])
            disk.armed.store(true, ordering: .relaxed)
            do throws(StoreError) {
                try store.record([.putTask(StoreFixtures.fullTask(3))])
                Issue.record("a write to a full disk did not throw")
            } catch { #expect(error.code == .diskFull) }
            do throws(StoreError) {
                try store.compact()
                Issue.record("a compaction on a full disk did not throw")
            } catch { #expect(error.code == .diskFull) }
            let scratch = root + "-crash"
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let during = try loadAfterCrash(backend, root: root, scratch: scratch)
            #expect(during.tasks == [StoreFixtures.task(1), StoreFixtures.task(2)])
            #expect(during.repairs == [], "no partial entry was left behind")
            disk.armed.store(false, ordering: .relaxed)
            try store.save()
            let after = try loadAfterCrash(backend, root: root, scratch: scratch)
            #expect(after.tasks == [StoreFixtures.task(1), StoreFixtures.task(2), StoreFixtures.fullTask(3)])
            #expect(after.repairs == [])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func durableChangesRecordedTogetherShareSyncs(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let disk = SlowCountingDisk()
            let store = try backend.open(root, fileSystem: disk.fileSystem)
            let callbacks = Shared<[Int: Int]>([:])
            let count = 40
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        for index in 0..<(count / 4) {
                            let number = worker * 100 + index
                            try? store.record([.putTask(StoreFixtures.task(number))]) { error in
                                #expect(error == nil)
                                callbacks.value.withLock { $0[number, default: 0] += 1 }
                            }
                        }
                    }
                }
            }
            #expect(await eventually { callbacks.value.withLock { $0.count } == count })
            #expect(callbacks.value.withLock { $0.values.allSatisfy { $0 == 1 } }, "each callback exactly once")
            #expect(disk.syncs.load(ordering: .relaxed) < count, "one sync served several changes")
            // Written before `record` returned: a crash now (no close, no save) keeps them all.
            let scratch = root + "-crash"
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let crashed = try loadAfterCrash(backend, root: root, scratch: scratch)
            #expect(crashed.tasks.count == count)
            try store.close()
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aFailedSyncReachesTheDurabilityCallback(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let disk = DiskFullSwitch()
            let store = try backend.open(root, fileSystem: disk.fileSystem)
            defer { try? store.close() }
            try store.record([.putTask(StoreFixtures.task(1))])
            // Writes pass (the first half, then the rest), the sync fails.
            let failures = Shared<[StoreError?]>([])
            disk.failsSyncsOnly.store(true, ordering: .relaxed)
            try store.record([.putTask(StoreFixtures.task(2))]) { error in failures.value.withLock { $0.append(error) }
            }
            #expect(await eventually { failures.value.withLock { $0.count } == 1 })
            #expect(failures.value.withLock { $0.first??.code } == .diskFull)
            disk.failsSyncsOnly.store(false, ordering: .relaxed)
            // Nothing to sync: called at once, without error.
            let called = Shared(0)
            try store.record([.putTask(StoreFixtures.task(3, state: .downloading))]) { error in
                #expect(error == nil)
                called.value.withLock { $0 += 1 }
            }
            #expect(called.value.withLock { $0 } == 1)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func progressOfATaskIsCoalescedBetweenFlushesInOrder(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root, flushDelay: .seconds(3600))
            let entries = backend.journaled(store).compactedEntries
            try store.record([.putTask(StoreFixtures.task(1)), .putTask(StoreFixtures.task(2))])
            let before = entries()
            for received in 1...100 {
                try store.record([.putTask(StoreFixtures.task(1, state: .downloading, received: Int64(received)))])
                try store.record([.putTask(StoreFixtures.task(2, state: .downloading, received: Int64(received * 2)))])
            }
            #expect(entries() == before + 2, "one waiting entry per task")
            // A durable change writes the waiting progress first, then itself: task 2 ends stopped.
            try store.record([.putTask(StoreFixtures.task(2, state: .stopped, received: 150))])
            // Progress after it waits again, and a crash (no save) loses only that.
            try store.record([.putTask(StoreFixtures.task(1, state: .downloading, received: 500))])
            let scratch = root + "-crash"
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let crashed = try loadAfterCrash(backend, root: root, scratch: scratch)
            #expect(crashed.tasks.map(\.receivedLength) == [100, 150])
            #expect(crashed.tasks.map(\.state) == [.downloading, .stopped])
            try store.save()
            let saved = try loadAfterCrash(backend, root: root, scratch: scratch)
            #expect(saved.tasks.map(\.receivedLength) == [500, 150])
            try store.close()
        }
    }
}
