import PeregrineJSONStorage
import PeregrinePlistStorage
import PeregrineStorage
import PeregrineStorageTestKit
import Testing

/// Converting a store between backends keeps everything.
@Suite struct StoreConversionTests {
    @Test func jsonToPlistToJSONKeepsEverything() async throws {
        try await withTemporaryDirectory { root in
            let json = try StoreBackend.json.open(root)
            let task = StoreFixtures.fullTask()
            try json.record(
                (0..<30).map { .putTask(StoreFixtures.task($0, state: $0 % 2 == 0 ? .finished : .stopped)) } + [
                    .putTask(task), .putList(StoreFixtures.list), .setConfiguration(StoreFixtures.configuration),
                    .setCustomThumbnail(urlString: task.urlString, StoreFixtures.thumbnail),
                    .removeTask(urlString: StoreFixtures.task(4).urlString),
                ])
            let original = try json.load()
            let plist = try StoreBackend.plist.open(root)
            // The destination held something else before: it is replaced, not merged.
            try plist.record([.putTask(StoreFixtures.task(999)), .putList(StoredList(identifier: "stale"))])
            #expect(try StoreConversion.copy(from: json, to: plist) == [])
            #expect(try plist.load() == original)
            try plist.close()
            let reopenedPlist = try StoreBackend.plist.open(root)
            #expect(try reopenedPlist.load() == original)
            let back = try StoreBackend.json.open(root, identifier: "copy")
            try StoreConversion.copy(from: reopenedPlist, to: back)
            try reopenedPlist.close()
            try back.close()
            let reopened = try StoreBackend.json.open(root, identifier: "copy")
            defer { try? reopened.close() }
            #expect(try reopened.load() == original)
            try json.close()
        }
    }

    @Test func conversionWorksWithTheInMemoryStore() throws {
        let source = InMemoryTaskStore(snapshot: StoreSnapshot(tasks: [StoreFixtures.fullTask()]))
        let destination = InMemoryTaskStore()
        try StoreConversion.copy(from: source, to: destination)
        #expect(try destination.load().tasks == [StoreFixtures.fullTask()])
    }
}
