// Fuzzes checksum specs (`sha256=…`, `sha256:…`, `:base64:`) and checksum list files
// (`SHA256SUMS`, BSD `--tag` lines, single-digest `.sha256` files).
//
// Input: byte 0 picks the algorithm hint, byte 1 the list's file name; the rest is the text.
// Checked beyond "no crash": every parsed checksum has its algorithm's digest length and reads
// back from its own `description`, hex and base64; every list entry is found by its own name.

import FuzzSupport
import PeregrineVerification

private let listNames = [
    "SHA256SUMS", "sha512sums.txt", "MD5SUMS", "B2SUMS", "SHA3-256SUMS", "app.iso.sha256", "app.iso.md5",
    "checksums.txt", "app.iso.sha1", "SHA256SUMS.asc",
]
private let fileNames = ["app.iso", "./dist/app.iso", "app-1.0.tar.gz"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChecksum(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    plantedControlBug(bytes)

    var reader = FuzzReader(bytes)
    let hintByte = Int(reader.byte())
    let algorithms = DigestAlgorithm.allCases
    let hint: DigestAlgorithm? = hintByte < algorithms.count ? algorithms[hintByte] : nil
    let listName = listNames[Int(reader.byte()) % listNames.count]
    let text = String(decoding: reader.rest, as: UTF8.self)

    // A single spec.
    if let checksum = try? Checksum(parsing: text) {
        checkChecksum(checksum, source: text)
    }
    if let hint, let checksum = try? Checksum(hint, encodedDigest: text) {
        checkChecksum(checksum, source: text)
    }
    _ = DigestAlgorithm(name: text)
    _ = ChecksumList.algorithm(forListNamed: text)

    // A list.
    if let list = try? ChecksumList(parsing: text, algorithm: hint) {
        for entry in list.entries {
            checkChecksum(entry.checksum, source: text)
            _ = entry.description
            fuzzRequire(
                list.entry(forFileNamed: entry.fileName) != nil,
                "the list has no entry for its own entry's name \(debugText(entry.fileName))")
        }
        for name in fileNames { _ = try? list.checksum(forFileNamed: name) }
    }

    // A checksum file fetched beside a download.
    if let checksum = try? ChecksumList.checksum(fromChecksumFile: text, named: listName, forFileNamed: fileNames) {
        checkChecksum(checksum, source: text)
    }
    return 0
}

private func checkChecksum(_ checksum: Checksum, source: String) {
    let algorithm = checksum.algorithm
    fuzzRequire(
        checksum.digest.count == algorithm.byteCount,
        "a \(algorithm) checksum of \(checksum.digest.count) bytes from \(debugText(source))")
    for (form, text) in [
        ("description", checksum.description), ("hex", "\(algorithm.rawValue)=\(checksum.hex)"),
        ("base64", "\(algorithm.rawValue)=\(checksum.base64)"),
        ("sf-binary", "\(algorithm.rawValue)=:\(checksum.base64):"),
    ] {
        do {
            let again = try Checksum(parsing: text)
            fuzzRequire(again == checksum, "\(form) \(debugText(text)) reads back as \(again)")
        } catch {
            fuzzFailure("\(form) \(debugText(text)) of a parsed checksum does not read back: \(error)")
        }
    }
}
