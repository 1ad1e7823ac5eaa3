import PeregrineCore

/// `peregrine get`'s exit statuses, in the style of aria2's and curl's tables. When several
/// downloads fail, the status is that of the first one in the order they were given.
enum GetExitCode {
    /// Every download finished, or was complete already.
    static let success: Int32 = 0
    /// A failure of no other kind.
    static let unknown: Int32 = 1
    /// The network failed: DNS, connecting, a dropped or reset connection, a timeout, too slow.
    static let network: Int32 = 2
    /// The server answered with an error status (4xx or 5xx other than 401 and 407).
    static let http: Int32 = 3
    /// The server refused the credentials, or asked for some and none were given.
    static let authentication: Int32 = 4
    /// The TLS handshake or a certificate check failed.
    static let tls: Int32 = 5
    /// A download could not be resumed.
    static let cannotResume: Int32 = 6
    /// A checksum did not match (the file never took its name).
    static let verification: Int32 = 7
    /// The disk is full, or the output directory cannot be written.
    static let disk: Int32 = 8
    /// The file exists and `--no-clobber` keeps it.
    static let fileExists: Int32 = 9
    /// A redirect refused: from https to plain http (`--allow-insecure-redirect`), a loop or more
    /// than `--max-redirects`, or to a URL that cannot be downloaded. Not retried.
    static let redirect: Int32 = 10
    /// A flag, a URL or an input line was wrong (ArgumentParser's usage status, sysexits' EX_USAGE).
    static let usage: Int32 = 64
    /// Interrupted by SIGINT (128 + 2): the partial files stay, and the next run resumes them.
    static let interrupted: Int32 = 130
    /// Stopped by SIGTERM (128 + 15), likewise.
    static let terminated: Int32 = 143

    /// The status for a download's failure.
    static func code(for reason: FailureReason) -> Int32 {
        switch reason.code {
        case .dns, .network, .timeout, .tooSlow: network
        case .httpStatus: http
        case .authentication: authentication
        case .tls: tls
        case .cannotResume: cannotResume
        case .verification: verification
        case .diskFull, .fileSystem: disk
        case .fileExists: fileExists
        case .redirectRefused: redirect
        default: unknown
        }
    }

    /// The table, for `--help`.
    static let table = """
        Exit status: 0 all downloads finished or were complete already; 1 unknown error; 2 network error \
        (DNS, connection, timeout); 3 HTTP error status; 4 authentication failed; 5 TLS failure; \
        6 resume impossible; 7 checksum mismatch; 8 disk full or directory not writable; 9 file exists \
        (--no-clobber); 10 redirect refused (to http from https, a loop, too many); 64 bad usage (a flag, URL or input line); 130 interrupted (SIGINT); 143 stopped \
        (SIGTERM). With several failures, the first failed download in the order given decides.
        """
}
