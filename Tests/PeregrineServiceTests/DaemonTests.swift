import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `peregrine daemon` as a process: the aria2p compatibility script against it and against
/// `aria2c --enable-rpc` (Debian's aria2), and a SIGKILL in the middle of a download.
@Suite(.serialized) struct DaemonTests {
    static var peregrine: String? { ChildProcess.builtProduct(named: "peregrine") }

    /// The repository root (this file is Tests/PeregrineServiceTests/DaemonTests.swift).
    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    enum Server: String, CaseIterable, CustomTestStringConvertible {
        case peregrine, aria2c, fleet
        var testDescription: String { rawValue }
    }

    /// The same aria2p script passes against both servers: Peregrine's service is driven
    /// unchanged by a client written for aria2. A service of a fleet (its own PostgreSQL) runs
    /// the script's download into a folder (`dir`), as AriaNg adds them.
    @Test(arguments: Server.allCases)
    func theAria2pScriptPasses(against server: Server) async throws {
        let python = try ChildProcess.executable(named: "python3", debianPackage: "python3")
        let check = try await ChildProcess.run(python, ["-c", "import aria2p"], allowFailure: true)
        try #require(check.status == 0, "aria2p is missing: pip install aria2p==0.12.3 (Scripts/test.sh does)")
        let (nginx, scratch) = try await ServiceRig.makeServer()
        defer {
            nginx.stop()
            scratch.remove()
        }
        var files: [String] = []
        for index in 1...3 {
            let digest = try serve(nginx, "/files/s\(index).bin", count: 150_000 * index + 7, seed: UInt64(20 + index))
            files += ["--file", "files/s\(index).bin=\(digest)"]
        }
        // Throttled to 200 KB/s: 8 MB stay in flight long enough to pause, unpause and remove.
        try serve(nginx, "/slow/big.bin", count: 8 << 20, seed: 30)
        let secret = "compat-\(UInt32.random(in: 0...UInt32.max))"
        let downloads = scratch.path("downloads-\(server.rawValue)")
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
        let daemon: DaemonProcess
        var postgres: PostgresServer?
        defer { postgres?.stop() }
        switch server {
        case .peregrine:
            let tool = try #require(Self.peregrine, "no peregrine binary beside the tests: build with --build-tests")
            daemon = try await DaemonProcess(
                tool,
                [
                    "daemon", "--dir", downloads, "--state", scratch.path("state"), "--rpc-listen-port", "{port}",
                    "--rpc-secret", secret,
                ], log: scratch.path("daemon.log"))
        case .fleet:
            let tool = try #require(Self.peregrine, "no peregrine binary beside the tests: build with --build-tests")
            let database = try PostgresServer()
            postgres = database
            try await database.start()
            try await database.createDatabase("compat")
            daemon = try await DaemonProcess(
                tool,
                [
                    "daemon", "--dir", downloads, "--state", scratch.path("state"), "--rpc-listen-port", "{port}",
                    "--rpc-secret", secret,
                ], log: scratch.path("daemon.log"),
                environment: ["PEREGRINE_STORE": database.connectionString(database: "compat")])
        case .aria2c:
            let aria2c = try ChildProcess.executable(named: "aria2c", debianPackage: "aria2")
            daemon = try await DaemonProcess(
                aria2c,
                [
                    "--enable-rpc", "--rpc-listen-port={port}", "--rpc-secret=\(secret)", "--dir=\(downloads)",
                    "--no-conf", "--quiet", "--max-concurrent-downloads=5",
                ], log: scratch.path("aria2c.log"))
        }
        defer { daemon.stop() }
        let result = try await ChildProcess.run(
            python,
            [
                Self.repository + "/Tests/RPC/aria2p_compat.py", "--port", String(daemon.port), "--secret", secret,
                "--base-url", nginx.httpBaseURL, "--big", "slow/big.bin",
                "--scenario", server == .fleet ? "dir" : "full",
            ] + files, allowFailure: true)
        print(result.text)
        #expect(result.status == 0, "\(result.text)\n\(result.errorText)\n\(daemon.logText)")
        #expect(result.text.hasSuffix("PASS\n"))
    }

