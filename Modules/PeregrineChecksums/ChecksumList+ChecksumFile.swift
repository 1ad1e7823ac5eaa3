extension ChecksumList {
    /// The expected checksum of a file, read from the text of a checksum file fetched beside it:
    /// a single digest (`9f86…`, or `sha256=9f86…`), a single `sha256sum` line (`app.iso.sha256`),
    /// or a list (`SHA256SUMS`) in which the entry is picked by the file's name.
    ///
    /// A bare digest's algorithm comes from the checksum file's name (`.sha256`, `SHA512SUMS`),
    /// else from its length, as ``init(parsing:algorithm:)`` does for list lines.
    ///
    /// - Parameters:
    ///   - text: the checksum file's content.
    ///   - listName: the checksum file's name (the last component of its URL path).
    ///   - fileNames: the names the downloaded file may go by, best first (its URL's last path
    ///     component, the server's name); the first one the list has an entry for wins. A list
    ///     of one entry that names none of them is still used: the digest then decides.
    /// - Throws: ``VerificationError/Code/emptyChecksum`` for an empty file,
    ///   ``VerificationError/Code/malformedChecksumList`` (or a checksum parsing code) for text
    ///   that is no checksum file, ``VerificationError/Code/noChecksumForFile`` when a list of
    ///   several entries has none for the file.
    public static func checksum(
        fromChecksumFile text: String, named listName: String, forFileNamed fileNames: [String]
    ) throws(VerificationError) -> Checksum {
        let content = Substring(text).trimmingWhitespace
        guard !content.isEmpty else {
            throw VerificationError(.emptyChecksum, "the checksum file \(VerificationError.quoted(listName)) is empty")
        }
        let named = algorithm(forListNamed: listName)
        if !content.contains(where: \.isWhitespace) {
            // One word: a bare digest, or `algorithm=digest`.
            if DigestText.isHex(content.utf8),
                let algorithm = named
                    ?? DigestAlgorithm.allCases.first(where: { $0.byteCount * 2 == content.utf8.count })
            {
                return try Checksum(algorithm, hex: content)
            }
            return try Checksum(parsing: content)
        }
        let list = try ChecksumList(parsing: content, algorithm: named)
        for name in fileNames {
            if let entry = list.entry(forFileNamed: name) { return entry.checksum }
        }
        if list.entries.count == 1 { return list.entries[0].checksum }
        throw VerificationError(
            .noChecksumForFile,
            "\(VerificationError.quoted(listName)) has no entry for "
                + "\(VerificationError.quoted(fileNames.first ?? "", limit: 200)) (\(list.entries.count) entries)")
    }
}
