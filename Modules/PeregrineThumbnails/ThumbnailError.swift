import PeregrineCore

/// Why a thumbnail, an image decode or a cache operation failed.
///
/// A struct with static codes rather than a closed enum, so that codes can be added without breaking
/// anyone's `switch`. Compare ``code`` against the static members; ``message`` says what happened
/// for people (bounded in length, never a stack).
public struct ThumbnailError: PeregrineError {
    /// A stable category of failure.
    public struct Code: PeregrineErrorCode {
        /// The code's stable name, such as `corruptImage`.
        public let rawValue: String

        /// Makes a code; the static members are the ones Peregrine reports.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        public var name: String { rawValue }

        /// The file does not exist or cannot be opened or read (permissions, a directory, an I/O error).
        public static let unreadableFile = Code("unreadableFile")
        /// The file is larger than ``ImageDecodingLimits/maximumFileBytes``.
        public static let fileTooLarge = Code("fileTooLarge")
        /// The data is neither a PNG nor a JPEG, whatever the file's extension says.
        public static let unsupportedFormat = Code("unsupportedFormat")
        /// The image data is damaged or truncated beyond what the decoder recovers from.
        public static let corruptImage = Code("corruptImage")
        /// Decoding would exceed a pixel limit of ``ImageDecodingLimits``; nothing was allocated.
        public static let imageTooLarge = Code("imageTooLarge")
        /// The encoder refused the image.
        public static let encodingFailed = Code("encodingFailed")
        /// An argument was out of range (an empty image, pixels that do not match the size).
        public static let invalidArgument = Code("invalidArgument")
        /// The task has no picture to make a thumbnail from: not an image or a video, or no file yet.
        public static let noThumbnail = Code("noThumbnail")
        /// `ffmpeg` or `ffprobe` is not installed, so videos get their type icon.
        public static let videoToolUnavailable = Code("videoToolUnavailable")
        /// `ffmpeg` ran but produced no frame.
        public static let videoToolFailed = Code("videoToolFailed")
        /// An external program did not finish in time and was killed.
        public static let timedOut = Code("timedOut")
        /// Reading or writing a cache or custom-thumbnail file failed.
        public static let storageFailed = Code("storageFailed")
    }

    /// The category.
    public let code: Code
    /// What happened, for people: at most 300 characters.
    public let message: String

    /// Makes an error; `message` is cut to 300 characters.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message.count > 300 ? String(message.prefix(297)) + "..." : message
    }

}
