// thumbnail-benchmark: P8's Peregrine side.
//
//   thumbnail-benchmark generate DIR [COUNT] [WIDTH] [HEIGHT]
//       writes COUNT photo-like JPEGs (default 100 of 4000 × 3000, quality 90) into DIR
//   thumbnail-benchmark run INPUT_DIR OUTPUT_DIR [HEIGHT]
//       thumbnails every *.jpg of INPUT_DIR to OUTPUT_DIR/<name>.png, one after another, the way
//       the thumbnailer's workers do (read, decode with DCT scaling, area-average, PNG, write);
//       prints "median_ms=… mean_ms=… total_s=… images=…"
//   thumbnail-benchmark cache-hit INPUT_DIR [HEIGHT]
//       times memory-cache hits of Thumbnailer.requestThumbnail; prints "hit_ns=…"
import Foundation
import PeregrineThumbnails
import Synchronization

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("thumbnail-benchmark: \(message)\n".utf8))
    exit(2)
}

func jpegs(in directory: String) -> [String] {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
        fail("cannot list \(directory)")
    }
    return names.filter { $0.lowercased().hasSuffix(".jpg") }.sorted().map { directory + "/" + $0 }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// A deterministic picture with a photograph's kind of entropy: gradients, soft shapes and
/// sensor-like noise (so the JPEGs are about as large and as slow to decode as a camera's).
func photo(width: Int, height: Int, seed: UInt64) -> RasterImage {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    var pixels = [UInt8](repeating: 0, count: width * height * 3)
    let centerX = Double(width) * (0.3 + Double(seed % 5) * 0.1)
    let centerY = Double(height) * 0.5
    pixels.withUnsafeMutableBufferPointer { pixels in
        for y in 0..<height {
            for x in 0..<width {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                let noise = Int(state & 31) - 16
                let dx = Double(x) - centerX
                let dy = Double(y) - centerY
                let ring = (sin((dx * dx + dy * dy).squareRoot() / 37.0) + 1) * 40
                let base = (y * width + x) * 3
                let r = x * 160 / width + Int(ring) + noise + 20
                let g = y * 150 / height + Int(ring / 2) + noise + 30
                let b = (x + y) * 120 / (width + height) + (x / 97 % 2) * 30 + noise + 40
                pixels[base] = UInt8(clamping: r)
                pixels[base + 1] = UInt8(clamping: g)
                pixels[base + 2] = UInt8(clamping: b)
            }
        }
    }
    return try! RasterImage(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: generate DIR [COUNT] [W] [H] | run IN OUT [H] | cache-hit IN [H]") }

switch arguments[1] {
case "generate":
    let directory = arguments[2]
    let count = arguments.count > 3 ? Int(arguments[3]) ?? 100 : 100
    let width = arguments.count > 4 ? Int(arguments[4]) ?? 4000 : 4000
    let height = arguments.count > 5 ? Int(arguments[5]) ?? 3000 : 3000
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for index in 0..<count {
        let data = try photo(width: width, height: height, seed: UInt64(index + 1)).jpegData(quality: 90)
        let path = directory + String(format: "/img%03d.jpg", index)
        guard FileManager.default.createFile(atPath: path, contents: data) else { fail("cannot write \(path)") }
    }
    print("generated=\(count) width=\(width) height=\(height)")

case "run":
    guard arguments.count >= 4 else { fail("usage: run INPUT_DIR OUTPUT_DIR [HEIGHT]") }
    let inputs = jpegs(in: arguments[2])
    let output = arguments[3]
    let height = arguments.count > 4 ? Int(arguments[4]) ?? 128 : 128
    try? FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
    let processor = ImageThumbnailProcessor(encoding: .png)
    let clock = ContinuousClock()
    var times: [Double] = []
    let started = clock.now
    for path in inputs {
        let begin = clock.now
        let source = ThumbnailSource(taskKey: path, filePath: path)
        let thumbnail: Thumbnail
        do {
            thumbnail = try processor.makeThumbnail(for: source, targetHeight: height)
        } catch {
            fail("\(path): \(error)")
        }
        let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        guard FileManager.default.createFile(atPath: output + "/" + name + ".png", contents: thumbnail.data) else {
            fail("cannot write into \(output)")
        }
        times.append(seconds(clock.now - begin))
    }
    let total = seconds(clock.now - started)
    guard !times.isEmpty else { fail("no *.jpg in \(arguments[2])") }
    let sorted = times.sorted()
    let median =
        sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    print(
        String(
            format: "median_ms=%.3f mean_ms=%.3f total_s=%.3f images=%d", median * 1000,
            total / Double(times.count) * 1000, total, times.count))

case "cache-hit":
    guard let path = jpegs(in: arguments[2]).first else { fail("no *.jpg in \(arguments[2])") }
    let height = arguments.count > 3 ? Int(arguments[3]) ?? 128 : 128
    let thumbnailer = Thumbnailer()
    let source = ThumbnailSource(taskKey: path, filePath: path)
    let ready = DispatchSemaphore(value: 0)
    let made = Mutex(0)
    _ = thumbnailer.requestThumbnail(for: source, targetHeight: height) { thumbnail in
        made.withLock { $0 = thumbnail.width }
        ready.signal()
    }
    ready.wait()
    let width = made.withLock { $0 }
    let clock = ContinuousClock()
    let rounds = 200_000
    var samples: [Double] = []
    for _ in 0..<5 {
        let begin = clock.now
        var hits = 0
        for _ in 0..<rounds {
            let thumbnail = thumbnailer.requestThumbnail(for: source, targetHeight: height) { _ in }
            hits &+= thumbnail.width
        }
        samples.append(seconds(clock.now - begin) / Double(rounds) * 1e9)
        // The type icon is square; the photo's thumbnail is not: every request was a cache hit.
        precondition(width != height && hits == rounds * width, "every request must be a cache hit")
    }
    print(String(format: "hit_ns=%.0f", samples.sorted()[2]))

default:
    fail("unknown command \(arguments[1])")
}
