/// An encoded image format that Peregrine reads and writes.
public enum ImageFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// Portable Network Graphics, through libpng.
    case png
    /// JPEG, through libjpeg-turbo's TurboJPEG API.
    case jpeg

    /// The format that `bytes` start with, judged by their signature and never by a file name, or
    /// `nil` when they are neither a PNG nor a JPEG.
    public init?(sniffing bytes: some Collection<UInt8>) {
        var iterator = bytes.makeIterator()
        var head: [UInt8] = []
        while head.count < 8, let byte = iterator.next() { head.append(byte) }
        if head.count >= 8, head == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] {
            self = .png
        } else if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF {
            self = .jpeg
        } else {
            return nil
        }
    }
}
