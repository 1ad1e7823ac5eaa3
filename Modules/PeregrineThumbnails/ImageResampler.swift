/// Separable resampling: area averaging (an exact box filter over each target pixel's footprint)
/// when shrinking, bilinear interpolation when enlarging. Alpha images are filtered premultiplied.
enum ImageResampler {
    /// For each target index, `count` source indices and their weights (summing to 1).
    struct Taps {
        var count: Int
        var indices: [Int]
        var weights: [Float]
    }

    static func taps(from source: Int, to target: Int) -> Taps {
        let scale = Double(source) / Double(target)
        if scale > 1 {
            let count = Int(scale.rounded(.up)) + 1
            var indices = [Int](repeating: 0, count: target * count)
            var weights = [Float](repeating: 0, count: target * count)
            for output in 0..<target {
                let low = Double(output) * scale
                let high = min(Double(output + 1) * scale, Double(source))
                var index = Int(low.rounded(.down))
                var slot = 0
                while Double(index) < high, index < source, slot < count {
                    let covered = min(high, Double(index + 1)) - max(low, Double(index))
                    if covered > 0 {
                        indices[output * count + slot] = index
                        weights[output * count + slot] = Float(covered / (high - low))
                        slot += 1
                    }
                    index += 1
                }
            }
            return Taps(count: count, indices: indices, weights: weights)
        }
        var indices = [Int](repeating: 0, count: target * 2)
        var weights = [Float](repeating: 0, count: target * 2)
        for output in 0..<target {
            let center = (Double(output) + 0.5) * scale - 0.5
            let floor = center.rounded(.down)
            let fraction = Float(center - floor)
            let first = min(max(Int(floor), 0), source - 1)
            let second = min(max(Int(floor) + 1, 0), source - 1)
            indices[output * 2] = first
            indices[output * 2 + 1] = second
            weights[output * 2] = 1 - fraction
            weights[output * 2 + 1] = fraction
        }
        return Taps(count: 2, indices: indices, weights: weights)
    }

    static func resample(_ image: RasterImage, toWidth width: Int, height: Int) -> RasterImage {
        if width == image.width, height == image.height { return image }
        let channels = image.pixelFormat.channelCount
        let hasAlpha = image.pixelFormat.hasAlpha
        let horizontal = taps(from: image.width, to: width)
        let vertical = taps(from: image.height, to: height)
        let sourceWidth = image.width
        let sourceHeight = image.height

        // Pass 1: every source row to `width` columns, premultiplied, in floats.
        var intermediate = [Float](repeating: 0, count: width * sourceHeight * channels)
        var row = [Float](repeating: 0, count: sourceWidth * channels)
        image.pixels.withUnsafeBufferPointer { pixels in
            intermediate.withUnsafeMutableBufferPointer { middle in
                row.withUnsafeMutableBufferPointer { row in
                    horizontal.indices.withUnsafeBufferPointer { indices in
                        horizontal.weights.withUnsafeBufferPointer { weights in
                            for y in 0..<sourceHeight {
                                let base = y * sourceWidth * channels
                                if hasAlpha {
                                    for x in 0..<sourceWidth {
                                        let pixel = base + x * channels
                                        let alpha = Float(pixels[pixel + channels - 1])
                                        for channel in 0..<(channels - 1) {
                                            row[x * channels + channel] = Float(pixels[pixel + channel]) * alpha / 255
                                        }
                                        row[x * channels + channels - 1] = alpha
                                    }
                                } else {
                                    for index in 0..<(sourceWidth * channels) {
                                        row[index] = Float(pixels[base + index])
                                    }
                                }
                                let out = y * width * channels
                                for x in 0..<width {
                                    for tap in 0..<horizontal.count {
                                        let weight = weights[x * horizontal.count + tap]
                                        if weight == 0 { continue }
                                        let source = indices[x * horizontal.count + tap] * channels
                                        for channel in 0..<channels {
                                            middle[out + x * channels + channel] += row[source + channel] * weight
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }

        // Pass 2: columns to `height` rows, then back to straight 8-bit samples.
        let rowLength = width * channels
        var output = [UInt8](repeating: 0, count: width * height * channels)
        var accumulator = [Float](repeating: 0, count: rowLength)
        intermediate.withUnsafeBufferPointer { middle in
            output.withUnsafeMutableBufferPointer { output in
                accumulator.withUnsafeMutableBufferPointer { sum in
                    for y in 0..<height {
                        for index in 0..<rowLength { sum[index] = 0 }
                        for tap in 0..<vertical.count {
                            let weight = vertical.weights[y * vertical.count + tap]
                            if weight == 0 { continue }
                            let source = vertical.indices[y * vertical.count + tap] * rowLength
                            for index in 0..<rowLength { sum[index] += middle[source + index] * weight }
                        }
                        let out = y * rowLength
                        if hasAlpha {
                            for x in 0..<width {
                                let pixel = x * channels
                                let alpha = sum[pixel + channels - 1]
                                for channel in 0..<(channels - 1) {
                                    let value = alpha > 0 ? sum[pixel + channel] * 255 / alpha : 0
                                    output[out + pixel + channel] = clampToByte(value)
                                }
                                output[out + pixel + channels - 1] = clampToByte(alpha)
                            }
                        } else {
                            for index in 0..<rowLength { output[out + index] = clampToByte(sum[index]) }
                        }
                    }
                }
            }
        }
        return RasterImage(unchecked: width, height: height, pixelFormat: image.pixelFormat, pixels: output)
    }

    @inline(__always)
    static func clampToByte(_ value: Float) -> UInt8 {
        UInt8(min(max(value + 0.5, 0), 255))
    }
}