    /// The secret never shows in the process title (`ps`, /proc/PID/cmdline), given on the
    /// command line as `--rpc-secret S` or `--rpc-secret=S`, nor a password in `--store`'s URL;
    /// `--rpc-secret-file` reads it from a file instead; both with the secret still required.
    @Test func theSecretIsMaskedInTheProcessTitleOrReadFromAFile() async throws {
        let tool = try #require(Self.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let scratch = try TemporaryDirectory(prefix: "peregrine-secret")
        defer { scratch.remove() }
        func title(_ daemon: DaemonProcess) -> String {
            let bytes = FileManager.default.contents(atPath: "/proc/\(daemon.process.processIdentifier)/cmdline")
            return String(decoding: bytes ?? Data(), as: UTF8.self).replacingOccurrences(of: "\0", with: " ")
        }
        func answers(_ daemon: DaemonProcess, _ token: String) async throws -> Bool {
            try await daemon.call("aria2.getVersion", "\"token:\(token)\"")["result"] != nil
        }
        let base = ["daemon", "--dir", scratch.path("downloads"), "--rpc-listen-port", "{port}"]
        for form in [["--rpc-secret", "s3cr3t-in-argv"], ["--rpc-secret=s3cr3t-in-argv"]] {
            let daemon = try await DaemonProcess(
                tool, base + ["--state", scratch.path("state-\(form.count)")] + form, log: scratch.path("a.log"))
            defer { daemon.stop() }
            #expect(title(daemon).contains("--rpc-secret"), "\(title(daemon))")
            #expect(!title(daemon).contains("s3cr3t"), "\(title(daemon))")
            #expect(try await answers(daemon, "s3cr3t-in-argv"))
            #expect(try await !answers(daemon, "wrong"))
        }

        let file = scratch.path("secret")
        try "from-a-file\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o600)
        let fromFile = try await DaemonProcess(
            tool, base + ["--state", scratch.path("state-file"), "--rpc-secret-file", file], log: scratch.path("b.log"))
        defer { fromFile.stop() }
        #expect(try await answers(fromFile, "from-a-file"))
        #expect(try await !answers(fromFile, "wrong"))
        #expect(!title(fromFile).contains("from-a-file"))

        let missing = try await ChildProcess.run(
            tool,
            base.map { $0 == "{port}" ? "0" : $0 } + [
                "--state", scratch.path("s"), "--rpc-secret-file", "/nonexistent",
            ],
            allowFailure: true)
        #expect(missing.status == 64 && missing.errorText.contains("secret file"), "\(missing.errorText)")
    }

    /// Options from a configuration file in aria2's format (`--conf-path`) and from the
    /// environment (`PEREGRINE_…`), the command line over the environment over the file; aria2's
    /// own options of the file applied as `changeGlobalOption` would; a bad line or value refused
    /// with its place, before anything starts.
    @Test func optionsComeFromTheCommandLineTheEnvironmentAndAFileInThatOrder() async throws {
        let tool = try #require(Self.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let scratch = try TemporaryDirectory(prefix: "peregrine-settings")
        defer { scratch.remove() }
        let file = scratch.path("peregrined.conf")
        try """
        # as aria2 reads it
        dir = \(scratch.path("from-file"))
        state=\(scratch.path("state"))
        rpc-listen-port=1
        rpc-secret=file-secret
        max-concurrent-downloads=3

        max-overall-download-limit=1M
        user-agent=FromFile/1
        enable-rpc=true
        """.write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o600)
        let daemon = try await DaemonProcess(
            tool,
            ["daemon", "--conf-path", file, "--rpc-listen-port", "{port}", "--max-concurrent-downloads", "7"],
            log: scratch.path("daemon.log"),
            environment: ["PEREGRINE_RPC_SECRET": "env-secret", "PEREGRINE_MAX_CONCURRENT_DOWNLOADS": "4"])
        defer { daemon.stop() }
        // The environment's secret over the file's; the command line's limit over both.
        #expect(try await daemon.call("aria2.getVersion", "\"token:file-secret\"")["error"] != nil)
        let answer = try await daemon.call("aria2.getGlobalOption", "\"token:env-secret\"")
        let options = try #require(answer["result"] as? [String: String], "\(answer)")
        #expect(options["max-concurrent-downloads"] == "7", "\(options)")
        #expect(options["dir"] == scratch.path("from-file"), "\(options)")
        #expect(options["max-overall-download-limit"] == "1048576", "\(options)")
        #expect(options["user-agent"] == "FromFile/1", "\(options)")
        #expect(daemon.logText.contains("enable-rpc in \(file) has no effect"), "\(daemon.logText)")
        #expect(!daemon.logText.contains("secret"), "\(daemon.logText)")
        #expect(await daemon.signal(SIGTERM) == 0)

