#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A checksum list file — `SHA256SUMS`, `MD5SUMS`, `file.iso.sha256` — read into entries.
///
/// Understood, line by line (LF or CRLF):
///
/// | line | written by |
/// |---|---|
/// | `<hex>  <name>` (text mode) and `<hex> *<name>` (binary mode) | GNU `sha256sum`, `md5sum`, `shasum` |
/// | `<hex> <name>` | BSD `md5 -r`, `sha256 -r` |
/// | `SHA256 (<name>) = <hex>` | BSD `sha256`, `shasum --tag`, GNU `--tag`, `b2sum --tag` |
/// | `\<hex>  <name with \\, \n or \r escaped>`, `\SHA256 (…) = <hex>` | GNU tools, for names with a backslash or a line end |
/// | blank lines, and lines starting with `#` | comments |
///
/// GNU-style lines do not name their algorithm: it comes from the `algorithm` given to the
/// parser (from the list's name — see ``algorithm(forListNamed:)`` — or from the user), else
/// from the digest's length as the coreutils tools write them (32 hex digits: MD5, 40: SHA-1,
/// 56: SHA-224, 64: SHA-256, 96: SHA-384, 128: SHA-512).
///
/// Every line that is none of these is a ``VerificationError/Code/malformedChecksumList`` with
/// its line number and a short excerpt; a list is never half read.
public struct ChecksumList: Sendable, Hashable {
    /// One line of a list.
    public struct Entry: Sendable, Hashable, CustomStringConvertible {
        /// The file name as the list writes it (unescaped), e.g. `dist/app.tar.gz`.
        public var fileName: String
        /// The expected checksum.
        public var checksum: Checksum
        /// The line it came from, from 1.
        public var line: Int

        /// Creates an entry.
        public init(fileName: String, checksum: Checksum, line: Int) {
            self.fileName = fileName
            self.checksum = checksum
            self.line = line
        }

        public var description: String { "\(checksum) \(fileName)" }
    }

    /// The entries, in the order of the list.
    public var entries: [Entry]

    /// Creates a list of entries.
    public init(entries: [Entry]) { self.entries = entries }

    /// Reads the text of a list.
    ///
    /// - Parameter text: the list's text, lines ending with LF or CRLF.
    /// - Parameter algorithm: the algorithm of lines that do not name theirs (GNU style); nil
    ///   to tell it from the digest's length. Lines that name theirs (BSD style) keep it.
    /// - Throws: ``VerificationError/Code/malformedChecksumList`` (with ``VerificationError/line``)
    ///   for a line that is none of the known forms, or whose digest does not fit its algorithm;
    ///   ``VerificationError/Code/unsupportedAlgorithm`` for a BSD line naming an unknown one.
    public init(parsing text: some StringProtocol, algorithm: DigestAlgorithm? = nil) throws(VerificationError) {
        var entries: [Entry] = []
        var number = 0
        // "\r\n" is one Character in Swift: split on it as well as on "\n".
        for line in Substring(text).split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        {
            number += 1
            let content = line.trimmingWhitespace
            if content.isEmpty || content.first == "#" { continue }
            entries.append(try Self.entry(line, number: number, algorithm: algorithm))
        }
        self.entries = entries
    }

    /// Reads the list file at `path` (at most 64 MiB).
    ///
    /// - Parameter path: the list file's path.
    /// - Parameter algorithm: as in ``init(parsing:algorithm:)``; nil to take it from the
    ///   file's name (``algorithm(forListNamed:)``), else from each digest's length.
    /// - Throws: ``VerificationError/Code/unreadableFile``, or as ``init(parsing:algorithm:)`` does.
    public init(contentsOfFile path: String, algorithm: DigestAlgorithm? = nil) throws(VerificationError) {
        let bytes = try Self.readAll(path, limit: 64 << 20)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        do {
            try self.init(
                parsing: String(decoding: bytes, as: UTF8.self),
                algorithm: algorithm ?? Self.algorithm(forListNamed: name))
        } catch {
            // "SHA256SUMS line 3: …"
            throw VerificationError(
                error.code, "\(path)\(error.line == nil ? ":" : "") \(error.message)", line: error.line)
        }
    }

