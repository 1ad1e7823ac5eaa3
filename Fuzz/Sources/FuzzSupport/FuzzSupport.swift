#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether the planted control bug is armed: `PEREGRINE_FUZZ_CONTROL=1` in the environment.
///
/// Scripts/fuzz.sh runs one harness with it set and requires that run to crash, which proves
/// that the build is instrumented and that libFuzzer reports crashes and saves their inputs.
public let controlArmed: Bool = {
    guard let value = getenv("PEREGRINE_FUZZ_CONTROL") else { return false }
    return String(cString: value) == "1"
}()

/// The input libFuzzer hands to `LLVMFuzzerTestOneInput`, as a buffer (empty for a null pointer).
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeBufferPointer<UInt8> {
    guard let data, size > 0 else { return UnsafeBufferPointer(start: nil, count: 0) }
    return UnsafeBufferPointer(start: data, count: size)
}

/// The planted control bug: when armed, crashes on any input that starts with `PFZ!`.
///
/// The prefix is compared with `memcmp`, which libFuzzer intercepts: the compared bytes feed
/// its mutation dictionary, so it reaches the shape within a few thousand executions from any
/// seed corpus, as it would reach a magic number in a parser.
public func plantedControlBug(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard controlArmed, let base = bytes.baseAddress, bytes.count >= 4 else { return }
    if memcmp(base, "PFZ!", 4) == 0 {
        fuzzFailure("control: the planted bug was reached (input starts with \"PFZ!\")")
    }
}

/// Reports a violated invariant and aborts, so that libFuzzer saves the input as a crash.
public func fuzzFailure(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let report = "FUZZ INVARIANT VIOLATED (\(file):\(line)): \(message)\n"
    _ = report.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    abort()
}

/// Checks `condition`; on failure reports `message` and aborts.
public func fuzzRequire(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { fuzzFailure(message(), file: file, line: line) }
}

/// A short, printable description of a string for failure messages: its Unicode scalars escaped.
public func debugText(_ text: String, limit: Int = 120) -> String {
    var result = ""
    for scalar in text.unicodeScalars.prefix(limit) {
        result += scalar.escaped(asASCII: true)
    }
    if text.unicodeScalars.count > limit { result += "…" }
    return "\"\(result)\" (\(text.utf8.count) bytes)"
}

/// A cursor that carves fuzzer bytes into small parameters.
public struct FuzzReader {
    private var bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    public init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The next byte, or 0 once the input is used up.
    public mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// The bytes not read yet.
    public var rest: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[min(index, bytes.count)...])
    }
}
