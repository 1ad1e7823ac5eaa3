/// Byte counts for people, in decimal units as SDEDownloadManager shows them (Apple's "file"
/// style): `512 bytes`, `13 KB`, `41.6 MB`, `1.23 GB`.
///
/// Kilobytes have no decimals, megabytes one, larger units two; trailing zeros are dropped
/// (`2 MB`, `1.5 GB`) and a value that rounds up to 1000 moves to the next unit. The text
/// does not depend on the locale.
public enum ByteCountText {
    private static let units: [(name: String, decimals: Int)] = [
        ("KB", 0), ("MB", 1), ("GB", 2), ("TB", 2), ("PB", 2), ("EB", 2),
    ]

    /// The count as text; a negative count (unknown) is "Unknown".
    public static func string(_ bytes: Int64) -> String {
        guard bytes >= 0 else { return "Unknown" }
        if bytes < 1000 { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        var unitIndex = 0
        var scale = 1000.0
        while true {
            let (name, decimals) = units[unitIndex]
            let factor = power(10, decimals)
            let scaled = (Double(bytes) / scale * Double(factor)).rounded()
            if scaled < 1000 * Double(factor) || unitIndex == units.count - 1 {
                return format(Int64(scaled), decimals: decimals) + " " + name
            }
            unitIndex += 1
            scale *= 1000
        }
    }

    /// SDE's download detail: `41.6 MB/402.5 MB` while unfinished (or just the received
    /// count when the size is unknown), `402.5 MB` once finished.
    public static func detail(receivedBytes: Int64, expectedBytes: Int64?, isFinished: Bool) -> String {
        if isFinished { return string(expectedBytes ?? receivedBytes) }
        guard let expectedBytes, expectedBytes >= 0 else { return string(receivedBytes) }
        return string(receivedBytes) + "/" + string(expectedBytes)
    }

    private static func power(_ base: Int64, _ exponent: Int) -> Int64 {
        (0..<exponent).reduce(1) { result, _ in result * base }
    }

    /// `value / 10^decimals` with the trailing zeros of the fraction dropped.
    private static func format(_ value: Int64, decimals: Int) -> String {
        guard decimals > 0 else { return String(value) }
        let factor = power(10, decimals)
        let whole = value / factor
        var fraction = String(value % factor)
        fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? String(whole) : "\(whole).\(fraction)"
    }
}