    /// The algorithm a list's file name announces: `SHA256SUMS`, `sha512sums.txt`, `app.iso.sha256`,
    /// `MD5SUMS`, `B2SUMS`, `SHA3-256SUMS`…; nil when the name says nothing.
    public static func algorithm(forListNamed name: String) -> DigestAlgorithm? {
        var base = Substring(name.lowercased())
        if base.hasSuffix(".txt") || base.hasSuffix(".asc") { base = base.dropLast(4) }
        if base.hasSuffix("sums") {
            let stem = base.dropLast(4)
            if stem == "b2" { return .blake2b512 }
            return DigestAlgorithm(name: stem)
        }
        if let dot = base.lastIndex(of: ".") {
            let stem = base[base.index(after: dot)...]
            if stem == "b2" { return .blake2b512 }
            return DigestAlgorithm(name: stem)
        }
        return nil
    }

    /// The entry for a file: the one whose name is `name` (a leading `./` ignored), else the
    /// only one whose last path component is `name`'s last path component.
    ///
    /// - Returns: nil when no entry fits, or when several entries in different folders share the
    ///   last component and none has the exact name.
    public func entry(forFileNamed name: String) -> Entry? {
        let wanted = Self.normalized(name)
        if let exact = entries.first(where: { Self.normalized($0.fileName) == wanted }) { return exact }
        let base = Self.lastComponent(wanted)
        let candidates = entries.filter { Self.lastComponent(Self.normalized($0.fileName)) == base }
        // One file listed with several algorithms is fine; the same name in two folders is ambiguous.
        guard let first = candidates.first,
            candidates.allSatisfy({ Self.normalized($0.fileName) == Self.normalized(first.fileName) })
        else { return nil }
        return first
    }

    /// The expected checksum for a file, as ``entry(forFileNamed:)`` finds it.
    ///
    /// - Throws: ``VerificationError/Code/noChecksumForFile`` when there is none.
    public func checksum(forFileNamed name: String) throws(VerificationError) -> Checksum {
        guard let entry = entry(forFileNamed: name) else {
            throw VerificationError(
                .noChecksumForFile,
                "the list has no entry for \(VerificationError.quoted(name, limit: 200)) (\(entries.count) entries)")
        }
        return entry.checksum
    }

    // MARK: Lines

    private static func entry(_ line: Substring, number: Int, algorithm: DigestAlgorithm?) throws(VerificationError)
        -> Entry
    {
        var text = line
        // GNU tools mark a line whose name they escaped with a leading backslash.
        let escaped = text.first == "\\"
        if escaped { text.removeFirst() }
        do {
            if let entry = try taggedEntry(text, escaped: escaped, number: number) { return entry }
            return try plainEntry(text, escaped: escaped, number: number, algorithm: algorithm)
        } catch {
            throw VerificationError(error.code, "line \(number): \(error.message)", line: number)
        }
    }

    /// `ALGORITHM (name) = hex`, or nil when the line does not have that shape.
    private static func taggedEntry(_ text: Substring, escaped: Bool, number: Int) throws(VerificationError) -> Entry? {
        guard let open = text.firstIndex(of: "("), let close = lastRange(of: ") = ", in: text),
            open < close.lowerBound
        else { return nil }
        let name = text[..<open].trimmingWhitespace
        // Every algorithm name has a letter beyond "f": an all-hex word starts a GNU line.
        guard !name.isEmpty, !name.contains(where: \.isWhitespace), !DigestText.isHex(name.utf8),
            text[..<open].last == " "
        else { return nil }
        guard let algorithm = DigestAlgorithm(name: name) else {
            throw VerificationError(
                .unsupportedAlgorithm,
                "unknown algorithm \(VerificationError.quoted(name, limit: 32)); supported: \(DigestAlgorithm.supportedNames)"
            )
        }
        let fileName = try unescaped(text[text.index(after: open)..<close.lowerBound], escaped: escaped)
        let digest = text[close.upperBound...].trimmingWhitespace
        return Entry(fileName: fileName, checksum: try checksum(algorithm, hex: digest, line: text), line: number)
    }

