import Foundation
import Peregrine
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
}
