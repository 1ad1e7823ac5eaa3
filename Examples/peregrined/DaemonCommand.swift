import ArgumentParser
import Foundation
import Logging
import Peregrine
import PeregrineCurlTransport
import PeregrineFleet
import PeregrinePostgresStorage
import PeregrineService
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `peregrined` (also run as `peregrine daemon`): the download service — the facade and its
/// store behind aria2's JSON-RPC at `/jsonrpc` (HTTP and WebSocket). Option names are aria2's.
@main
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peregrined",
        abstract: "Run the download service: aria2-compatible JSON-RPC over HTTP and WebSocket.",
        discussion: """
            Binds 127.0.0.1 and [::1] unless --rpc-listen-all. SIGTERM, SIGINT or aria2.shutdown stop it \
            gracefully: transfers stop with their resume records and the store is saved; started \
            again, the downloads are back and unfinished ones continue. With --drain-timeout, SIGTERM \
            and SIGINT first drain: no download starts (a fleet service claims none and hands back \
            those it has not started) and the running ones have that long to finish; SIGQUIT or a \
            second SIGTERM stops at once. Logs go to standard error. \
            Options can also come from the environment (PEREGRINE_ and the name in capitals, _ for -: \
            PEREGRINE_RPC_SECRET, PEREGRINE_STORE) and from a file in aria2's format (--conf-path: \
            name=value lines, # comments; aria2's own options too, applied as changeGlobalOption \
            would); the command line wins over the environment, which wins over the file. \
            Under systemd (Type=notify) it reports readiness once it listens. \
            `peregrine daemon ARGS` runs this program with the same arguments. Exit status: 0 after \
            a graceful stop, 64 for bad usage, 75 when the store cannot be opened (another process \
            holds it: the message names it), 1 for any other failure.
            """,
        version: peregrineVersion
    )

    /// The exit status when the store cannot be opened (`EX_TEMPFAIL`: held by another process,
    /// say), which is no usage error.
    static let storeUnavailableStatus: Int32 = 75

    @Option(
        name: .customLong("conf-path"),
        help: ArgumentHelp(
            "Read options from this file (aria2's format: name=value lines), under the environment's and the "
                + "command line's (or PEREGRINE_CONF_PATH).",
            valueName: "file"))
    var confPath: String?

    @Option(name: .customLong("dir"), help: "The download root: every file lands inside it.")
    var directory: String

    @Option(name: .customLong("state"), help: "The directory of the service's store.")
    var stateDirectory: String

    @Option(name: .customLong("rpc-listen-port"), help: "The port of the JSON-RPC server (0: any free port).")
    var port: Int = 6800

    @Option(
        name: .customLong("rpc-secret"),
        help: ArgumentHelp(
            "The secret clients give as token:SECRET. Masked in the process title, but seen in the shell's "
                + "history and briefly by ps: prefer --rpc-secret-file or PEREGRINE_RPC_SECRET."))
    var secret: String?

    @Option(
        name: .customLong("rpc-secret-file"),
        help: ArgumentHelp(
            "Read the secret from the first line of this file (readable by the service's user only): the safe "
                + "way, with PEREGRINE_RPC_SECRET.",
            valueName: "file"))
    var secretFile: String?

    @Flag(name: .customLong("rpc-listen-all"), help: "Listen on every interface instead of 127.0.0.1 only.")
    var listenAll = false

    @Flag(name: .customLong("rpc-allow-origin-all"), help: "Allow browsers on any origin (CORS).")
    var allowOriginAll = false

    @Option(name: .customLong("max-concurrent-downloads"), help: "Downloads at once (kept in the store).")
    var maxConcurrentDownloads: Int?

    @Option(
        name: [.customShort("s"), .customLong("split")],
        help: "Download each file over up to N connections (1–64), for every download of the service.")
    var split = 1

    @Option(
        name: .customLong("store"),
        help: ArgumentHelp(
            "A fleet's shared queue: postgresql://USER:PASS@HOST:PORT/DB (or the environment's PEREGRINE_STORE).",
            valueName: "connection-string"))
    var store: String?

    @Option(name: .customLong("queue"), help: "The shared queue's name; the same for every service of a fleet.")
    var queueName = "downloads"

    @Option(
        name: .customLong("lease"),
        help: "Seconds a claim holds a task without renewal: how soon a dead service's tasks go to others.")
    var leaseSeconds: Double = 30

    @Option(
        name: .customLong("fleet-slots"),
        help: "Tasks this service claims at once (default: --max-concurrent-downloads, else 5).")
    var fleetSlots: Int?

    @Option(
        name: .customLong("fleet-max-downloads"),
        help:
            "Downloads of one list at once across the whole fleet, kept in the database for every service (0: no limit)."
    )
    var fleetMaxDownloads: Int?

    @Option(
        name: .customLong("fleet-max-connections-per-origin"),
        help: "Connections to one origin at once across the whole fleet, kept in the database (0: no limit).")
    var fleetMaxConnectionsPerOrigin: Int?

    @Option(
        name: .customLong("drain-timeout"),
        help: ArgumentHelp(
            "Seconds SIGTERM or SIGINT lets running downloads finish before the service stops, starting none "
                + "(0: stop at once). SIGQUIT or a second SIGTERM stops at once.",
            valueName: "seconds"))
    var drainTimeout: Double = 0

    @Flag(help: "Log at debug level.")
    var verbose = false

    /// How log lines are written.
    enum LogFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(
        name: .customLong("log-format"),
        help: "Log lines as text (the default) or as one JSON object a line, for log shippers: text or json.")
    var logFormat: LogFormat = .text

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--rpc-listen-port must be 0 to 65535") }
        if secret != nil, secretFile != nil {
            throw ValidationError("--rpc-secret and --rpc-secret-file exclude each other: give one")
        }
        guard Segmentation.connectionRange.contains(split) else {
            throw ValidationError("--split takes a number of connections from 1 to 64, not \(split)")
        }
        if let maxConcurrentDownloads, maxConcurrentDownloads < 1 {
            throw ValidationError("--max-concurrent-downloads must be at least 1")
        }
        if let fleetSlots, fleetSlots < 1 { throw ValidationError("--fleet-slots must be at least 1") }
        for (name, value) in [
            ("--fleet-max-downloads", fleetMaxDownloads),
            ("--fleet-max-connections-per-origin", fleetMaxConnectionsPerOrigin),
        ] {
            if let value, value < 0 || value > Int(Int32.max) {
                throw ValidationError("\(name) takes 0 (no limit) to \(Int32.max), not \(value)")
            }
        }
        guard leaseSeconds >= 0.1, leaseSeconds <= 86400 else {
            throw ValidationError("--lease takes 0.1 to 86400 seconds")
        }
        guard drainTimeout.isFinite, drainTimeout >= 0, drainTimeout <= 86400 else {
            throw ValidationError("--drain-timeout takes 0 to 86400 seconds")
        }
    }

    /// Overwrites the value of `--rpc-secret` (and a password in `--store`'s URL) in the
    /// process's own argument strings with `*`, as aria2 does, so that `ps` and
    /// `/proc/PID/cmdline` show no secret once the service runs. The parsed values were copied
    /// before.
    static func maskSecretsInProcessTitle() {
        let count = Int(CommandLine.argc)
        let arguments = CommandLine.unsafeArgv
        func mask(_ index: Int, from offset: Int) {
            guard index < count, let text = arguments[index] else { return }
            var position = offset
            while text[position] != 0 {
                text[position] = CChar(UInt8(ascii: "*"))
                position += 1
            }
        }
        func maskPassword(_ index: Int, from offset: Int) {
            guard index < count, let text = arguments[index] else { return }
            let value = String(cString: text + offset)
            // scheme://user:password@host…: the password alone.
            guard let scheme = value.range(of: "://"),
                let at = value[scheme.upperBound...].firstIndex(of: "@"),
                let colon = value[scheme.upperBound..<at].firstIndex(of: ":")
            else { return }
            let start = offset + value.utf8.distance(from: value.startIndex, to: value.index(after: colon))
            let end = offset + value.utf8.distance(from: value.startIndex, to: at)
            for position in start..<end { text[position] = CChar(UInt8(ascii: "*")) }
        }
        var index = 1
        while index < count {
            guard let pointer = arguments[index] else { break }
            let argument = String(cString: pointer)
            for (name, masks) in [("--rpc-secret", mask), ("--store", maskPassword)] {
                if argument == name {
                    masks(index + 1, 0)
                } else if argument.hasPrefix(name + "=") {
                    masks(index, name.utf8.count + 1)
                }
            }
            index += 1
        }
    }

    /// The first line of a secret file; refused when it cannot be read or is empty, and warned
    /// about when others may read it.
    static func readSecret(from path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read the secret file \(path)")
        }
        let secret = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
        guard let secret, !secret.isEmpty else { throw ValidationError("the secret file \(path) is empty") }
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & 0o077 != 0 {
            printError("warning: \(path) holds the RPC secret and others may read it (chmod 600 \(path))")
        }
        return secret
    }

    /// glibc's allocator for a process that runs for days: at most two arenas (glibc's default
    /// is eight per core, each keeping its own free memory) and a fixed trim threshold (by
    /// default it grows with the largest block freed, and freed memory below it stays
    /// resident). Measured with 10,000 tasks (P9): 61–67 MiB of heap resident with the
    /// defaults, 44 MiB with these. Left alone when the environment tunes malloc itself
    /// (`MALLOC_ARENA_MAX`, `MALLOC_TRIM_THRESHOLD_`, `GLIBC_TUNABLES`).
    static func tuneAllocator() {
        #if canImport(Glibc)
            let environment = ProcessInfo.processInfo.environment
            let tuned =
                environment["MALLOC_ARENA_MAX"] != nil || environment["MALLOC_TRIM_THRESHOLD_"] != nil
                || (environment["GLIBC_TUNABLES"] ?? "").contains("glibc.malloc")
            guard !tuned else { return }
            _ = glibcMallopt(mallocArenaMax, 2)
            _ = glibcMallopt(mallocTrimThreshold, 128 * 1024)
        #endif
    }

    /// Parses the command line after the settings of the environment and the configuration
    /// file (``DaemonSettings``), then runs.
    static func main() async {
        let settings: DaemonSettings
        switch launchSettings {
        case .success(let read): settings = read
        case .failure(let error): exit(withError: ValidationError(error.description))
        }
        do {
            var command = try parseAsRoot(settings.arguments)
            if var daemon = command as? AsyncParsableCommand {
                try await daemon.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    /// What the environment and the configuration file give this process.
    static let launchSettings: Result<DaemonSettings, DaemonSettings.SettingsError> = {
        do throws(DaemonSettings.SettingsError) {
            return .success(
                try DaemonSettings.read(
                    commandLine: Array(CommandLine.arguments.dropFirst()),
                    environment: ProcessInfo.processInfo.environment, isAria2Option: RPCDispatcher.isAria2Option))
        } catch {
            return .failure(error)
        }
    }()

    private var settings: DaemonSettings? { try? Self.launchSettings.get() }

    func run() async throws {
        Self.maskSecretsInProcessTitle()
        // Before anything is opened: a secret file that cannot be read is a usage error.
        let token = try secret ?? secretFile.map(Self.readSecret)
        // aria2's options of the configuration file, checked before anything is opened.
        do throws(RPCError) {
            try RPCDispatcher.checkGlobalOptions(settings?.globalOptions ?? [:])
        } catch {
            throw ValidationError("\(settings?.file ?? "the configuration file"): \(error.message)")
        }
        Self.tuneAllocator()
        let format = logFormat
        var logger = Logger(label: "peregrine.daemon") { label -> any LogHandler in
            format == .json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
        }
        logger.logLevel = verbose ? .debug : .info
        let requests = TaskRequestTable()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var managerLogger = logger
        managerLogger.logLevel = verbose ? .debug : .warning
        let curl = CurlTransport(
            configuration: CurlTransport.Configuration(maxConnectionsPerHost: max(16, split)))
        var configuration = DownloadManager.Configuration(
            downloadDirectory: directory, stateDirectory: stateDirectory, transport: curl,
            flushDelay: .milliseconds(200))
        configuration.thumbnails = Thumbnailer.Configuration(cachePolicy: .memoryOnly)
        configuration.maxDownloadCount = 5
        configuration.downloadNewFileImmediately = false
        configuration.requestAdapter = requests
        // A download's own max-tries and retry-wait, over the manager's retries.
        configuration.retryPolicy = requests.retryPolicy(over: configuration.retryPolicy)
        configuration.logger = managerLogger
        configuration.segmentation = Segmentation(maxConnectionsPerTask: split)
        let manager: DownloadManager
        do {
            manager = try DownloadManager(identifier: "daemon", configuration: configuration)
        } catch {
            // Not a usage error: one line that says what holds the store, and a status of its own.
            printError("cannot open the service's store in \(stateDirectory): \(error)")
            throw ExitCode(Self.storeUnavailableStatus)
        }
        let fleetQueue = try openFleetQueue(logger: logger)
        let slots = fleetSlots ?? maxConcurrentDownloads ?? 5
        if fleetQueue != nil {
            // The service's share of the fleet: as many downloads as it holds leases.
            manager.maxDownloadCount = slots
        } else if let maxConcurrentDownloads {
            manager.maxDownloadCount = maxConcurrentDownloads
        }
        defer { fleetQueue?.close() }
        for url in manager.restoredAfterForcedQuit {
            logger.info("recovered after a forced quit", metadata: ["url": "\(url)"])
        }

        var rpcConfiguration = RPCServiceConfiguration(
            host: listenAll ? "0.0.0.0" : "127.0.0.1", port: port,
            secret: token.flatMap { $0.isEmpty ? nil : SecretToken($0) }, allowOriginAll: allowOriginAll,
            version: peregrineVersion,
            // In a fleet, what this service downloads is what it holds leases for: tasks left
            // in its store by an earlier run are the queue's to hand out, not this service's.
            resumesUnfinishedDownloads: fleetQueue == nil, requestTable: requests,
            onListening: { [logger] port in
                // Tests and scripts read the port from this line when they asked for port 0 (a
                // log line of its own when the log is JSON).
                if format == .json {
                    logger.notice("peregrine daemon listening on port \(port)", metadata: ["port": "\(port)"])
                } else {
                    printError("peregrine daemon listening on port \(port)")
                }
                SystemdNotifier.notify("READY=1\nSTATUS=listening on port \(port)")
            },
            onStopping: { SystemdNotifier.notify("STOPPING=1") })
        rpcConfiguration.fleetQueue = fleetQueue
        let service = RPCService(manager: manager, configuration: rpcConfiguration, logger: logger)
        if let settings, let file = settings.file {
            logger.info("options read", metadata: ["file": "\(file)"])
            var status = stat()
            if settings.fileHoldsSecret, stat(file, &status) == 0, status.st_mode & 0o077 != 0 {
                logger.warning("\(file) holds a secret and others may read it (chmod 600 \(file))")
            }
            for name in settings.ignored {
                logger.notice("\(name) in \(file) has no effect: peregrined always serves JSON-RPC and never forks")
            }
        }
        do throws(RPCError) {
            try service.dispatcher.applyGlobalOptions(settings?.globalOptions ?? [:])
        } catch {
            printError("\(settings?.file ?? "the configuration file"): \(error.message)")
            throw ExitCode(64)
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: HeapTrimmer(), successTerminationBehavior: .ignore),
            .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup),
        ]
        let worker: FleetWorker?
        // Last in the group, so first to stop: it hands its leases back before the manager stops.
        if let fleetQueue {
            // Each claimed task takes its GID and request options in this service before it
            // starts, and opens at most --split connections (what its claim counted).
            let dispatcher = service.dispatcher
            let fleetWorker = FleetWorker(
                manager: manager, queue: fleetQueue,
                configuration: FleetWorker.Configuration(slots: slots, maxConnectionsPerTask: split, prefetch: slots),
                logger: logger, taskMetadata: { ["gid": "\(dispatcher.gid(ofFleetTask: $0))"] },
                metricsFactory: dispatcher.metrics.factory,
                willStart: { dispatcher.adoptFleetTask($0) })
            services.append(
                .init(service: FleetService(worker: fleetWorker), successTerminationBehavior: .gracefullyShutdownGroup))
            worker = fleetWorker
        } else {
            worker = nil
        }
        // The signals stop the group through this service's end (after a drain, when asked).
        let dispatcher = service.dispatcher
        let engine = manager.engine
        services.insert(
            .init(
                service: StopSignals(
                    drainTimeout: .milliseconds(Int64((drainTimeout * 1000).rounded())), logger: logger,
                    drain: {
                        dispatcher.beginDrain()
                        worker?.drain()
                        while !Task.isCancelled {
                            if engine.downloadingTaskCount == 0, worker?.isDrained ?? true { return }
                            try? await Task.sleep(for: .milliseconds(100))
                        }
                    }),
                successTerminationBehavior: .gracefullyShutdownGroup),
            at: 1)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: services, logger: logger))
        try await group.run()
    }
}

