import Foundation
import Testing

@testable import PeregrineThumbnails

@Suite struct VideoThumbnailTests {
    static let ffmpegInstalled = VideoFrameExtractor().isAvailable

    /// A 4-second 320 × 240 test pattern whose first second is black and the rest bright, so the
    /// frame at 10 % (0.4 s) must be black and a frame from the wrong place is not.
    static func makeVideo(in directory: String) throws -> String {
        let path = directory + "/clip.mp4"
        let ffmpeg = try #require(VideoFrameExtractor().ffmpegPath)
        let status = try ProcessRunner.run(
            ffmpeg,
            [
                "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i",
                "testsrc=duration=4:size=320x240:rate=10,drawbox=c=black:t=fill:enable='lt(t,1)'",
                "-pix_fmt", "yuv420p", "-y", path,
            ], timeout: 60)
        #expect(status == 0)
        return path
    }

    @Test(.enabled(if: ffmpegInstalled)) func videoThumbnailIsAFrameAtTenPercent() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let path = try Self.makeVideo(in: directory)
        let extractor = VideoFrameExtractor()
        let duration = try #require(try extractor.duration(ofVideoAt: path))
        #expect(abs(duration - 4) < 0.2)

        let thumbnailer = Thumbnailer()
        let source = ThumbnailSource(taskKey: "v", filePath: path)
        let immediate = SetOnce<Thumbnail>()
        let thumbnail = try await awaitValue(seconds: 60) { deliver in
            immediate.set(thumbnailer.requestThumbnail(for: source, targetHeight: 60) { deliver($0) })
        }
        #expect(immediate.value == thumbnailer.icons.icon(.video, height: 60))
        #expect(thumbnail.height == 60 && thumbnail.width == 80)
        let center = TestImages.pixel(try thumbnail.decoded(), 40, 30)
        #expect(center.allSatisfy { $0 < 40 }, "the frame at 0.4 s is black: \(center)")

        // Later than 10 %: the test pattern.
        let late = VideoFrameExtractor(position: 0.5)
        let frame = try late.frame(ofVideoAt: path, height: 60)
        #expect(frame.pixels.contains { $0 > 150 })
    }

    @Test(.enabled(if: ffmpegInstalled)) func notAVideoFailsTyped() throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        TestImages.write(Data("not a video at all".utf8), to: directory + "/fake.mp4")
        #expect(throws: ThumbnailError.self) {
            try VideoFrameExtractor().frame(ofVideoAt: directory + "/fake.mp4", height: 40)
        }
    }

    @Test func hungToolIsKilledAtTheTimeout() throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let script = directory + "/ffmpeg"
        TestImages.writeExecutable("#!/bin/sh\nexec sleep 60\n", to: script)
        TestImages.write(Data("x".utf8), to: directory + "/clip.mp4")
        let extractor = VideoFrameExtractor(ffmpegPath: script, ffprobePath: script, timeout: 0.5)
        #expect(extractor.isAvailable)
        // No timing assertion (tests never assert on time): the code says the runner killed it;
        // without the timeout, `sleep` would exit 0 after a minute and give `videoToolFailed`.
        do {
            _ = try extractor.frame(ofVideoAt: directory + "/clip.mp4", height: 40)
            Issue.record("a hung tool cannot produce a frame")
        } catch let error as ThumbnailError {
            #expect(error.code == .timedOut, "\(error)")
        }
    }

    @Test func withoutFFmpegVideosKeepTheirIcon() async throws {
        let extractor = VideoFrameExtractor(ffmpegPath: "/nonexistent/ffmpeg", ffprobePath: "/nonexistent/ffprobe")
        #expect(!extractor.isAvailable)
        let thumbnailer = Thumbnailer(configuration: .init(videoFrameExtractor: extractor))
        let source = ThumbnailSource(taskKey: "v", filePath: "/tmp/clip.mp4")
        #expect(
            thumbnailer.requestThumbnail(for: source, targetHeight: 50) { _ in
                Issue.record("no video thumbnail without ffmpeg")
            } == thumbnailer.icons.icon(.video, height: 50))
        await #expect(throws: ThumbnailError.self) { try await thumbnailer.thumbnail(for: source, targetHeight: 50) }
    }
}
