/// Path arithmetic on strings, as `NSString`'s path methods do it, without Foundation's full
/// module (see ProcessRunner).
enum PathText {
    /// `directory` and `name` joined by one slash.
    static func join(_ directory: String, _ name: String) -> String {
        if directory.isEmpty { return name }
        if name.isEmpty { return directory }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Seconds with three decimals, as `%.3f` writes them (ffmpeg's `-ss`).
    static func milliseconds(_ seconds: Double) -> String {
        let thousandths = Int64((max(0, seconds) * 1000).rounded())
        let fraction = String(thousandths % 1000)
        return "\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
