import COpenSSL

/// Why a digest could not be computed or a file could not be verified.
public struct VerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String
        /// The algorithm is unknown or OpenSSL does not offer it.
        public static let unsupportedAlgorithm = Code(name: "unsupported algorithm")
        /// OpenSSL reported an error.
        public static let openSSL = Code(name: "OpenSSL error")
        /// The file could not be read.
        public static let unreadableFile = Code(name: "unreadable file")
        public var description: String { name }
    }

    /// What kind of failure.
    public var code: Code
    /// What happened, with OpenSSL's own message when it gave one.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Creates an error and appends (and clears) OpenSSL's error queue of this thread.
    static func fromOpenSSL(_ code: Code, _ message: String) -> VerificationError {
        var reasons: [String] = []
        while case let error = ERR_get_error(), error != 0 {
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(error, &text, text.count)
            reasons.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return VerificationError(code, reasons.isEmpty ? message : "\(message): \(reasons.joined(separator: "; "))")
    }

    public var description: String { "\(code): \(message)" }
}
