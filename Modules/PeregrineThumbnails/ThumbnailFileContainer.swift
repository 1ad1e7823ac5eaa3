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

/// The layout of a disk cache file: a small header naming what the thumbnail is, then the
/// encoded image.
///
/// ```
/// "PRGT" | version 1 | format | pixel format | 0 | width u32 | height u32
///        | source size i64 | source mtime i64 | key length u32 | key (UTF-8) | image
/// ```
/// Integers are little-endian. The key inside the file makes a hash collision in the file name
/// harmless, and the source signature notices a file that changed since.
enum ThumbnailFileContainer {
    static let magic: [UInt8] = Array("PRGT".utf8)
    static let version: UInt8 = 1

    static func encode(_ thumbnail: Thumbnail, key: ThumbnailCacheKey, signature: SourceSignature) -> Data {
        let keyBytes = Array(key.description.utf8)
        var header: [UInt8] = magic
        header.append(version)
        header.append(formatCode(thumbnail.format))
        header.append(pixelFormatCode(thumbnail.pixelFormat))
        header.append(0)
        append(UInt32(thumbnail.width), to: &header)
        append(UInt32(thumbnail.height), to: &header)
        append(UInt64(bitPattern: signature.size), to: &header)
        append(UInt64(bitPattern: signature.modificationTime), to: &header)
        append(UInt32(keyBytes.count), to: &header)
        header.append(contentsOf: keyBytes)
        var data = Data(header)
        data.append(thumbnail.data)
        return data
    }

    /// The thumbnail in `data` when it is a well-formed container for `key`; `signature`, when
    /// given, must match the stored one.
    static func decode(_ data: Data, key: ThumbnailCacheKey, signature: SourceSignature?) -> Thumbnail? {
        let bytes = [UInt8](data)
        guard bytes.count >= 36, Array(bytes[0..<4]) == magic, bytes[4] == version,
            let format = format(bytes[5]), let pixelFormat = pixelFormat(bytes[6])
        else { return nil }
        let width = Int(read(UInt32.self, bytes, at: 8))
        let height = Int(read(UInt32.self, bytes, at: 12))
        let stored = SourceSignature(
            size: Int64(bitPattern: read(UInt64.self, bytes, at: 16)),
            modificationTime: Int64(bitPattern: read(UInt64.self, bytes, at: 24)))
        let keyLength = Int(read(UInt32.self, bytes, at: 32))
        guard width > 0, height > 0, keyLength <= bytes.count - 36 else { return nil }
        let storedKey = String(decoding: bytes[36..<(36 + keyLength)], as: UTF8.self)
        guard storedKey == key.description else { return nil }
        if let signature, signature != stored { return nil }
        let image = Data(bytes[(36 + keyLength)...])
        guard ImageFormat(sniffing: image) == format else { return nil }
        return Thumbnail(uncheckedWidth: width, height: height, pixelFormat: pixelFormat, format: format, data: image)
    }

    static func formatCode(_ format: ImageFormat) -> UInt8 { format == .png ? 0 : 1 }
    static func format(_ code: UInt8) -> ImageFormat? { code == 0 ? .png : code == 1 ? .jpeg : nil }
    static func pixelFormatCode(_ format: ThumbnailPixelFormat) -> UInt8 { UInt8(format.channelCount) }
    static func pixelFormat(_ code: UInt8) -> ThumbnailPixelFormat? { ThumbnailPixelFormat(channelCount: Int(code)) }

    static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func read<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], at offset: Int) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + index]) << (8 * index) }
        return value
    }
}
