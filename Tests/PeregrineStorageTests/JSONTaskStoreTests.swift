import PeregrineJSONStorage
import PeregrineStorageTestKit
import Testing

/// What only the JSON backend does: text that people may edit.
@Suite struct JSONTaskStoreTests {
    @Test func aHandEditedLineIsKeptAndReported() async throws {
        try await withTemporaryDirectory { root in
            let store = try StoreBackend.json.open(root)
            try store.record([.putTask(StoreFixtures.task(1))])
            try store.close()
            let segment = try #require(try StoreBackend.json.segmentPaths(root).last)
            let text = String(decoding: try readBytes(segment), as: UTF8.self)
            #expect(text.contains(#""file":"1.bin""#))
            try writeBytes(
                Array(text.replacingOccurrences(of: #""file":"1.bin""#, with: #""file":"one.bin""#).utf8), to: segment)
            let reopened = try StoreBackend.json.open(root)
            defer { try? reopened.close() }
            let snapshot = try reopened.load()
            var expected = StoreFixtures.task(1)
            expected.fileName = "one.bin"
            #expect(snapshot.tasks == [expected])
            #expect(snapshot.repairs.count == 1)
            #expect(snapshot.repairs.first?.contains("edited by hand") == true)
        }
    }
}
