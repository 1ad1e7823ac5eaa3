import Foundation
import Testing

@testable import PeregrineThumbnails

@Suite struct CustomThumbnailTests {
    static func cover(_ color: [UInt8] = TestImages.green) throws -> Thumbnail {
        let pixels = (0..<(300 * 300)).flatMap { _ in color }
        return try Thumbnail(image: RasterImage(width: 300, height: 300, pixelFormat: .rgb8, pixels: pixels))
    }

    @Test func memoryOnlyCustomThumbnailIsScaledAndNotPersisted() async throws {
        let changes = SetOnce<CustomThumbnailIndex>()
        let thumbnailer = Thumbnailer(
            configuration: .init(customThumbnailIndexDidChange: { changes.set($0) }))
        let song = ThumbnailSource(taskKey: "https://h/song.mp3", filePath: "/music/song.mp3")
        let cover = try Self.cover()
        try thumbnailer.setCustomThumbnail(cover, forTask: song.taskKey, cacheInMemoryOnly: true)
        #expect(changes.value == nil)
        #expect(thumbnailer.customThumbnailIndex.entries.isEmpty)
        // Its own height is served at once; another height is scaled in the background.
        #expect(thumbnailer.requestThumbnail(for: song, targetHeight: 300) { _ in } == cover)
        let immediate = SetOnce<Thumbnail>()
        let scaled = try await awaitValue { deliver in
            immediate.set(thumbnailer.requestThumbnail(for: song, targetHeight: 64) { deliver($0) })
        }
        #expect(immediate.value == thumbnailer.icons.icon(.music, height: 64))
        #expect(scaled.height == 64 && scaled.width == 64)
        #expect(TestImages.close(TestImages.pixel(try scaled.decoded(), 30, 30), TestImages.green, tolerance: 2))
        #expect(thumbnailer.cachedThumbnail(for: song, targetHeight: 64) == scaled)
        #expect(thumbnailer.customThumbnail(forTask: song.taskKey) == cover)

        #expect(thumbnailer.removeCustomThumbnailForTask(song.taskKey) == cover)
        #expect(thumbnailer.removeCustomThumbnailForTask(song.taskKey) == nil)
        #expect(
            thumbnailer.requestThumbnail(for: song, targetHeight: 64) { _ in }
                == thumbnailer.icons.icon(.music, height: 64))
    }

    @Test func persistedCustomThumbnailSurvivesARestart() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let changes = SetOnce<CustomThumbnailIndex>()
        let configuration = Thumbnailer.Configuration(
            customThumbnailDirectory: directory + "/custom", customThumbnailIndexDidChange: { changes.set($0) })
        let movie = ThumbnailSource(taskKey: "https://h/movie.mkv", filePath: nil)
        let cover = try Self.cover(TestImages.blue)

        let first = Thumbnailer(configuration: configuration)
        try first.setCustomThumbnail(cover, forTask: movie.taskKey, cacheInMemoryOnly: false)
        let index = try #require(changes.value)
        #expect(index == first.customThumbnailIndex)
        #expect(index.entries[movie.taskKey]?.width == 300)

        // The store saves the index as JSON; a new process restores it.
        let saved = try JSONEncoder().encode(index)
        let restored = try JSONDecoder().decode(CustomThumbnailIndex.self, from: saved)
        let second = Thumbnailer(configuration: configuration)
        #expect(second.restoreCustomThumbnails(restored).isEmpty)
        #expect(second.customThumbnail(forTask: movie.taskKey) == cover)
        let scaled = try await second.thumbnail(for: movie, targetHeight: 40)
        #expect(scaled.height == 40)
        #expect(TestImages.close(TestImages.pixel(try scaled.decoded(), 20, 20), TestImages.blue, tolerance: 2))

        // Replacing it with a memory-only one deletes the file and empties the index.
        try second.setCustomThumbnail(try Self.cover(), forTask: movie.taskKey, cacheInMemoryOnly: true)
        #expect(changes.value?.entries.isEmpty == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/custom").isEmpty)
    }

    @Test func removingAPersistedCustomThumbnailDeletesItsFile() throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let thumbnailer = Thumbnailer(configuration: .init(customThumbnailDirectory: directory))
        let cover = try Self.cover()
        try thumbnailer.setCustomThumbnail(cover, forTask: "a", cacheInMemoryOnly: false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
        #expect(thumbnailer.removeCustomThumbnailForTask("a") == cover)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        #expect(thumbnailer.customThumbnailIndex.entries.isEmpty)
    }

    @Test func restoreDropsEntriesWhoseFilesAreGone() throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let first = Thumbnailer(configuration: .init(customThumbnailDirectory: directory))
        try first.setCustomThumbnail(try Self.cover(), forTask: "kept", cacheInMemoryOnly: false)
        try first.setCustomThumbnail(try Self.cover(TestImages.red), forTask: "lost", cacheInMemoryOnly: false)
        let index = first.customThumbnailIndex
        try FileManager.default.removeItem(atPath: directory + "/" + index.entries["lost"]!.fileName)
        let second = Thumbnailer(configuration: .init(customThumbnailDirectory: directory))
        #expect(second.restoreCustomThumbnails(index) == ["lost"])
        #expect(second.customThumbnailIndex.entries.keys.sorted() == ["kept"])
    }

    @Test func restoreNeverReachesOutsideItsDirectory() throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let victim = directory + "/victim.png"
        TestImages.write(try TestImages.photo(width: 4, height: 4).pngData(), to: victim)
        let inside = directory + "/custom"
        try FileManager.default.createDirectory(atPath: inside, withIntermediateDirectories: true)
        let thumbnailer = Thumbnailer(configuration: .init(customThumbnailDirectory: inside))
        // A damaged or edited store names a file outside the directory.
        var index = CustomThumbnailIndex()
        for (task, name) in [("a", "../victim.png"), ("b", victim), ("c", ".."), ("d", "")] {
            index.entries[task] = CustomThumbnailIndex.Entry(
                fileName: name, width: 4, height: 4, pixelFormat: .rgb8, format: .png, contentIdentifier: "x")
        }
        #expect(thumbnailer.restoreCustomThumbnails(index) == ["a", "b", "c", "d"])
        #expect(thumbnailer.removeCustomThumbnailForTask("a") == nil)
        let directoryAccess = CustomThumbnailDirectory(path: inside)
        directoryAccess.remove(index.entries["a"]!)
        directoryAccess.remove(index.entries["b"]!)
        #expect(throws: ThumbnailError.self) { try directoryAccess.read(index.entries["a"]!) }
        #expect(FileManager.default.fileExists(atPath: victim))
    }

    @Test func persistingWithoutADirectoryIsATypedError() throws {
        let thumbnailer = Thumbnailer()
        #expect(throws: ThumbnailError.self) {
            try thumbnailer.setCustomThumbnail(try Self.cover(), forTask: "a", cacheInMemoryOnly: false)
        }
    }

    @Test func customThumbnailWinsOverTheFilesOwnThumbnail() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        TestImages.write(try TestImages.quadrants(width: 200, height: 100).pngData(), to: directory + "/p.png")
        let thumbnailer = Thumbnailer()
        let source = ThumbnailSource(taskKey: "p", filePath: directory + "/p.png")
        #expect(try await thumbnailer.thumbnail(for: source, targetHeight: 50).width == 100)
        try thumbnailer.setCustomThumbnail(try Self.cover(), forTask: "p", cacheInMemoryOnly: true)
        #expect(try await thumbnailer.thumbnail(for: source, targetHeight: 50).width == 50)
        thumbnailer.removeCustomThumbnailForTask("p")
        #expect(try await thumbnailer.thumbnail(for: source, targetHeight: 50).width == 100)
    }
}
