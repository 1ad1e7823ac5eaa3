import Foundation
import PeregrineCore
import Synchronization
import Testing

@testable import PeregrineThumbnails

@Suite struct ThumbnailerTests {
    @Test func requestReturnsTheIconAtOnceThenTheThumbnailThenTheCachedOne() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        TestImages.write(try TestImages.photo(width: 800, height: 600).jpegData(), to: directory + "/p.jpg")
        let thumbnailer = Thumbnailer()
        let source = ThumbnailSource(taskKey: "https://h/p.jpg", filePath: directory + "/p.jpg")

        let immediate = SetOnce<Thumbnail>()
        let later = try await awaitValue { deliver in
            immediate.set(thumbnailer.requestThumbnail(for: source, targetHeight: 96) { deliver($0) })
        }
        #expect(immediate.value == thumbnailer.icons.icon(.image, height: 96))
        #expect(later.height == 96 && later.width == 128)

        let cached = thumbnailer.requestThumbnail(for: source, targetHeight: 96) { _ in
            Issue.record("a cached thumbnail calls no handler")
        }
        #expect(cached == later)
        #expect(thumbnailer.cachedThumbnail(for: source, targetHeight: 97) == later)
    }

    @Test func requestNeverWaitsForTheJob() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        TestImages.write(try TestImages.photo(width: 200, height: 100).pngData(), to: directory + "/p.png")
        let gated = GatedProcessor()
        var configuration = Thumbnailer.Configuration()
        configuration.imageProcessor = gated
        let thumbnailer = Thumbnailer(configuration: configuration)
        let source = ThumbnailSource(taskKey: "p", filePath: directory + "/p.png")
        let handled = SetOnce<Thumbnail>()
        let later = try await awaitValue { deliver in
            // The job cannot finish before the gate opens, and the gate opens only after the
            // request returned: a request that waited for its job would leave the gate shut
            // until the processor gave up, and the processor would report that.
            let shown = thumbnailer.requestThumbnail(for: source, targetHeight: 50) { thumbnail in
                handled.set(thumbnail)
                deliver(thumbnail)
            }
            #expect(shown == thumbnailer.icons.icon(.image, height: 50))
            #expect(handled.value == nil, "the handler runs later, never inside the request")
            gated.open()
        }
        #expect(gated.gaveUp.withLock { $0 } == false)
        #expect(later.height == 50 && later.width == 100)
    }

    @Test func heightFarOffIsRemade() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        TestImages.write(try TestImages.photo(width: 400, height: 300).pngData(), to: directory + "/p.png")
        let thumbnailer = Thumbnailer(configuration: .init(heightTolerance: 3))
        let source = ThumbnailSource(taskKey: "p", filePath: directory + "/p.png")
        let first = try await thumbnailer.thumbnail(for: source, targetHeight: 100)
        #expect(try await thumbnailer.thumbnail(for: source, targetHeight: 103) == first)
        #expect(try await thumbnailer.thumbnail(for: source, targetHeight: 97) == first)
        let remade = try await thumbnailer.thumbnail(for: source, targetHeight: 110)
        #expect(remade.height == 110)
    }

    @Test func concurrentRequestsShareOneJob() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        TestImages.write(try TestImages.photo(width: 640, height: 480).jpegData(), to: directory + "/p.jpg")
        let counting = CountingProcessor()
        var configuration = Thumbnailer.Configuration()
        configuration.imageProcessor = counting
        let thumbnailer = Thumbnailer(configuration: configuration)
        let source = ThumbnailSource(taskKey: "p", filePath: directory + "/p.jpg")
        let results = try await withThrowingTaskGroup(of: Thumbnail.self) { group in
            for _ in 0..<8 { group.addTask { try await thumbnailer.thumbnail(for: source, targetHeight: 50) } }
            return try await group.reduce(into: [Thumbnail]()) { $0.append($1) }
        }
        #expect(Set(results).count == 1)
        #expect(counting.calls.withLock { $0 } <= 2)  // one job, plus at most one after it finished
    }

    @Test func failuresAreRememberedUntilTheFileChanges() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let path = directory + "/x.png"
        TestImages.write(Data("broken".utf8), to: path)
        let counting = CountingProcessor()
        var configuration = Thumbnailer.Configuration()
        configuration.imageProcessor = counting
        let thumbnailer = Thumbnailer(configuration: configuration)
        let source = ThumbnailSource(taskKey: "x", filePath: path)
        for _ in 0..<3 {
            await #expect(throws: ThumbnailError.self) {
                try await thumbnailer.thumbnail(for: source, targetHeight: 40)
            }
        }
        #expect(counting.calls.withLock { $0 } == 1)
        TestImages.write(try TestImages.photo(width: 80, height: 40).pngData(), to: path)
        #expect(try await thumbnailer.thumbnail(for: source, targetHeight: 40).width == 80)
    }

    @Test func nonImageKindsAndMissingFilesGetTheirIcon() async throws {
        let thumbnailer = Thumbnailer()
        let pdf = ThumbnailSource(taskKey: "d", filePath: "/nonexistent/doc.pdf")
        #expect(
            thumbnailer.requestThumbnail(for: pdf, targetHeight: 48) { _ in }
                == thumbnailer.icons.icon(.pdf, height: 48))
        await #expect(throws: ThumbnailError.self) { try await thumbnailer.thumbnail(for: pdf, targetHeight: 48) }
        let song = ThumbnailSource(taskKey: "s", filePath: nil, fileName: "a.mp3")
        #expect(thumbnailer.typeIcon(for: song, height: 30) == thumbnailer.icons.icon(.music, height: 30))
        let pending = ThumbnailSource(taskKey: "i", filePath: nil, fileName: "a.png")
        #expect(
            thumbnailer.requestThumbnail(for: pending, targetHeight: 30) { _ in }
                == thumbnailer.icons.icon(.image, height: 30))
    }

    @Test func emptyThumbnailCacheForgetsEverything() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        TestImages.write(try TestImages.photo(width: 100, height: 100).pngData(), to: directory + "/p.png")
        let thumbnailer = Thumbnailer(
            configuration: .init(disk: .init(directory: directory + "/cache")))
        let source = ThumbnailSource(taskKey: "p", filePath: directory + "/p.png")
        _ = try await thumbnailer.thumbnail(for: source, targetHeight: 20)
        #expect(thumbnailer.cache.memoryStorage.count == 1)
        #expect(thumbnailer.cache.diskStorage?.count == 1)
        thumbnailer.emptyThumbnailCache()
        #expect(thumbnailer.cache.memoryStorage.count == 0)
        #expect(thumbnailer.cache.diskStorage?.count == 0)
        #expect(thumbnailer.cachedThumbnail(for: source, targetHeight: 20) == nil)
    }

    @Test func diskCacheServesAfterARestartAndNoticesChangedFiles() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let path = directory + "/p.png"
        TestImages.write(try TestImages.photo(width: 300, height: 100).pngData(), to: path)
        let configuration = Thumbnailer.Configuration(disk: .init(directory: directory + "/cache"))
        let source = ThumbnailSource(taskKey: "p", filePath: path)
        let made = try await Thumbnailer(configuration: configuration).thumbnail(for: source, targetHeight: 50)

        let counting = CountingProcessor()
        var restarted = configuration
        restarted.imageProcessor = counting
        let second = Thumbnailer(configuration: restarted)
        // The counting processor has another identifier: use the real one's key by making it equal.
        counting.identifierOverride.withLock { $0 = ImageThumbnailProcessor().identifier }
        #expect(try await second.thumbnail(for: source, targetHeight: 50) == made)
        #expect(counting.calls.withLock { $0 } == 0)

        // The file changes: the disk copy no longer matches and the thumbnail is made again.
        TestImages.write(try TestImages.photo(width: 100, height: 100).pngData(), to: path)
        let third = Thumbnailer(configuration: configuration)
        #expect(try await third.thumbnail(for: source, targetHeight: 50).width == 50)
    }

    @Test func cacheHitsAreFast() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        TestImages.write(try TestImages.photo(width: 100, height: 100).pngData(), to: directory + "/p.png")
        let thumbnailer = Thumbnailer()
        let source = ThumbnailSource(taskKey: "p", filePath: directory + "/p.png")
        _ = try await thumbnailer.thumbnail(for: source, targetHeight: 20)
        // Not a timing assertion (tests never assert on time): every hit returns the cached value.
        for _ in 0..<1000 { #expect(thumbnailer.cachedThumbnail(for: source, targetHeight: 20) != nil) }
    }
}

/// A processor that counts its calls and decodes with the real one.
final class CountingProcessor: ThumbnailProcessor {
    let calls = Locked(0)
    let identifierOverride = Locked<String?>(nil)
    let real = ImageThumbnailProcessor()

    var identifier: String { identifierOverride.withLock { $0 } ?? "test.counting" }

    func makeThumbnail(for source: ThumbnailSource, targetHeight: Int) throws -> Thumbnail {
        calls.withLock { $0 += 1 }
        return try real.makeThumbnail(for: source, targetHeight: targetHeight)
    }
}

/// A processor whose jobs wait until the test opens its gate (or give up after a long while and
/// say so), to show that nothing waits for a job.
final class GatedProcessor: ThumbnailProcessor {
    let gate = DispatchSemaphore(value: 0)
    let gaveUp = Locked(false)
    let real = ImageThumbnailProcessor()

    var identifier: String { "test.gated" }

    func open() { gate.signal() }

    func makeThumbnail(for source: ThumbnailSource, targetHeight: Int) throws -> Thumbnail {
        if gate.wait(timeout: .now() + 60) == .timedOut { gaveUp.withLock { $0 = true } }
        return try real.makeThumbnail(for: source, targetHeight: targetHeight)
    }
}