extension DaemonCommand {
    /// The fleet's shared queue of `--store` (or `PEREGRINE_STORE`), nil without one. A
    /// database that cannot be reached ends the program with one line naming it with its
    /// password redacted.
    func openFleetQueue(logger: Logger) throws -> PostgresClaimingQueue? {
        guard let connectionString = store.flatMap({ $0.isEmpty ? nil : $0 }) else { return nil }
        let queue: PostgresClaimingQueue
        do throws(StoreError) {
            var queueLogger = logger
            queueLogger.logLevel = verbose ? .debug : .warning
            queue = try PostgresClaimingQueue(
                queue: queueName, connectionString: connectionString,
                leaseDuration: .milliseconds(Int64((leaseSeconds * 1000).rounded())), connectionsPerTask: split,
                logger: queueLogger)
            try applyFleetLimits(to: queue, logger: logger)
        } catch {
            // StoreError's text names the location with its password redacted.
            let line = "cannot open the fleet's queue \(queueName): \(error)"
            printError(line.split(whereSeparator: \.isNewline).joined(separator: " "))
            throw ExitCode.failure
        }
        logger.info(
            "one service of a fleet",
            metadata: ["queue": "\(queueName)", "owner": "\(queue.owner)", "store": "\(queue.location)"])
        return queue
    }

