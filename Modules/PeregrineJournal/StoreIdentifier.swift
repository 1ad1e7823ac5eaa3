/// Checks manager identifiers before they become file names.
import PeregrineCore
import PeregrineStorage

package enum StoreIdentifier {
    /// Throws ``StoreError/Code/invalidIdentifier`` for an identifier that cannot name a file set
    /// inside the root directory: empty, longer than 200 bytes, containing `/`, `..`, NUL or a
    /// control character, or starting with a dot.
    package static func validate(_ identifier: String) throws(StoreError) {
        let reason: String? =
            if identifier.isEmpty {
                "it is empty"
            } else if identifier.utf8.count > 200 {
                "it is longer than 200 bytes"
            } else if identifier.hasPrefix(".") {
                "it starts with a dot"
            } else if identifier.contains("/") {
                "it contains a slash"
            } else if identifier.contains("..") {
                "it contains '..'"
            } else if identifier.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                "it contains a NUL or control character"
            } else {
                nil
            }
        if let reason {
            let shown = identifier.unicodeScalars.prefix(60).map { $0.value < 0x20 ? "?" : String($0) }.joined()
            throw StoreError(.invalidIdentifier, "the store identifier \"\(shown)\" cannot name a file: \(reason)")
        }
    }
}
