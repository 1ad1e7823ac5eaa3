#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Takes one frame of a video with the `ffmpeg` program (and its duration with `ffprobe`), when
/// they are installed. Detected at creation by searching `PATH`, unless paths are given.
///
/// Each program run is bounded by ``timeout`` and killed past it. Frames are taken at a fraction
/// of the duration (10 % by default, as SDEDownloadManager did), scaled by `ffmpeg` with area
/// averaging and square pixels, written as PNG to a temporary file, then decoded with Peregrine's
/// own bounded PNG decoder.
public struct VideoFrameExtractor: Sendable, Hashable {
    /// The `ffmpeg` executable, or `nil` when none was found.
    public var ffmpegPath: String?
    /// The `ffprobe` executable, or `nil` when none was found.
    public var ffprobePath: String?
    /// Seconds a program may run before it is killed.
    public var timeout: Double
    /// Where the frame is taken, as a fraction of the duration.
    public var position: Double

    /// An extractor using the given programs, or those found on `PATH`.
    public init(ffmpegPath: String? = nil, ffprobePath: String? = nil, timeout: Double = 15, position: Double = 0.1) {
        self.ffmpegPath = ffmpegPath ?? Self.locate("ffmpeg")
        self.ffprobePath = ffprobePath ?? Self.locate("ffprobe")
        self.timeout = timeout
        self.position = min(max(position, 0), 1)
    }

    /// Whether `ffmpeg` was found and is executable (`ffprobe` is optional: without it frames
    /// come from the start).
    public var isAvailable: Bool {
        ffmpegPath.map { FileManager.default.isExecutableFile(atPath: $0) } ?? false
    }

    /// The path of an executable named `program` in `PATH`, or `nil`.
    public static func locate(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = PathText.join(String(directory), program)
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The duration of the video at `path` in seconds, or `nil` when `ffprobe` is missing or cannot
    /// tell.
    ///
    /// - Throws: ``ThumbnailError/Code/timedOut`` when `ffprobe` hangs.
    public func duration(ofVideoAt path: String) throws -> Double? {
        guard let ffprobePath else { return nil }
        let output = Self.temporaryPath("txt")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let status = try ProcessRunner.run(
            ffprobePath,
            [
                "-v", "error", "-show_entries", "format=duration", "-of", "default=noprint_wrappers=1:nokey=1",
                "file:" + path,
            ], timeout: timeout, standardOutputPath: output)
        guard status == 0, let data = FileManager.default.contents(atPath: output), data.count < 4096 else {
            return nil
        }
        let text = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first ?? ""
        guard let seconds = Double(text), seconds.isFinite, seconds > 0 else { return nil }
        return seconds
    }

    /// A frame of the video at `path`, `height` pixels high.
    ///
    /// - Throws: ``ThumbnailError`` — ``ThumbnailError/Code/videoToolUnavailable`` without
    ///   `ffmpeg`, ``ThumbnailError/Code/timedOut``, ``ThumbnailError/Code/videoToolFailed`` when
    ///   no frame came out (not a video, damaged file).
    public func frame(ofVideoAt path: String, height: Int, limits: ImageDecodingLimits = .standard) throws
        -> RasterImage
    {
        guard let ffmpegPath, isAvailable else {
            throw ThumbnailError(.videoToolUnavailable, "ffmpeg is not installed")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ThumbnailError(.unreadableFile, "cannot read \(path)")
        }
        let height = max(1, height)
        var offsets = [0.0]
        if let duration = try duration(ofVideoAt: path), duration * position > 0 {
            offsets.insert(duration * position, at: 0)
        }
        let output = Self.temporaryPath("png")
        defer { try? FileManager.default.removeItem(atPath: output) }
        for offset in offsets {
            try? FileManager.default.removeItem(atPath: output)
            let status = try ProcessRunner.run(
                ffmpegPath,
                [
                    "-nostdin", "-hide_banner", "-loglevel", "error", "-ss", PathText.milliseconds(offset),
                    "-i", "file:" + path, "-map", "0:v:0", "-frames:v", "1", "-an", "-sn", "-dn",
                    "-vf", "scale=trunc(iw*sar/2)*2:ih,setsar=1,scale=-1:\(height):flags=area",
                    "-f", "image2", "-c:v", "png", "-y", "file:" + output,
                ], timeout: timeout)
            if status == 0, let bytes = try? SourceFile.read(output, maximumBytes: limits.maximumFileBytes),
                !bytes.isEmpty
            {
                return try ImageDecoder.decode(bytes, targetHeight: height, limits: limits)
            }
        }
        throw ThumbnailError(.videoToolFailed, "ffmpeg produced no frame for \(path)")
    }

    static func temporaryPath(_ fileExtension: String) -> String {
        PathText.join(
            ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp",
            "peregrine-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).\(fileExtension)")
    }
}
