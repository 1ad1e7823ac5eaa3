import Foundation
import Peregrine
import PeregrineCore
import PeregrineMockTransport
import Testing

@Suite struct DownloadManagerThumbnailTests {
    @Test func typeIconsAndCustomThumbnailsPersist() throws {
        let first = try ManagerHarness()
        defer { first.scratch.remove() }
        let song = first.serveFiles(1, prefix: "song", ext: "mp3")[0]
        try first.manager.download([song])
        first.runUntilIdle()
        #expect(first.manager.requestThumbnail(forTask: first.url("/nope"), targetHeight: 40) { _ in } == nil)
        let icon = try #require(first.manager.requestThumbnail(forTask: song, targetHeight: 40) { _ in })
        #expect(icon.height <= 40)
        let image = try RasterImage(
            width: 4, height: 4, pixelFormat: .rgb8, pixels: [UInt8](repeating: 200, count: 48))
        let cover = try Thumbnail(image: image)
        try first.manager.setCustomThumbnail(cover, forTask: song, cacheInMemoryOnly: false)
        #expect(first.snapshot.customThumbnails[song] != nil)
        #expect(throws: DownloadManagerError.self) {
            try first.manager.setCustomThumbnail(cover, forTask: first.url("/nope"), cacheInMemoryOnly: true)
        }

        let second = try ManagerHarness(snapshot: first.snapshot, scratch: first.scratch, server: first.server)
        #expect(second.manager.thumbnailer.customThumbnail(forTask: song) != nil)
        #expect(second.manager.removeCustomThumbnailForTask(song) != nil)
        #expect(second.snapshot.customThumbnails[song] == nil)
        second.manager.emptyThumbnailCache()
    }

    @Test func imageThumbnailComesLaterInTheHandlerAfterTheTypeIcon() async throws {
        let h = try ManagerHarness()
        defer { h.scratch.remove() }
        let photo = try Self.downloadPhoto(h)

        let thumbnail = try await Self.laterThumbnail(h.manager, photo, height: 60)
        #expect(thumbnail.height == 60)
        #expect(thumbnail.width == 80)
        #expect(thumbnail != h.manager.thumbnailer.icons.icon(.image, height: 60))
        // The picture is the photo's: red at the top left, blue at the bottom left.
        let pixels = try thumbnail.decoded()
        #expect(Self.isClose(Self.pixel(pixels, 10, 10), Self.red))
        #expect(Self.isClose(Self.pixel(pixels, 10, 50), Self.blue))
        // Now it is cached: the next request returns it at once.
        let again = h.manager.requestThumbnail(forTask: photo, targetHeight: 60) { _ in }
        #expect(again == thumbnail)
    }

    @Test func thumbnailComesFromTheDiskCacheAfterARestart() async throws {
        let first = try ManagerHarness()
        defer { first.scratch.remove() }
        let photo = try Self.downloadPhoto(first)
        let made = try await Self.laterThumbnail(first.manager, photo, height: 60)
        let directory = first.scratch.path("state") + "/test/ThumbnailCache"
        #expect(first.manager.thumbnailer.cache.diskStorage?.config.directory == directory)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        #expect(files.filter { $0.hasSuffix(".thumb") }.count == 1)

        let calls = Shared(0)
        let second = try ManagerHarness(snapshot: first.snapshot, scratch: first.scratch, server: first.server) {
            $0.thumbnails.imageProcessor = CountingThumbnailProcessor(
                wrapping: $0.thumbnails.imageProcessor, calls: calls)
        }
        #expect(second.manager.thumbnailer.cache.diskStorage?.count == 1)
        let cached = try await Self.laterThumbnail(second.manager, photo, height: 60)
        #expect(cached == made)
        #expect(calls.withLock { $0 } == 0, "the thumbnail was made again instead of read from the disk cache")
    }

    @Test func diskThumbnailCacheFollowsTheConfiguration() throws {
        let memoryOnly = try ManagerHarness { $0.thumbnails.cachePolicy = .memoryOnly }
        defer { memoryOnly.scratch.remove() }
        #expect(memoryOnly.manager.thumbnailer.cache.diskStorage == nil)

        let elsewhere = try ManagerHarness {
            $0.thumbnails.disk = ThumbnailDiskStorage.Config(directory: "/nonexistent/thumbs", sizeLimit: 4096)
        }
        defer { elsewhere.scratch.remove() }
        let disk = try #require(elsewhere.manager.thumbnailer.cache.diskStorage)
        #expect(disk.config == ThumbnailDiskStorage.Config(directory: "/nonexistent/thumbs", sizeLimit: 4096))
    }

    // MARK: Helpers

    static let red: [UInt8] = [220, 30, 30]
    static let green: [UInt8] = [30, 200, 60]
    static let blue: [UInt8] = [30, 60, 220]
    static let white: [UInt8] = [250, 250, 250]

    /// Serves a 320 × 240 JPEG of four flat quadrants (red, green / blue, white) on `/photo.jpg`,
    /// downloads it and returns its URL.
    static func downloadPhoto(_ h: ManagerHarness) throws -> String {
        let width = 320
        let height = 240
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                pixels += y < height / 2 ? (x < width / 2 ? red : green) : (x < width / 2 ? blue : white)
            }
        }
        let image = try RasterImage(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
        let jpeg = try Thumbnail(image: image, encoding: .jpeg(quality: 90))
        #expect(jpeg.format == .jpeg)
        h.server.setRoute(.file(.bytes([UInt8](jpeg.data)), entityTag: .fixed("\"v1\"")), for: "/photo.jpg")
        let url = h.url("/photo.jpg")
        try h.manager.download([url])
        h.runUntilIdle()
        #expect(h.state(url) == .finished)
        return url
    }

    /// Requests the thumbnail of `url`, expects the image type icon at once, and returns what the
    /// handler is called with later (the test fails when it is not called within the timeout).
    static func laterThumbnail(
        _ manager: DownloadManager, _ url: String, height: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Thumbnail {
        let (stream, continuation) = AsyncStream<Thumbnail>.makeStream()
        let immediate = manager.requestThumbnail(forTask: url, targetHeight: height) { continuation.yield($0) }
        #expect(
            immediate == manager.thumbnailer.icons.icon(.image, height: height), sourceLocation: sourceLocation)
        return try #require(
            await firstValue(stream), "the handler was not called with the thumbnail", sourceLocation: sourceLocation)
    }

    static func pixel(_ image: RasterImage, _ x: Int, _ y: Int) -> [UInt8] {
        let channels = image.pixelFormat.channelCount
        let start = (y * image.width + x) * channels
        return Array(image.pixels[start..<start + min(channels, 3)])
    }

    static func isClose(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= 40 }
    }
}

/// Passes thumbnails through to another processor, counting the calls.
struct CountingThumbnailProcessor: ThumbnailProcessor {
    let inner: any ThumbnailProcessor
    let calls: Shared<Int>

    init(wrapping inner: any ThumbnailProcessor, calls: Shared<Int>) {
        self.inner = inner
        self.calls = calls
    }

    var identifier: String { inner.identifier }

    func makeThumbnail(for source: ThumbnailSource, targetHeight: Int) throws -> Thumbnail {
        calls.withLock { $0 += 1 }
        return try inner.makeThumbnail(for: source, targetHeight: targetHeight)
    }
}
