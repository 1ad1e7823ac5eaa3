/// Bounds that keep decoding hostile or broken files cheap: every one is checked against the
/// header before pixel memory is allocated.
///
/// The defaults allow any photograph a camera makes (a 100-megapixel JPEG decodes at 1/8 scale)
/// while refusing decompression bombs such as a 100 000 × 100 000 PNG header.
public struct ImageDecodingLimits: Sendable, Hashable {
    /// The largest file read, in bytes. Default: 256 MiB.
    public var maximumFileBytes: Int
    /// The most pixels a file may declare in its header. Default: 120 million.
    public var maximumSourcePixels: Int
    /// The most pixels a progressive JPEG may declare: its decoder keeps every DCT coefficient of
    /// the full-size image in memory, about 3 bytes a pixel. Default: 40 million.
    public var maximumProgressiveSourcePixels: Int
    /// The most pixels held decoded in memory at once (after DCT or box scaling). Default: 32 million.
    public var maximumDecodedPixels: Int

    /// Limits with the given values; omitted ones take the defaults.
    public init(
        maximumFileBytes: Int = 256 << 20,
        maximumSourcePixels: Int = 120_000_000,
        maximumProgressiveSourcePixels: Int = 40_000_000,
        maximumDecodedPixels: Int = 32_000_000
    ) {
        self.maximumFileBytes = maximumFileBytes
        self.maximumSourcePixels = maximumSourcePixels
        self.maximumProgressiveSourcePixels = maximumProgressiveSourcePixels
        self.maximumDecodedPixels = maximumDecodedPixels
    }

    /// The defaults.
    public static let standard = ImageDecodingLimits()
}
