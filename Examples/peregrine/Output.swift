#if canImport(Glibc)
    import Glibc
#endif

/// An error the command prints as one line, without a stack.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prints `peregrine: TEXT` on standard error.
func printError(_ text: String) {
    writeToStandardError("peregrine: \(text)\n")
}

/// Writes text to standard error, unbuffered.
func writeToStandardError(_ text: String) { write(text, to: STDERR_FILENO) }

/// Writes text to standard output at once (a line printed is a line kept, even when the process
/// is killed right after).
func writeToStandardOutput(_ text: String) { write(text, to: STDOUT_FILENO) }

private func write(_ text: String, to descriptor: Int32) {
    var text = text
    text.withUTF8 { bytes in
        var done = 0
        while done < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if written <= 0 { return }
            done += written
        }
    }
}
