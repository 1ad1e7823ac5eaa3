/// How the samples of one pixel are laid out: 8 bits per sample, channels interleaved.
public enum ThumbnailPixelFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// One grey sample.
    case gray8
    /// A grey sample, then alpha (straight, not premultiplied).
    case grayAlpha8
    /// Red, green, blue.
    case rgb8
    /// Red, green, blue, then alpha (straight, not premultiplied).
    case rgba8

    /// Samples per pixel: 1 to 4.
    public var channelCount: Int {
        switch self {
        case .gray8: 1
        case .grayAlpha8: 2
        case .rgb8: 3
        case .rgba8: 4
        }
    }

    /// Whether the last sample of each pixel is alpha.
    public var hasAlpha: Bool { self == .grayAlpha8 || self == .rgba8 }

    /// The format with `channelCount` samples per pixel, or `nil` outside 1...4.
    public init?(channelCount: Int) {
        switch channelCount {
        case 1: self = .gray8
        case 2: self = .grayAlpha8
        case 3: self = .rgb8
        case 4: self = .rgba8
        default: return nil
        }
    }
}