    /// Writes the limits given on the command line into the queue (the others stay as the
    /// fleet has them) and logs the fleet's limits.
    private func applyFleetLimits(to queue: PostgresClaimingQueue, logger: Logger) throws(StoreError) {
        var limits = try queue.limits()
        if fleetMaxDownloads != nil || fleetMaxConnectionsPerOrigin != nil {
            if let fleetMaxDownloads { limits.maxDownloads = fleetMaxDownloads == 0 ? nil : fleetMaxDownloads }
            if let fleetMaxConnectionsPerOrigin {
                limits.maxConnectionsPerOrigin = fleetMaxConnectionsPerOrigin == 0 ? nil : fleetMaxConnectionsPerOrigin
            }
            try queue.setLimits(limits)
        }
        logger.info("the fleet's limits: \(limits)")
        if let perOrigin = limits.maxConnectionsPerOrigin, split > perOrigin {
            logger.warning(
                "--split \(split) exceeds the fleet's \(perOrigin) connections per origin: this service claims no task")
        }
    }
}

/// `sd_notify(3)` without libsystemd: one datagram to `$NOTIFY_SOCKET`, when it is set.
enum SystemdNotifier {
    static func notify(_ state: String) {
        guard var path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !path.isEmpty else { return }
        // An abstract socket is written with a leading '@'.
        let abstract = path.hasPrefix("@")
        if abstract { path.removeFirst() }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count + (abstract ? 1 : 0) < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.baseAddress!.advanced(by: abstract ? 1 : 0).copyMemory(from: bytes, byteCount: bytes.count)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 1 : 0))
        let message = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, socketAddress, length) }
            }
        }
    }
}

/// The version `--version` prints: the `peregrine` command's.
let peregrineVersion = "0.2.0"

/// Prints `peregrined: TEXT` on standard error, unbuffered.
func printError(_ text: String) {
    var line = "peregrined: \(text)\n"
    line.withUTF8 { bytes in
        var done = 0
        while done < bytes.count {
            let written = write(STDERR_FILENO, bytes.baseAddress! + done, bytes.count - done)
            if written <= 0 { return }
            done += written
        }
    }
}

#if canImport(Glibc)
    // glibc's `mallopt` and its parameters (<malloc.h>, which the Glibc module does not bring).
    @_silgen_name("mallopt") private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
    /// `M_TRIM_THRESHOLD`.
    private let mallocTrimThreshold: Int32 = -1
    /// `M_ARENA_MAX`.
    private let mallocArenaMax: Int32 = -8
#endif
