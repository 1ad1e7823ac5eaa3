import Foundation
import PeregrineCore
import Synchronization
import TestSupport
import Testing

@testable import PeregrineThumbnails

/// Test pictures made in the tests themselves (no tools needed beyond what the module links).
enum TestImages {
    static let red: [UInt8] = [220, 30, 30]
    static let green: [UInt8] = [30, 200, 60]
    static let blue: [UInt8] = [30, 60, 220]
    static let white: [UInt8] = [250, 250, 250]

    /// Four flat quadrants: red top-left, green top-right, blue bottom-left, white bottom-right.
    static func quadrants(width: Int, height: Int) -> RasterImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let color =
                    y < height / 2 ? (x < width / 2 ? red : green) : (x < width / 2 ? blue : white)
                pixels.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: color)
            }
        }
        return try! RasterImage(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    /// A smooth RGB picture with some texture, like a photograph's worth of entropy.
    static func photo(width: Int, height: Int, seed: UInt64 = 1) -> RasterImage {
        var random = SeededRandom(seed: seed)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let base = (y * width + x) * 3
                let noise = Int(random.next() % 24)
                pixels[base] = UInt8(min(255, x * 255 / max(1, width - 1) / 2 + noise + 40))
                pixels[base + 1] = UInt8(min(255, y * 255 / max(1, height - 1) / 2 + noise + 30))
                pixels[base + 2] = UInt8(min(255, ((x + y) % 97) + noise + 60))
            }
        }
        return try! RasterImage(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    /// A JPEG with an APP1 EXIF block carrying `orientation`, inserted right after SOI.
    static func withExifOrientation(_ jpeg: Data, _ orientation: Int, bigEndian: Bool = false) -> Data {
        var tiff: [UInt8] = bigEndian ? [0x4D, 0x4D, 0, 42, 0, 0, 0, 8] : [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        func u16(_ value: Int) -> [UInt8] {
            bigEndian ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8)]
        }
        tiff += u16(2)  // two entries
        tiff += u16(0x010F) + u16(2) + u16(4) + u16(0) + [0x41, 0x42, 0x43, 0]  // Make = "ABC"
        tiff += u16(0x0112) + u16(3) + u16(1) + u16(0) + u16(orientation) + [0, 0]
        tiff += [0, 0, 0, 0]  // no next IFD
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        var bytes = [UInt8](jpeg)
        bytes.insert(contentsOf: [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload, at: 2)
        return Data(bytes)
    }

    /// The pixel at (x, y).
    static func pixel(_ image: RasterImage, _ x: Int, _ y: Int) -> [UInt8] {
        let channels = image.pixelFormat.channelCount
        let start = (y * image.width + x) * channels
        return Array(image.pixels[start..<start + channels])
    }

    /// Whether two colours are within `tolerance` in every channel.
    static func close(_ a: [UInt8], _ b: [UInt8], tolerance: Int = 40) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
    }

    /// A fresh temporary directory, removed by the caller with `cleanUp`.
    static func temporaryDirectory(_ name: String = #function) -> String {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        let path = NSTemporaryDirectory() + "peregrine-thumbnails-tests-\(safe)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func cleanUp(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    static func write(_ data: Data, to path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: data)
    }

    /// Writes an executable script through a close-on-exec descriptor: a program another test
    /// starts meanwhile must not inherit it open for writing, or running the script fails with
    /// ETXTBSY (`FileManager` gives no such guarantee).
    static func writeExecutable(_ text: String, to path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        precondition(descriptor >= 0, "cannot create \(path)")
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        precondition(written == bytes.count, "cannot write \(path)")
        Glibc.close(descriptor)
    }
}

/// A value set from one thread and read from another.
final class SetOnce<Value: Sendable>: Sendable {
    private let storage = Locked<Value?>(nil)

    init() {}

    func set(_ value: Value) { storage.withLock { $0 = value } }

    var value: Value? { storage.withLock { $0 } }
}

/// Awaits a value from a callback, failing after `seconds` instead of hanging.
func awaitValue<T: Sendable>(
    seconds: Double = 30, _ start: @escaping @Sendable (@escaping @Sendable (T) -> Void) -> Void
) async throws -> T {
    let (stream, continuation) = AsyncStream<T>.makeStream()
    start { value in continuation.yield(value) }
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            for await value in stream { return value }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw ThumbnailError(.timedOut, "no value within \(seconds) s")
        }
        return value
    }
}
