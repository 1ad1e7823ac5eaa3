// Fuzzes how the download service frames requests in front of SwiftNIO's HTTP/1 decoder
// (`RawRPCHandler.framing`): the bytes a client sends, read before anything else reads them.
//
// Input: the bytes of a connection. Checked beyond "no crash":
// - a request framed here is one the strict reading allows: the request line
//   `POST /jsonrpc HTTP/1.1`, a head that ends in its first empty line, within the head limit,
//   with CR LF line ends only, exactly one Content-Length whose digits are the body's length,
//   none of the refused headers, and the bytes to hold it;
// - the framing never changes its mind as bytes arrive: where a prefix of the input is framed as
//   a request, the whole input is framed the same; where a prefix goes to SwiftNIO's decoder,
//   so does the whole; every prefix of a framed request waits for more.

import Foundation
import FuzzSupport

@testable import PeregrineService

private let maxBody = 4096

private func framing(_ bytes: UnsafeBufferPointer<UInt8>, anyOrigin: Bool) -> RawRPCHandler.Framing {
    RawRPCHandler.framing(of: UnsafeRawBufferPointer(bytes), maxBodyBytes: maxBody, allowOriginAll: anyOrigin)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRawHTTPFraming(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    plantedControlBug(bytes)
    for anyOrigin in [false, true] {
        let whole = framing(bytes, anyOrigin: anyOrigin)
        if case .request(let headLength, let bodyLength) = whole {
            checkStrict(Array(bytes), headLength: headLength, bodyLength: bodyLength, anyOrigin: anyOrigin)
            for cut in stride(from: 0, to: headLength + bodyLength, by: max(1, (headLength + bodyLength) / 64)) {
                let prefix = framing(UnsafeBufferPointer(rebasing: bytes[0..<cut]), anyOrigin: anyOrigin)
                fuzzRequire(prefix == .incomplete, "\(cut) bytes of a framed request read as \(prefix)")
            }
        }
        for cut in [bytes.count / 3, bytes.count / 2, bytes.count - 1] where cut > 0 && cut < bytes.count {
            let prefix = framing(UnsafeBufferPointer(rebasing: bytes[0..<cut]), anyOrigin: anyOrigin)
            switch prefix {
            case .incomplete: break
            case .request, .elsewhere:
                fuzzRequire(prefix == whole, "\(cut) bytes read as \(prefix), all \(bytes.count) as \(whole)")
            }
        }
    }
    return 0
}

/// What a framed request must be, read again here the plain way.
private func checkStrict(_ bytes: [UInt8], headLength: Int, bodyLength: Int, anyOrigin: Bool) {
    fuzzRequire(headLength + bodyLength <= bytes.count, "framed past the input")
    fuzzRequire(headLength <= RawRPCHandler.maxHeadBytes + 2, "a head of \(headLength) bytes")
    let head = Array(bytes[0..<headLength])
    let text = String(decoding: head, as: UTF8.self)
    fuzzRequire(text.hasPrefix("POST /jsonrpc HTTP/1.1\r\n"), "another request line: \(debugText(text))")
    fuzzRequire(text.hasSuffix("\r\n\r\n"), "a head without its empty line")
    // CR and LF only as line ends, and the head's first empty line is its end.
    for index in head.indices where head[index] == 0x0A || head[index] == 0x0D {
        let asLineEnd =
            head[index] == 0x0D
            ? index + 1 < head.count && head[index + 1] == 0x0A : index > 0 && head[index - 1] == 0x0D
        fuzzRequire(asLineEnd, "a lone CR or LF at \(index) of the head")
    }
    // The header lines, split on CR LF as bytes (a CR LF is one Character of a String).
    var lines: [String] = []
    var start = 24  // after the request line
    for index in start..<(headLength - 2) where head[index] == 0x0D {
        lines.append(String(decoding: head[start..<index], as: UTF8.self))
        start = index + 2
    }
    var lengths: [String] = []
    for line in lines {
        fuzzRequire(!line.isEmpty, "an empty line inside the head")
        let colon = line.firstIndex(of: ":")
        fuzzRequire(colon != nil, "a header line without a colon: \(debugText(line))")
        let name = line[..<colon!].lowercased()
        let value = line[line.index(after: colon!)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        fuzzRequire(!name.isEmpty && !name.contains(" ") && !name.contains("\t"), "a header name \(debugText(name))")
        fuzzRequire(
            !["transfer-encoding", "expect", "upgrade"].contains(name), "a refused header framed: \(debugText(line))")
        if name == "origin" { fuzzRequire(anyOrigin, "an origin framed while origins are refused") }
        if name == "connection" { fuzzRequire(value.lowercased() == "keep-alive", "connection \(debugText(value))") }
        if name == "content-length" { lengths.append(value) }
    }
    fuzzRequire(lengths.count == 1, "\(lengths.count) Content-Length headers")
    fuzzRequire(
        lengths[0].allSatisfy { $0 >= "0" && $0 <= "9" } && Int(lengths[0]) == bodyLength,
        "Content-Length \(debugText(lengths[0])) for a body of \(bodyLength)")
    fuzzRequire(bodyLength <= maxBody, "a body over the limit")
}
