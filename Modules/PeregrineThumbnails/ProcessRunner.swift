#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs an external program with no input, its output sent to a file or discarded, and a time
/// limit after which it is killed (SIGKILL) and reaped. `posix_spawn` directly: Foundation's
/// `Process` would pull the whole of Foundation (and ICU) into every program with thumbnails.
enum ProcessRunner {
    /// Runs `executable` with `arguments` and returns its exit status (the signal's number when
    /// a signal ended it).
    ///
    /// - Throws: ``ThumbnailError/Code/timedOut`` when it ran longer than `timeout` seconds (it is
    ///   killed first), ``ThumbnailError/Code/videoToolFailed`` when it cannot be started,
    ///   ``ThumbnailError/Code/storageFailed`` when the output file cannot be created.
    static func run(
        _ executable: String, _ arguments: [String], timeout: Double, standardOutputPath: String? = nil
    ) throws -> Int32 {
        var output: Int32 = -1
        if let standardOutputPath {
            output = open(standardOutputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard output >= 0 else { throw ThumbnailError(.storageFailed, "cannot create \(standardOutputPath)") }
        }
        defer { if output >= 0 { close(output) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if output >= 0 {
            // dup2 clears close-on-exec on the copy.
            posix_spawn_file_actions_adddup2(&actions, output, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let started = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard started == 0 else {
            throw ThumbnailError(
                .videoToolFailed, "cannot start \(executable): \(String(cString: strerror(started)))")
        }
        var status: Int32 = 0
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let limit = Double(deadline.tv_sec) + Double(deadline.tv_nsec) / 1e9 + max(0, timeout)
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno != EINTR) { break }
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            if Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 >= limit {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                let name = executable.split(separator: "/").last.map(String.init) ?? executable
                throw ThumbnailError(.timedOut, "\(name) ran longer than \(timeout) s and was killed")
            }
            usleep(5_000)
        }
        // Exited: the status's second byte; killed: the signal's number.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : status & 0x7F
    }
}
