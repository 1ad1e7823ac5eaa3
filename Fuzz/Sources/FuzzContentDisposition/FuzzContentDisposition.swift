// Fuzzes `Content-Disposition` parsing (RFC 6266 / RFC 8187) and `FileNameSanitizer`, through
// `SuggestedFileName` as the engine uses them, and checks that every sanitized name is safe to
// create inside the download directory.
//
// Input: `<header value>\n<URL path and query>`; without a newline the whole input is the header.

import FuzzSupport
import PeregrineCore

@testable import PeregrineEngine

private let taskURL = try! DownloadURL("https://downloads.example.com/files/archive.tar.gz")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContentDisposition(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    plantedControlBug(bytes)

    let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
    let header = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<newline]), as: UTF8.self)
    let path =
        newline < bytes.endIndex
        ? String(decoding: UnsafeBufferPointer(rebasing: bytes[(newline + 1)...]), as: UTF8.self) : ""

    if let disposition = ContentDisposition(headerValue: header) {
        fuzzRequire(
            !disposition.type.isEmpty || disposition.fileName != nil || disposition.extendedFileName != nil,
            "a parsed header has neither a type nor a name: \(debugText(header))")
        fuzzRequire(
            disposition.preferredFileName == (disposition.extendedFileName ?? disposition.fileName),
            "preferredFileName is neither filename* nor filename")
        for name in [disposition.fileName, disposition.extendedFileName].compactMap({ $0 }) {
            checkSanitizer(name)
        }
    }

    // The raw header and the path as names, and the header as the fallback of the path.
    checkSanitizer(header)
    checkSafeName(
        FileNameSanitizer.sanitize(path, fallback: header), from: path, candidates: [path, header],
        step: "sanitize(_:fallback:)")

    // The engine's entry point: header first, then the URL after redirects, then the task's URL.
    let effectiveURL = "https://mirror.example.net/" + path
    let suggested = SuggestedFileName.make(contentDisposition: header, effectiveURL: effectiveURL, url: taskURL)
    let component = SuggestedFileName.lastPathComponent(of: effectiveURL)
    if let component {
        fuzzRequire(!component.isEmpty, "lastPathComponent returned an empty component for \(debugText(effectiveURL))")
    }
    let candidates = [ContentDisposition(headerValue: header)?.preferredFileName, component].compactMap { $0 }
    checkSafeName(suggested, from: header + "\n" + path, candidates: candidates, step: "SuggestedFileName.make")

    // Numbered names for conflicts (`name (2).ext`) stay within the byte limit.
    let number = bytes.count % 1000 + 1
    let numbered = FileNameParts(FileNameSanitizer.sanitize(header)).numbered(number)
    fuzzRequire(
        numbered.utf8.count <= FileNameSanitizer.maximumByteCount,
        "numbered(\(number)) is longer than \(FileNameSanitizer.maximumByteCount) bytes: \(debugText(numbered))")
    return 0
}

/// Checks `clean` and `sanitize` on one untrusted name.
private func checkSanitizer(_ name: String) {
    if let clean = FileNameSanitizer.clean(name) {
        checkSafeName(clean, from: name, candidates: [name], step: "clean(_:)")
    }
    checkSafeName(FileNameSanitizer.sanitize(name), from: name, candidates: [name], step: "sanitize(_:)")
}

/// The invariants of a sanitized name: the required ones (no "/", no NUL, not "." or "..", not
/// empty) and the rest of `FileNameSanitizer`'s documented contract. `candidates` are the names
/// the result was made from (kept for the failure message's context).
private func checkSafeName(_ safe: String, from source: String, candidates: [String], step: String) {
    let utf8 = safe.utf8
    let context = "\(step) of \(debugText(source)) gave \(debugText(safe)) (from \(candidates.count) candidates)"
    fuzzRequire(!utf8.isEmpty, "empty name: \(context)")
    fuzzRequire(!utf8.contains(UInt8(ascii: "/")), "name contains \"/\": \(context)")
    fuzzRequire(!utf8.contains(0), "name contains NUL: \(context)")
    fuzzRequire(!utf8.elementsEqual(".".utf8) && !utf8.elementsEqual("..".utf8), "name is . or ..: \(context)")
    // Documented in FileNameSanitizer as well.
    fuzzRequire(!utf8.contains(UInt8(ascii: "\\")), "name contains a backslash: \(context)")
    fuzzRequire(utf8.first != UInt8(ascii: "."), "name starts with a dot: \(context)")
    fuzzRequire(utf8.count <= FileNameSanitizer.maximumByteCount, "name is too long: \(context)")
    fuzzRequire(
        !safe.unicodeScalars.contains(where: FileNameSanitizer.isForbidden),
        "name contains a control or invisible character: \(context)")
}
