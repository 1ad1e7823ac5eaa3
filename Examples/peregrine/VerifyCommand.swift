import ArgumentParser
import PeregrineVerification

/// `peregrine verify FILE... --checksum ALGORITHM=HEX...` or `peregrine verify [FILE...] --sums LIST`:
/// checks files on disk, one line each; exit status 0 when all match, 7 on a mismatch (as
/// `peregrine get`), 1 when a file cannot be read.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check files against expected checksums.",
        discussion: """
            With --checksum, give one checksum per file, in the order of the files. With --sums, each file is \
            looked up in a checksum list (sha256sum or md5sum output, or BSD/--tag lines such as \
            "SHA256 (name) = hex") by its name, else by its last path component; with no file, every file \
            the list names is checked, relative to the current directory (as sha256sum -c does). \
            Prints "FILE: OK (algorithm)" or "FILE: FAILED reason" for each file. The exit status is 0 when \
            every file matched, 7 when any did not (as peregrine get's checksum mismatch), else 1 when a file \
            could not be read, 64 for a usage error such as a malformed --checksum.
            """
    )

    @Argument(help: "The files to check.")
    var files: [String] = []

    @Option(
        name: .customLong("checksum"),
        help: ArgumentHelp(
            "The expected digest, as ALGORITHM=HEX (also ALGORITHM:HEX or sha-256=:BASE64:); once per file, in order.",
            valueName: "algorithm=hex"))
    var checksums: [String] = []

    @Option(help: ArgumentHelp("A checksum list to look the files up in (SHA256SUMS, …).", valueName: "list"))
    var sums: String?

    @Option(
        help: ArgumentHelp(
            "The algorithm of the list's lines that name none (default: from the list's name, e.g. SHA256SUMS, "
                + "else from the digest's length).",
            valueName: "name"))
    var algorithm: String?

    @Flag(name: .shortAndLong, help: "Print only the files that did not match.")
    var quiet = false

    func validate() throws {
        switch (checksums.isEmpty, sums) {
        case (true, nil): throw ValidationError("give --checksum ALGORITHM=HEX or --sums LIST")
        case (false, .some): throw ValidationError("give either --checksum or --sums, not both")
        case (false, nil):
            guard !files.isEmpty, checksums.count == files.count else {
                throw ValidationError(
                    "give one --checksum per file, in order: \(files.count) file\(files.count == 1 ? "" : "s"), "
                        + "\(checksums.count) checksum\(checksums.count == 1 ? "" : "s")")
            }
            _ = try expectedChecksums()
            guard algorithm == nil else { throw ValidationError("--algorithm goes with --sums") }
        case (true, .some):
            _ = try listAlgorithm()
        }
    }

    func run() throws {
        var failures = 0
        var mismatches = 0
        var total = 0
        for (path, expected) in try work() {
            total += 1
            do {
                let checksum = try expected.get()
                let result = try FileVerifier().verify(fileAt: path, against: checksum)
                if result.isVerified {
                    if !quiet { print("\(path): OK (\(checksum.algorithm))") }
                } else {
                    failures += 1
                    mismatches += 1
                    print("\(path): FAILED \(result)")
                }
            } catch {
                failures += 1
                print("\(path): FAILED \(error)")
            }
        }
        guard failures == 0 else {
            printError("\(failures) of \(total) file\(total == 1 ? "" : "s") did not verify")
            throw mismatches > 0 ? ExitCode(GetExitCode.verification) : ExitCode.failure
        }
    }

    /// Each file to check with its expected checksum, or why there is none.
    private func work() throws -> [(String, Result<Checksum, VerificationError>)] {
        guard let sums else {
            return zip(files, try expectedChecksums()).map { ($0, .success($1)) }
        }
        let list: ChecksumList
        do {
            list = try ChecksumList(contentsOfFile: sums, algorithm: try listAlgorithm())
        } catch {
            throw CommandFailure("\(error)")
        }
        guard !files.isEmpty else {
            guard !list.entries.isEmpty else { throw CommandFailure("\(sums) lists no files") }
            return list.entries.map { ($0.fileName, .success($0.checksum)) }
        }
        return files.map { file in
            (file, Result { () throws(VerificationError) in try list.checksum(forFileNamed: file) })
        }
    }

    private func expectedChecksums() throws(ValidationError) -> [Checksum] {
        var result: [Checksum] = []
        for spec in checksums {
            do {
                result.append(try Checksum(parsing: spec))
            } catch {
                throw ValidationError("--checksum \(spec.count > 80 ? String(spec.prefix(80)) + "…" : spec): \(error)")
            }
        }
        return result
    }

    private func listAlgorithm() throws(ValidationError) -> DigestAlgorithm? {
        guard let algorithm else { return nil }
        guard let parsed = DigestAlgorithm(name: algorithm) else {
            let names = DigestAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("--algorithm \(algorithm): unknown; supported: \(names)")
        }
        return parsed
    }
}