    /// `hex  name`, `hex *name` or `hex name`.
    private static func plainEntry(_ text: Substring, escaped: Bool, number: Int, algorithm: DigestAlgorithm?)
        throws(VerificationError) -> Entry
    {
        guard let space = text.firstIndex(where: { $0 == " " || $0 == "\t" }) else {
            throw malformed(text)
        }
        let digest = text[..<space]
        guard !digest.isEmpty, DigestText.isHex(digest.utf8) else { throw malformed(text) }
        var rest = text[text.index(after: space)...]
        if let mode = rest.first, mode == " " || mode == "*" { rest.removeFirst() }
        guard !rest.isEmpty else { throw malformed(text) }
        let fileName = try unescaped(rest, escaped: escaped)
        guard let algorithm = algorithm ?? lengthAlgorithm(digest.utf8.count) else {
            throw VerificationError(
                .malformedChecksumList,
                "a digest of \(digest.utf8.count) hex digits fits no algorithm the sha*sum and md5sum tools write; "
                    + "name the algorithm")
        }
        return Entry(fileName: fileName, checksum: try checksum(algorithm, hex: digest, line: text), line: number)
    }

    private static func checksum(_ algorithm: DigestAlgorithm, hex: Substring, line: Substring)
        throws(VerificationError)
        -> Checksum
    {
        do {
            return try Checksum(algorithm, hex: hex)
        } catch {
            throw VerificationError(.malformedChecksumList, "\(error.message), in \(VerificationError.quoted(line))")
        }
    }

    private static func lengthAlgorithm(_ hexDigits: Int) -> DigestAlgorithm? {
        switch hexDigits {
        case 32: .md5
        case 40: .sha1
        case 56: .sha224
        case 64: .sha256
        case 96: .sha384
        case 128: .sha512
        default: nil
        }
    }

    /// Undoes GNU's escaping (`\\`, `\n`, `\r`) on a line marked escaped.
    private static func unescaped(_ name: Substring, escaped: Bool) throws(VerificationError) -> String {
        guard !name.isEmpty else { throw VerificationError(.malformedChecksumList, "the file name is empty") }
        guard escaped else { return String(name) }
        var result = ""
        var iterator = name.makeIterator()
        while let character = iterator.next() {
            guard character == "\\" else {
                result.append(character)
                continue
            }
            switch iterator.next() {
            case "\\": result.append("\\")
            case "n": result.append("\n")
            case "r": result.append("\r")
            default:
                throw VerificationError(
                    .malformedChecksumList, "bad escape in the file name \(VerificationError.quoted(name))")
            }
        }
        return result
    }

    private static func malformed(_ line: Substring) -> VerificationError {
        VerificationError(
            .malformedChecksumList,
            "expected \"<hex>  <name>\" or \"ALGORITHM (<name>) = <hex>\", got \(VerificationError.quoted(line))")
    }

    private static func normalized(_ name: String) -> String {
        var result = Substring(name)
        while result.hasPrefix("./") { result = result.dropFirst(2) }
        return String(result)
    }

    private static func lastComponent(_ name: String) -> Substring {
        name.split(separator: "/", omittingEmptySubsequences: false).last ?? Substring(name)
    }

    /// The last occurrence of `needle` in `text`.
    private static func lastRange(of needle: String, in text: Substring) -> Range<Substring.Index>? {
        var index = text.endIndex
        while index > text.startIndex {
            index = text.index(before: index)
            if text[index...].hasPrefix(needle) { return index..<text.index(index, offsetBy: needle.count) }
        }
        return nil
    }

    private static func readAll(_ path: String, limit: Int) throws(VerificationError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileVerifier.unreadable(path, "cannot open", errno) }
        defer { _ = close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileVerifier.unreadable(path, "cannot read", errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            guard bytes.count <= limit else {
                throw VerificationError(
                    .unreadableFile, "\(path) is larger than \(limit >> 20) MiB: not a checksum list")
            }
        }
    }
}
