import Foundation
import PeregrineThumbnails
import Testing

/// The video thumbnail tests skip themselves without `ffmpeg`; a run that must cover them (CI,
/// `Scripts/test.sh`) sets `PEREGRINE_REQUIRE_FFMPEG=1`, and then a missing `ffmpeg` fails here.
@Suite struct FFmpegRequirementTests {
    static let isRequired = ProcessInfo.processInfo.environment["PEREGRINE_REQUIRE_FFMPEG"] == "1"

    @Test(.enabled(if: isRequired)) func ffmpegIsFoundWhenTheRunRequiresIt() {
        // The gate of the video tests, which is the module's own detection.
        #expect(
            VideoThumbnailTests.ffmpegInstalled,
            """
            PEREGRINE_REQUIRE_FFMPEG=1 but no executable ffmpeg was found on PATH \
            (\(ProcessInfo.processInfo.environment["PATH"] ?? "unset")), so the video thumbnail tests \
            were skipped: install ffmpeg (Scripts/install-dependencies.sh) or unset the variable.
            """)
    }
}
