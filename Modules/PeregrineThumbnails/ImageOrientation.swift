/// How a stored image must be turned to be shown upright: the EXIF `Orientation` tag (0x0112).
public enum ImageOrientation: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Shown as stored.
    case up = 1
    /// Mirrored left to right.
    case upMirrored = 2
    /// Turned half a turn.
    case down = 3
    /// Mirrored top to bottom.
    case downMirrored = 4
    /// Mirrored across the top-left to bottom-right diagonal (transposed).
    case leftMirrored = 5
    /// Turned a quarter turn clockwise.
    case right = 6
    /// Mirrored across the top-right to bottom-left diagonal (transversed).
    case rightMirrored = 7
    /// Turned a quarter turn counter-clockwise.
    case left = 8

    /// Whether showing the image upright swaps its width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// `image` turned upright.
    func apply(to image: RasterImage) -> RasterImage {
        if self == .up { return image }
        let width = image.width
        let height = image.height
        let channels = image.pixelFormat.channelCount
        let outputWidth = swapsDimensions ? height : width
        let outputHeight = swapsDimensions ? width : height
        var output = [UInt8](repeating: 0, count: image.pixels.count)
        image.pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                var out = 0
                for y in 0..<outputHeight {
                    for x in 0..<outputWidth {
                        let (sourceX, sourceY) =
                            switch self {
                            case .up: (x, y)
                            case .upMirrored: (width - 1 - x, y)
                            case .down: (width - 1 - x, height - 1 - y)
                            case .downMirrored: (x, height - 1 - y)
                            case .leftMirrored: (y, x)
                            case .right: (y, height - 1 - x)
                            case .rightMirrored: (width - 1 - y, height - 1 - x)
                            case .left: (width - 1 - y, x)
                            }
                        let from = (sourceY * width + sourceX) * channels
                        for channel in 0..<channels { target[out + channel] = source[from + channel] }
                        out += channels
                    }
                }
            }
        }
        return RasterImage(unchecked: outputWidth, height: outputHeight, pixelFormat: image.pixelFormat, pixels: output)
    }
}