        // Refused with the place and nothing started: an unknown name, a value aria2 refuses, a
        // switch that is not true or false.
        func refusal(_ lines: String, environment: [String: String] = [:]) async throws -> (Int32, String) {
            let bad = scratch.path("bad.conf")
            try lines.write(toFile: bad, atomically: true, encoding: .utf8)
            let run = try await ChildProcess.run(
                tool, ["daemon", "--conf-path", bad, "--rpc-listen-port", "0"], environment: environment,
                allowFailure: true)
            return (run.status, run.errorText)
        }
        let base = "dir=\(scratch.path("d"))\nstate=\(scratch.path("s"))\n"
        let unknown = try await refusal(base + "no-such-option=1\n")
        #expect(unknown.0 == 64 && unknown.1.contains("bad.conf:3: unknown option 'no-such-option'"), "\(unknown.1)")
        let badValue = try await refusal(base + "max-overall-download-limit=lots\n")
        #expect(badValue.0 == 64 && badValue.1.contains("max-overall-download-limit"), "\(badValue.1)")
        let badSwitch = try await refusal(base, environment: ["PEREGRINE_RPC_LISTEN_ALL": "maybe"])
        #expect(badSwitch.0 == 64 && badSwitch.1.contains("PEREGRINE_RPC_LISTEN_ALL"), "\(badSwitch.1)")
        let noEquals = try await refusal(base + "just-a-word\n")
        #expect(noEquals.0 == 64 && noEquals.1.contains("bad.conf:3: expected name=value"), "\(noEquals.1)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("s")), "a refused start opened its store")
    }

    /// `--log-format json`: every line on standard error is one JSON object with the time, the
    /// level, the logger's label and the message; a download's failure names its URL.
    @Test func logLinesAreJSONObjectsWhenAsked() async throws {
        let tool = try #require(Self.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let scratch = try TemporaryDirectory(prefix: "peregrine-json-log")
        defer { scratch.remove() }
        let daemon = try await DaemonProcess(
            tool,
            [
                "daemon", "--dir", scratch.path("downloads"), "--state", scratch.path("state"), "--rpc-listen-port",
                "{port}", "--log-format", "json",
            ], log: scratch.path("daemon.log"))
        defer { daemon.stop() }
        // A download that fails at once (nothing listens on port 9), so that the manager logs.
        _ = try await daemon.call("aria2.addUri", "[\"http://127.0.0.1:9/unreachable.bin\"], {\"max-tries\":\"1\"}")
        let deadline = ContinuousClock.now + .seconds(60)
        while !daemon.logText.contains("unreachable.bin"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(await daemon.signal(SIGTERM) == 0)
        let lines = daemon.logText.split(separator: "\n")
        #expect(lines.count >= 2, "\(daemon.logText)")
        for line in lines {
            let object = try #require(
                try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
            #expect(object["level"] is String && object["message"] is String && object["label"] is String, "\(line)")
            #expect((object["time"] as? String)?.hasSuffix("Z") == true, "\(line)")
        }
        let failure = lines.first { $0.contains("unreachable.bin") }
        #expect(failure.map { $0.contains("\"metadata\"") } == true, "\(daemon.logText)")
        let usage = try await ChildProcess.run(tool, ["daemon", "--log-format", "xml"], allowFailure: true)
        #expect(usage.status == 64, "\(usage.errorText)")
    }

    /// kill -9 (or SIGTERM, a graceful stop) in the middle of a download; started again, the
    /// daemon has the task back and continues it with a Range request to the right bytes.
    @Test(arguments: [SIGKILL, SIGTERM])
    func aStoppedDaemonResumesItsDownloadWithRange(signal: Int32) async throws {
        let tool = try #require(Self.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let (nginx, scratch) = try await ServiceRig.makeServer()
        defer {
            nginx.stop()
            scratch.remove()
        }
        let digest = try serve(nginx, "/slow/big.bin", count: 3 << 19, seed: 40)
        let url = nginx.httpURL("/slow/big.bin")
        let arguments = [
            "daemon", "--dir", scratch.path("downloads"), "--state", scratch.path("state"), "--rpc-listen-port",
            "{port}",
        ]
        let first = try await DaemonProcess(tool, arguments, log: scratch.path("first.log"))
        // In a folder of the root, which the restart keeps.
        let added = try await first.call("aria2.addUri", "[\"\(url)\"], {\"dir\":\"kept/folder\"}")
        let gid = try #require(added["result"] as? String, "\(added)")
        // Killed once the store holds a resume record past byte 0 (a checkpoint happened): the
        // restart must then continue from there.
        let state = scratch.path("state")
        let checkpointed = try await onOwnThread { () -> Bool in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: state)) ?? [] {
                    let text = (try? String(contentsOfFile: state + "/" + name, encoding: .utf8)) ?? ""
                    if text.range(of: #""resume":\{"offset":[1-9]"#, options: .regularExpression) != nil { return true }
                }
                usleep(20_000)
            }
            return false
        }
        try #require(checkpointed, "no resume record was stored: \(first.logText)")
        #expect(await first.signal(signal) == (signal == SIGKILL ? SIGKILL : 0), "\(first.logText)")
        // The bytes of the partial file once the daemon is gone.
        let downloads = scratch.path("downloads")
        let partial = ((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []).compactMap {
            name -> Int64? in
            guard name.hasPrefix(".") else { return nil }
            return (try? FileManager.default.attributesOfItem(atPath: downloads + "/" + name)[.size] as? NSNumber)?
                .int64Value
        }.max()

        let second = try await DaemonProcess(tool, arguments, log: scratch.path("second.log"))
        defer { second.stop() }
        let path = try await onOwnThread { () -> String? in
            let deadline = Date().addingTimeInterval(90)
            while Date() < deadline {
                let body =
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"aria2.tellStatus\",\"params\":[\"\(gid)\"]}"
                if let text = try? RPCTestClient(port: second.port).post(body).body,
                    let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                    let status = object["result"] as? [String: Any]
                {
                    if status["status"] as? String == "complete" {
                        return ((status["files"] as? [[String: Any]])?.first?["path"] as? String)
                    }
                    if status["status"] as? String == "error" { return nil }
                } else {
                    return nil
                }
                usleep(50_000)
            }
            return nil
        }
        let file = try #require(path, "the download did not complete after the restart: \(second.logText)")
        #expect(try fileSHA256(file) == digest)
        #expect(file.hasPrefix(scratch.path("downloads") + "/kept/folder/"), "\(file)")
        let requests = ((try? String(contentsOfFile: scratch.path("access.log"), encoding: .utf8)) ?? "")
            .split(separator: "\n").filter { $0.contains("\"GET /slow/big.bin ") }
        #expect(requests.count == 2, "\(requests)")
        #expect(requests.last?.contains("\" 206 ") == true, "the restart did not resume with Range: \(requests)")
        if signal == SIGTERM, let partial, let last = requests.last {
            // A graceful stop synced and recorded every byte it had: the restart asks for the rest
            // only (the combined log format: `"GET /path HTTP/1.1" STATUS BYTES`).
            let fields = last.split(separator: "\"")
            let sent = fields.count > 2 ? fields[2].split(separator: " ").dropFirst().first.flatMap { Int64($0) } : nil
            #expect(
                sent == Int64(3 << 19) - partial, "the restart asked for \(sent ?? -1) bytes, \(partial) were on disk")
        }
        // SIGTERM stops it gracefully.
        #expect(await second.signal(SIGTERM) == 0, "\(second.logText)")
    }

    /// A second daemon on the state of a running one is refused in one line that names the
    /// process holding the store, with status 75, never the usage text.
    @Test func aStoreHeldByAnotherProcessIsRefusedNamingItsPID() async throws {
        let tool = try #require(Self.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let scratch = try TemporaryDirectory(prefix: "peregrine-held-store")
        defer { scratch.remove() }
        let arguments = [
            "daemon", "--dir", scratch.path("downloads"), "--state", scratch.path("state"), "--rpc-listen-port",
            "{port}",
        ]
        let first = try await DaemonProcess(tool, arguments, log: scratch.path("first.log"))
        defer { first.stop() }
        let second = try await ChildProcess.run(
            tool, arguments.map { $0 == "{port}" ? "0" : $0 }, allowFailure: true)
        #expect(second.status == 75, "\(second.errorText)")
        let lines = second.errorText.split(separator: "\n")
        #expect(lines.count == 1, "\(second.errorText)")
        #expect(second.errorText.contains("process \(first.process.processIdentifier)"), "\(second.errorText)")
        #expect(!second.errorText.contains("Usage"), "\(second.errorText)")
        #expect(await first.signal(SIGTERM) == 0, "\(first.logText)")
    }

    /// `peregrine add|ls|pause|resume|rm` drive a running daemon, with `--json` output and
    /// exit statuses 0 (done), 1 (refused), 2 (unreachable).
    @Test func theCommandLineClientDrivesARunningDaemon() async throws {
        let tool = try #require(Self.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let (nginx, scratch) = try await ServiceRig.makeServer()
        defer {
            nginx.stop()
            scratch.remove()
        }
        let digest = try serve(nginx, "/c.bin", count: 90_001, seed: 50)
        let daemon = try await DaemonProcess(
            tool,
            [
                "daemon", "--dir", scratch.path("downloads"), "--state", scratch.path("state"), "--rpc-listen-port",
                "{port}", "--rpc-secret", "cli-secret",
            ], log: scratch.path("daemon.log"))
        defer { daemon.stop() }
        let rpc = ["--rpc", "http://127.0.0.1:\(daemon.port)/jsonrpc", "--rpc-secret", "cli-secret"]
        func peregrine(_ arguments: [String]) async throws -> ChildProcess.Output {
            try await ChildProcess.run(tool, arguments, allowFailure: true)
        }

        let added = try await peregrine(["add", nginx.httpURL("/c.bin"), "--json"] + rpc)
        #expect(added.status == 0, "\(added.errorText)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(added.text.utf8)) as? [String: String], "\(added.text)")
        let gid: String = try #require(object["gid"])
        #expect(object["url"] == nginx.httpURL("/c.bin"))
        let paused = try await peregrine(["add", nginx.httpURL("/slow/never.bin"), "--pause"] + rpc)
        let pausedGID = paused.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(paused.status == 0 && pausedGID.count == 16, "\(paused.text) \(paused.errorText)")

        // Listed until it is complete (bounded: 60 s).
        var line: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let listed = try await peregrine(["ls", "--json"] + rpc)
            #expect(listed.status == 0, "\(listed.errorText)")
            let lines = listed.text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(lines.count == 2)
            line = lines.first { $0["gid"] as? String == gid } ?? [:]
            if line["status"] as? String == "complete" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(line["status"] as? String == "complete", "\(line)")
        #expect(line["completedLength"] as? Int == 90_001)
        let path = try #require(line["path"] as? String)
        #expect(try fileSHA256(path) == digest)

        let resumed = try await peregrine(["resume", pausedGID] + rpc)
        #expect(resumed.status == 0 && resumed.text == "resumed \(pausedGID)\n", "\(resumed.errorText)")
        let refused = try await peregrine(["pause", "0123456789abcdef"] + rpc)
        #expect(refused.status == 1)
        #expect(refused.errorText.contains("GID 0123456789abcdef is not found"))
        let unauthorized = try await peregrine(["ls", "--rpc", "http://127.0.0.1:\(daemon.port)/jsonrpc"])
        #expect(unauthorized.status == 1 && unauthorized.errorText.contains("Unauthorized"))
        let removed = try await peregrine(["rm", gid, pausedGID] + rpc)
        #expect(removed.status == 0, "\(removed.errorText)")
        let empty = try await peregrine(["ls"] + rpc)
        #expect(empty.status == 0 && empty.text.isEmpty, "\(empty.text)")
        // The file of a forgotten result stays.
        #expect(try fileSHA256(path) == digest)
        daemon.stop()
        let unreachable = try await peregrine(["ls"] + rpc)
        #expect(unreachable.status == 2, "\(unreachable.errorText)")
    }

    /// `peregrine watch --json` prints the service's notifications as they come, and ends
    /// with the service.
    @Test func watchFollowsNotificationsUntilTheServiceStops() async throws {
        let tool = try #require(Self.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let (nginx, scratch) = try await ServiceRig.makeServer()
        defer {
            nginx.stop()
            scratch.remove()
        }
        try serve(nginx, "/w.bin", count: 64_000, seed: 60)
        let daemon = try await DaemonProcess(
            tool,
            [
                "daemon", "--dir", scratch.path("downloads"), "--state", scratch.path("state"), "--rpc-listen-port",
                "{port}", "--rpc-secret", "watch-secret",
            ], log: scratch.path("daemon.log"))
        defer { daemon.stop() }
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: tool)
        watch.arguments = [
            "watch", "--json", "--quiet", "--rpc", "http://127.0.0.1:\(daemon.port)/jsonrpc", "--rpc-secret",
            "watch-secret",
        ]
        let output = Pipe()
        watch.standardOutput = output
        watch.standardError = FileHandle.nullDevice
        try watch.run()
        // A bound: a watch that never prints is killed, which ends its output.
        let guardrail = Task {
            try await Task.sleep(for: .seconds(60))
            watch.terminate()
        }
        defer { guardrail.cancel() }
        // The watch's first line says it listens: add only then, so that no notification is missed.
        let reader = output.fileHandleForReading
        let first = try await onOwnThread { () -> String in
            var text = ""
            while !text.contains("\n") {
                let data = reader.availableData
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
            }
            return text
        }
        #expect(first == #"{"event":"connected"}"# + "\n")
        let added = try await daemon.call("aria2.addUri", "\"token:watch-secret\", [\"\(nginx.httpURL("/w.bin"))\"]")
        let gid = try #require(added["result"] as? String, "\(added)")
        let lines = try await onOwnThread { () -> [String] in
            var text = ""
            while !text.contains("\"event\":\"complete\"") {
                let data = reader.availableData
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
            }
            return text.split(separator: "\n").map(String.init)
        }
        let complete = try #require(lines.first { $0.contains("\"complete\"") }, "\(lines)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(complete.utf8)) as? [String: String])
        #expect(object["gid"] == gid)
        #expect(object["path"] == scratch.path("downloads") + "/w.bin")
        #expect(!lines.contains { $0.contains("progress") }, "--quiet printed progress: \(lines)")
        #expect(await daemon.signal(SIGTERM) == 0)
        let status = try await onOwnThread { () -> Int32 in
            watch.waitUntilExit()
            return watch.terminationStatus
        }
        #expect(status == 0)
    }

    /// Under systemd (`Type=notify`) the daemon reports READY=1 once it listens and
    /// STOPPING=1 when SIGTERM begins its shutdown.
    @Test func theDaemonNotifiesSystemdOfReadinessAndStopping() async throws {
        let tool = try #require(Self.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let scratch = try TemporaryDirectory(prefix: "peregrine-notify")
        defer { scratch.remove() }
        let path = scratch.path("notify.sock")
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let daemon = try await DaemonProcess(
            tool,
            [
                "daemon", "--dir", scratch.path("downloads"), "--state", scratch.path("state"), "--rpc-listen-port",
                "{port}",
            ],
            log: scratch.path("daemon.log"), environment: ["NOTIFY_SOCKET": path])
        defer { daemon.stop() }
        func receive() async throws -> String {
            try await onOwnThread { () -> String in
                var bytes = [UInt8](repeating: 0, count: 4096)
                var count: Int
                repeat {
                    count = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                } while count < 0 && errno == EINTR  // a signal interrupts a socket with a timeout
                return count > 0 ? String(decoding: bytes[0..<count], as: UTF8.self) : ""
            }
        }
        #expect(try await receive() == "READY=1\nSTATUS=listening on port \(daemon.port)")
        #expect(await daemon.signal(SIGTERM) == 0)
        #expect(try await receive() == "STOPPING=1")
    }

    @discardableResult
    private func serve(_ server: NginxServer, _ path: String, count: Int, seed: UInt64) throws -> String {
        var random = SeededRandom(seed: seed)
        let bytes = Data(random.bytes(count))
        let file = server.documentPath(path)
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: file))
        return try fileSHA256(file)
    }
}
