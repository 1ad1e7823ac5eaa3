import Foundation
import PeregrineMockTransport
import TestSupport
import Testing

/// `peregrine get` against a real nginx: reruns continue (SIGINT, SIGTERM, SIGKILL) with a Range
/// request and the right bytes, a complete file is not fetched again, same-name files keep their
/// own bytes in one process and across processes, a bad URL fails alone, credentials in URLs
/// appear in no output and no file, `--json` parses, and each exit status.
@Suite struct GetCommandTests {
    /// The `peregrine` binary built beside the tests.
    static var executable: String? { ChildProcess.builtProduct(named: "peregrine") }

    /// A server with an access log, a throttled `/slow/` alias and a location that answers 401.
    struct Rig {
        let server: NginxServer
        let scratch: TemporaryDirectory
        let tool: String

        var accessLog: String { scratch.path("access.log") }
        var downloads: String { scratch.path("downloads") }
        var state: String { scratch.path("state") }

        static func start() async throws -> Rig {
            let tool = try #require(executable, "no peregrine binary beside the tests: build with --build-tests")
            let scratch = try TemporaryDirectory(prefix: "peregrine-get")
            try "bob:{PLAIN}s3cret-netrc\n".write(toFile: scratch.path("htpasswd"), atomically: true, encoding: .utf8)
            let server = try NginxServer(
                .init(extraDirectives: [
                    "access_log \(scratch.path("access.log"));",
                    // limit_rate acts between sendfile calls (2 MiB each by default): finer steps.
                    "sendfile_max_chunk 32k;",
                    "location /slow/ { limit_rate 1m; }",
                    "location = /private/f.bin { return 401; }",
                    "location = /loop { return 302 /loop; }",
                    "location /basic/ { auth_basic \"netrc\"; auth_basic_user_file \(scratch.path("htpasswd")); }",
                    #"location = /echo { return 200 "$http_x_token|$http_user_agent|$http_referer"; }"#,
                    #"location = /login { add_header Set-Cookie "session=abc123; Path=/"; return 302 /cookie/c.bin; }"#,
                    #"location /cookie/ { if ($cookie_session != "abc123") { return 403; } }"#,
                ]))
            try await server.start()
            return Rig(server: server, scratch: scratch, tool: tool)
        }

        func stop() {
            server.stop()
            scratch.remove()
        }

        /// Serves `count` bytes made from `seed` at `path`; returns their SHA-256.
        @discardableResult
        func serve(_ path: String, count: Int, seed: UInt64) throws -> String {
            var random = SeededRandom(seed: seed)
            let bytes = Data(random.bytes(count))
            let file = server.documentPath(path)
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try bytes.write(to: URL(fileURLWithPath: file))
            return Self.sha256(bytes)
        }

        static func sha256(_ data: Data) -> String {
            // SHA-256 through the system's `sha256sum`, to stay independent of the code under test.
            let path = NSTemporaryDirectory() + "peregrine-sha-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: path) }
            try? data.write(to: URL(fileURLWithPath: path))
            return (try? fileSHA256(path)) ?? ""
        }

        static func fileSHA256(_ path: String) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
            process.arguments = [path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(String(decoding: output, as: UTF8.self).prefix(64))
        }

        func get(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildProcess.Output {
            try await ChildProcess.run(
                tool, ["get", "-d", downloads, "--state-dir", state, "--quiet"] + arguments,
                environment: environment, allowFailure: true)
        }

        func requests(for path: String) -> [Substring] {
            ((try? String(contentsOfFile: accessLog, encoding: .utf8)) ?? "").split(separator: "\n").filter {
                $0.contains("\"GET \(path) ")
            }
        }

        var visibleFiles: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []).filter { !$0.hasPrefix(".") }
                .sorted()
        }
    }

    @Test(arguments: [SIGINT, SIGTERM, SIGKILL])
    func anInterruptedRunContinuesWithRangeWhenRunAgain(signal: Int32) async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let digest = try rig.serve("/slow/big.bin", count: 12 << 20, seed: 1)
        let url = rig.server.httpURL("/slow/big.bin")

        let process = Process()
        process.executableURL = URL(fileURLWithPath: rig.tool)
        process.arguments = ["get", "-d", rig.downloads, "--state-dir", rig.state, "--quiet", url]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Killed once 1.5 MiB are on disk: at 1 MiB/s, after the first checkpoint (the partial
        // file is synced and its offset recorded every second), and about ten seconds before the
        // end, so that a loaded machine (the whole suite runs in parallel on two cores) cannot let
        // the download finish first.
        // The signal is sent from the polling thread itself: waiting for the test's task to be
        // scheduled again first can take seconds on a loaded machine, long enough to finish.
        let grown = await onOwnThread { () -> Bool in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, process.isRunning {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: rig.downloads)) ?? []
                for name in names where name.hasSuffix(".part") {
                    let size = (try? FileManager.default.attributesOfItem(atPath: rig.downloads + "/" + name)[.size])
                    if let size = size as? NSNumber, size.int64Value > 3 << 19 {
                        kill(process.processIdentifier, signal)
                        return true
                    }
                }
                usleep(5_000)
            }
            return false
        }
        try #require(grown, "the download never got 1.5 MiB in")
        await onOwnThread { process.waitUntilExit() }
        let expectedStatus: Int32 = signal == SIGINT ? 130 : signal == SIGTERM ? 143 : SIGKILL
        #expect(process.terminationStatus == expectedStatus)
        #expect(rig.visibleFiles.isEmpty, "a partial file took the name")

        let second = try await rig.get([url])
        #expect(second.status == 0, "\(second.errorText)")
        #expect(second.text == rig.downloads + "/big.bin\n")
        #expect(try Rig.fileSHA256(rig.downloads + "/big.bin") == digest)
        let requests = rig.requests(for: "/slow/big.bin")
        #expect(requests.count == 2)
        #expect(requests.last?.contains("\" 206 ") == true, "the rerun did not resume: \(requests)")
        // Nothing but the file is left in the directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: rig.downloads) == ["big.bin"])
    }

    /// `--split 4` on a server that limits each connection: the file comes in pieces over several
    /// connections; killed with SIGKILL, the rerun continues every piece from its own synced
    /// offset (the access log shows it re-sends little) and ends with the right SHA-256.
    @Test func aSplitDownloadKilledMidwayContinuesEveryPiece() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let size = 16 << 20
        let digest = try rig.serve("/slow/split.bin", count: size, seed: 9)
        let url = rig.server.httpURL("/slow/split.bin")

        let process = Process()
        process.executableURL = URL(fileURLWithPath: rig.tool)
        process.arguments = [
            "get", "-d", rig.downloads, "--state-dir", rig.state, "--quiet", "--split", "4", "--min-split-size", "1M",
            // Without preallocation the allocated blocks count what was written (below).
            "--file-allocation", "none", url,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Killed once 5 MiB are on disk (allocated blocks: the pieces leave holes), after the
        // pieces' first checkpoints, and seconds before the end at 4 × 1 MiB/s.
        let grown = await onOwnThread { () -> Bool in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, process.isRunning {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: rig.downloads)) ?? []
                for name in names where name.hasSuffix(".part") {
                    var status = stat()
                    if stat(rig.downloads + "/" + name, &status) == 0, Int(status.st_blocks) * 512 > 5 << 20 {
                        // Killed from this thread, not after the test's task is scheduled again.
                        usleep(300_000)
                        kill(process.processIdentifier, SIGKILL)
                        return true
                    }
                }
                usleep(5_000)
            }
            return false
        }
        try #require(grown, "the download never got 5 MiB in")
        await onOwnThread { process.waitUntilExit() }
        // nginx logs a request when it notices the closed connection, which under limit_rate can
        // be after its next timer: wait for the four (bounded), or the rerun's count takes them.
        for _ in 0..<2_000 where rig.requests(for: "/slow/split.bin").count < 4 {
            try await Task.sleep(for: .milliseconds(5))
        }
        let first = rig.requests(for: "/slow/split.bin")
        #expect(first.count >= 4, "the first run did not split: \(first)")
        // Every request is for a piece, the first one's too (it learns the length).
        #expect(first.allSatisfy { $0.contains("\" 206 ") }, "\(first.joined(separator: "\n"))")

        let second = try await rig.get(["--split", "4", url])
        #expect(second.status == 0, "\(second.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/split.bin") == digest)
        #expect(try FileManager.default.contentsOfDirectory(atPath: rig.downloads) == ["split.bin"])
        // The combined log format: `"GET /path HTTP/1.1" STATUS BYTES`.
        let resent = rig.requests(for: "/slow/split.bin").dropFirst(first.count).reduce(0) { total, line in
            let fields = line.split(separator: "\"")
            let after = fields.count > 2 ? fields[2].split(separator: " ") : []
            return total + (after.count > 1 ? Int(after[1]) ?? size : size)
        }
        // More than 4 MiB were synced before the kill (1 s checkpoints, at 4 MiB/s): the rerun
        // sends at most what was missing.
        #expect(resent < size - (3 << 20), "the rerun re-sent \(resent) of \(size) bytes")
    }

    /// `--netrc-file` (and `-n` with `$NETRC`): the host's login answers the server's Basic
    /// challenge, the `default` entry for hosts without one; the password is never printed; a
    /// malformed file is a usage error naming its line.
    @Test func credentialsComeFromANetrcFile() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let digest = try rig.serve("/basic/n.bin", count: 20_000, seed: 81)
        let url = rig.server.httpURL("/basic/n.bin")
        let netrc = rig.scratch.path("netrc")
        try """
        # a comment
        machine example.com login alice password "not this one"
        machine 127.0.0.1
          login bob
          password s3cret-netrc
        macdef init
        cd /pub

        default login nobody password nothing
        """.write(toFile: netrc, atomically: true, encoding: .utf8)
        chmod(netrc, 0o600)
        // Refused first, then fetched by a rerun with another -o: the file takes the rerun's name.
        let without = try await rig.get([url, "--auth-over-http", "-o", "a.bin"])
        #expect(without.status == 4, "\(without.errorText)")
        let with = try await rig.get([url, "--netrc-file", netrc, "--auth-over-http", "-o", "b.bin"])
        #expect(with.status == 0, "\(with.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/b.bin") == digest)
        #expect(!FileManager.default.fileExists(atPath: rig.downloads + "/a.bin"))
        #expect(!(with.text + with.errorText).contains("s3cret"))

        let fallback = rig.scratch.path("netrc-default")
        try "default login bob password s3cret-netrc\n".write(toFile: fallback, atomically: true, encoding: .utf8)
        chmod(fallback, 0o600)
        let byDefault = try await rig.get(
            ["-n", url, "--auth-over-http", "-o", "c.bin"], environment: ["NETRC": fallback])
        #expect(byDefault.status == 0, "\(byDefault.errorText)")

        try "machine 127.0.0.1 login bob password\n".write(toFile: fallback, atomically: true, encoding: .utf8)
        let malformed = try await rig.get(["--netrc-file", fallback, url, "-o", "d.bin"])
        #expect(malformed.status == 64 && malformed.errorText.contains("line 1"), "\(malformed.errorText)")
        let missing = try await rig.get(["--netrc-file", rig.scratch.path("none"), url, "-o", "d.bin"])
        #expect(missing.status == 64 && missing.errorText.contains("netrc"), "\(missing.errorText)")
    }

    /// `-R`/`--remote-time`: the file's time is the server's `Last-Modified` (one connection
    /// and several); without it, the time of the download.
    @Test func remoteTimeGivesTheFileTheServersLastModified() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let stamp = Date(timeIntervalSince1970: 981_173_106)  // 2001-02-03 04:05:06 UTC
        for (name, size) in [("t1.bin", 10_000), ("t2.bin", 3 << 20), ("t3.bin", 10_000)] {
            try rig.serve("/\(name)", count: size, seed: 71)
            try FileManager.default.setAttributes(
                [.modificationDate: stamp], ofItemAtPath: rig.server.documentPath("/\(name)"))
        }
        func modified(_ name: String) throws -> Date? {
            try FileManager.default.attributesOfItem(atPath: rig.downloads + "/" + name)[.modificationDate] as? Date
        }
        let one = try await rig.get(["-R", rig.server.httpURL("/t1.bin")])
        #expect(one.status == 0, "\(one.errorText)")
        #expect(try modified("t1.bin") == stamp)
        let split = try await rig.get(["--remote-time", "-s", "4", "-k", "512k", rig.server.httpURL("/t2.bin")])
        #expect(split.status == 0, "\(split.errorText)")
        #expect(try modified("t2.bin") == stamp)
        #expect(rig.requests(for: "/t2.bin").count > 1, "not split")
        let plain = try await rig.get([rig.server.httpURL("/t3.bin")])
        #expect(plain.status == 0, "\(plain.errorText)")
        #expect(try modified("t3.bin").map { $0.timeIntervalSince(stamp) > 86_400 } == true)
    }

    /// `-N`/`--timestamping` (and aria2c's `--conditional-get`): a file here already is fetched
    /// again only when the server's copy is newer or of another size, then replaced (no
    /// `name (1)` copy) and given the server's time; an up-to-date one costs a HEAD, no GET.
    @Test func timestampingFetchesOnlyNewerFiles() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let older = Date(timeIntervalSince1970: 981_173_106)  // 2001-02-03 04:05:06 UTC
        let newer = Date(timeIntervalSince1970: 1_012_709_106)  // a year later
        func serve(_ name: String, seed: UInt64, at stamp: Date) throws -> String {
            let digest = try rig.serve("/\(name)", count: 20_000, seed: seed)
            try FileManager.default.setAttributes(
                [.modificationDate: stamp], ofItemAtPath: rig.server.documentPath("/\(name)"))
            return digest
        }
        func modified(_ name: String) throws -> Date? {
            try FileManager.default.attributesOfItem(atPath: rig.downloads + "/" + name)[.modificationDate] as? Date
        }
        let url = rig.server.httpURL("/n1.bin")
        let first = try serve("n1.bin", seed: 81, at: older)
        let fetched = try await rig.get(["-N", url])
        #expect(fetched.status == 0, "\(fetched.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/n1.bin") == first)
        #expect(try modified("n1.bin") == older)

        let same = try await rig.get(["--timestamping", "--json", url])
        #expect(same.status == 0, "\(same.errorText)")
        #expect(same.text.contains(#""notModified":true"#), "\(same.text)")
        #expect(rig.requests(for: "/n1.bin").count == 1, "an up-to-date file was fetched again")

        let second = try serve("n1.bin", seed: 82, at: newer)
        let updated = try await rig.get(["--conditional-get", url])
        #expect(updated.status == 0, "\(updated.errorText)")
        #expect(rig.requests(for: "/n1.bin").count == 2)
        #expect(try Rig.fileSHA256(rig.downloads + "/n1.bin") == second)
        #expect(try modified("n1.bin") == newer)

        // Files the store never knew: an older one is replaced, a newer one of the same size kept
        // (nginx answers its If-Modified-Since with 200: the times and sizes decide).
        let replaced = try serve("n2.bin", seed: 83, at: newer)
        _ = try serve("n3.bin", seed: 84, at: older)
        let stale = Data(repeating: 1, count: 20_000)
        for (name, stamp) in [("n2.bin", older), ("n3.bin", newer)] {
            try stale.write(to: URL(fileURLWithPath: rig.downloads + "/" + name))
            try FileManager.default.setAttributes([.modificationDate: stamp], ofItemAtPath: rig.downloads + "/" + name)
        }
        let mixed = try await rig.get(["-N", rig.server.httpURL("/n2.bin"), rig.server.httpURL("/n3.bin")])
        #expect(mixed.status == 0, "\(mixed.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/n2.bin") == replaced)
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.downloads + "/n3.bin")) == stale)
        #expect(rig.requests(for: "/n3.bin").isEmpty, "a newer file here was fetched")
        #expect(rig.visibleFiles == ["n1.bin", "n2.bin", "n3.bin"])

        let refused = try await rig.get(["-N", "--no-clobber", url])
        #expect(refused.status == 64 && refused.errorText.contains("--no-clobber"), "\(refused.errorText)")
    }

    /// Cookies as wget, aria2c and curl users keep them: one a server sets (here on a redirect)
    /// goes with the next request, `--save-cookies` writes them in Netscape format for the owner
    /// only, and `--load-cookies`/`-b` sends a saved or hand-written file's cookies.
    @Test func cookiesRoundTripThroughNetscapeFiles() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let digest = try rig.serve("/cookie/c.bin", count: 30_000, seed: 91)
        let url = rig.server.httpURL("/cookie/c.bin")
        let refused = try await rig.get([url, "-o", "a.bin"])
        #expect(refused.status == 3, "\(refused.errorText)")

        let jar = rig.scratch.path("cookies.txt")
        let loggedIn = try await rig.get(["--save-cookies", jar, rig.server.httpURL("/login"), "-o", "b.bin"])
        #expect(loggedIn.status == 0, "\(loggedIn.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/b.bin") == digest)
        let saved = try String(contentsOfFile: jar, encoding: .utf8)
        #expect(saved.contains("Netscape HTTP Cookie File"), "\(saved)")
        #expect(saved.split(separator: "\n").contains { $0.hasSuffix("\tsession\tabc123") }, "\(saved)")
        let mode = try FileManager.default.attributesOfItem(atPath: jar)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let again = try await rig.get(["-b", jar, url, "-o", "c.bin"])
        #expect(again.status == 0, "\(again.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/c.bin") == digest)

        let handWritten = rig.scratch.path("hand.txt")
        try "# a comment\n127.0.0.1\tFALSE\t/cookie/\tFALSE\t0\tsession\tabc123\n".write(
            toFile: handWritten, atomically: true, encoding: .utf8)
        let byHand = try await rig.get(["--load-cookies", handWritten, url, "-o", "d.bin"])
        #expect(byHand.status == 0, "\(byHand.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/d.bin") == digest)

        let missing = try await rig.get(["--load-cookies", rig.scratch.path("none.txt"), url, "-o", "e.bin"])
        #expect(missing.status == 64 && missing.errorText.contains("cookie file"), "\(missing.errorText)")
        let nowhere = try await rig.get(["--save-cookies", rig.scratch.path("no/such/dir/jar"), url, "-o", "e.bin"])
        #expect(nowhere.status == 64 && nowhere.errorText.contains("cookie jar"), "\(nowhere.errorText)")
    }

    /// An empty file and a file shorter than the first request's range, with `--split`: nginx
    /// answers the range with 416 and with a short 206; both are placed whole.
    @Test func emptyAndSmallFilesAreFetchedWithSplit() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        try rig.serve("/e.bin", count: 0, seed: 1)
        let small = try rig.serve("/s.bin", count: 1_000, seed: 2)
        let output = try await rig.get(["-s", "8", rig.server.httpURL("/e.bin"), rig.server.httpURL("/s.bin")])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.downloads + "/e.bin")).isEmpty)
        #expect(try Rig.fileSHA256(rig.downloads + "/s.bin") == small)
        #expect(rig.visibleFiles == ["e.bin", "s.bin"])
    }

    /// `--split 16` asks each connection for its own piece at once, the first one's too: the
    /// server sends the file about once (at most 102 %), not the tails of halved requests that
    /// ran past their new ends, nor socket buffers' worth past the first piece on a fast link
    /// (unthrottled loopback).
    @Test(arguments: ["/slow/once.bin", "/once.bin"])
    func aSplitDownloadSendsTheFileAboutOnce(path: String) async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let size = 16 << 20
        let digest = try rig.serve(path, count: size, seed: 61)
        let output = try await rig.get(["--split", "16", "--min-split-size", "1M", rig.server.httpURL(path)])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/once.bin") == digest)
        // Every request is logged once nginx noticed its end (an aborted one at its next timer).
        var sent = 0
        for _ in 0..<400 {
            let lines = rig.requests(for: path)
            sent = lines.reduce(0) { total, line in
                let fields = line.split(separator: "\"")
                let after = fields.count > 2 ? fields[2].split(separator: " ") : []
                return total + (after.count > 1 ? Int(after[1]) ?? 0 : 0)
            }
            if sent >= size { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(rig.requests(for: path).count >= 8, "not split")
        #expect(sent <= size + size / 50, "the server sent \(sent) bytes for a file of \(size)")
    }

    /// A server that ignores `If-Range` answers the rerun's range with a 206 of the file's new
    /// version: the rerun starts over and places the new version whole, never the old version's
    /// first bytes followed by the new one's — with one connection or several.
    @Test(arguments: [[], ["--split", "4", "--min-split-size", "64k"]])
    func aRerunAgainstA206OfAnotherVersionPlacesTheNewVersionWhole(split: [String]) async throws {
        let tool = try #require(Self.executable, "no peregrine binary beside the tests: build with --build-tests")
        let routes = MockServer()
        let old = MockBody.generated(seed: 21, count: 1 << 20)
        let new = MockBody.generated(seed: 22, count: 1 << 20)
        routes.setRoute(
            MockRoute.file(old, entityTag: .fixed("\"A\"")).faulting(.dropAfter(bytes: 196_608)), for: "/v.bin")
        let server = LoopbackHTTPServer(serving: routes)
        try server.start()
        defer { server.stop() }
        let scratch = try TemporaryDirectory(prefix: "peregrine-get-splice")
        defer { scratch.remove() }
        let downloads = scratch.path("downloads")
        let arguments =
            ["get", "-d", downloads, "--state-dir", scratch.path("state"), "--quiet", "--retry", "0"] + split
            + [server.baseURL + "/v.bin"]

        let first = try await ChildProcess.run(tool, arguments, allowFailure: true)
        #expect(first.status == 2, "the dropped connection: \(first.errorText)")
        routes.setRoute(MockRoute.file(new, entityTag: .fixed("\"B\"")).faulting(.ignoreIfRange), for: "/v.bin")
        routes.clearRequests()
        let second = try await ChildProcess.run(tool, arguments, allowFailure: true)
        #expect(second.status == 0, "\(second.errorText)")
        let placed = FileManager.default.contents(atPath: downloads + "/v.bin").map { [UInt8]($0) }
        let isNewVersion = placed == new.allBytes
        #expect(isNewVersion, "the placed file is not the new version whole")
        let resumed = routes.requests(for: "/v.bin").filter { $0.headers["If-Range"] == "\"A\"" }
        #expect(!resumed.isEmpty, "the rerun never asked for the rest of the first version")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads) == ["v.bin"])
    }

    @Test func aRerunAfterSuccessFetchesNothingAndReportsTheFile() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let digest = try rig.serve("/a.bin", count: 200_000, seed: 2)
        let url = rig.server.httpURL("/a.bin")
        let first = try await rig.get([url, "--checksum", "sha256=\(digest)"])
        #expect(first.status == 0, "\(first.errorText)")
        let again = try await rig.get([url, "--checksum", "sha256=\(digest)"])
        #expect(again.status == 0, "\(again.errorText)")
        #expect(again.text == rig.downloads + "/a.bin\n")
        #expect(rig.requests(for: "/a.bin").count == 1)
        #expect(rig.visibleFiles == ["a.bin"])
        // A wrong checksum for the complete file is a mismatch, and the file stays.
        let wrong = try await rig.get([url, "--checksum", "sha256=\(String(repeating: "0", count: 64))"])
        #expect(wrong.status == 7, "\(wrong.errorText)")
        #expect(rig.visibleFiles == ["a.bin"])
        // --overwrite downloads it again, into the same name.
        let overwritten = try await rig.get([url, "--overwrite"])
        #expect(overwritten.status == 0, "\(overwritten.errorText)")
        #expect(rig.requests(for: "/a.bin").count == 2)
        #expect(rig.visibleFiles == ["a.bin"])
        // An overwrite that fails loses nothing: the file stays until a new one is complete.
        try FileManager.default.removeItem(atPath: rig.server.documentPath("/a.bin"))
        let failed = try await rig.get([url, "--overwrite", "--retry", "0"])
        #expect(failed.status == 3, "\(failed.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/a.bin") == digest)
    }

    /// A complete file cut short (or grown) after the run is fetched again by the next run, under
    /// its own name; an intact one is not.
    @Test func aRerunDownloadsAgainAFileThatChangedSizeSinceItWasPlaced() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let digest = try rig.serve("/t.bin", count: 300_000, seed: 5)
        let url = rig.server.httpURL("/t.bin")
        let first = try await rig.get([url])
        #expect(first.status == 0, "\(first.errorText)")
        #expect(truncate(rig.downloads + "/t.bin", 1000) == 0)
        let second = try await rig.get([url])
        #expect(second.status == 0, "\(second.errorText)")
        #expect(second.text == rig.downloads + "/t.bin\n")
        #expect(try Rig.fileSHA256(rig.downloads + "/t.bin") == digest)
        #expect(rig.requests(for: "/t.bin").count == 2, "the cut file was reported complete")
        #expect(try FileManager.default.contentsOfDirectory(atPath: rig.downloads) == ["t.bin"])
        let third = try await rig.get([url])
        #expect(third.status == 0, "\(third.errorText)")
        #expect(rig.requests(for: "/t.bin").count == 2, "an intact file was fetched again")
    }

    @Test func limitedSplitDownloadsArriveIntact() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let first = try rig.serve("/l1.bin", count: 3 << 20, seed: 31)
        let second = try rig.serve("/l2.bin", count: 3 << 20, seed: 32)
        let output = try await rig.get([
            rig.server.httpURL("/l1.bin"), rig.server.httpURL("/l2.bin"), "--limit-rate", "4M",
            "--max-overall-limit", "6M", "--split", "4", "--min-split-size", "512k",
        ])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/l1.bin") == first)
        #expect(try Rig.fileSHA256(rig.downloads + "/l2.bin") == second)
        // The task's limit is kept with it; 0 is no limit.
        let unlimited = try await rig.get([rig.server.httpURL("/l1.bin"), "--limit-rate", "0", "--overwrite"])
        #expect(unlimited.status == 0, "\(unlimited.errorText)")
    }

    /// `--mirror` and input lines with several URLs (issue 15 items 6 and 8): one file from its
    /// URL and its mirrors over the --split connections; an unreachable mirror is dropped and
    /// the file is still right; a mirror that is no URL fails its file alone; --mirror with
    /// several URLs is a usage error.
    @Test func aFileDownloadsFromItsMirrors() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let digest = try rig.serve("/slow/a/m.bin", count: 4 << 20, seed: 41)
        try rig.serve("/slow/b/m.bin", count: 4 << 20, seed: 41)
        let url = rig.server.httpURL("/slow/a/m.bin")
        let mirror = rig.server.httpURL("/slow/b/m.bin")
        let output = try await rig.get([
            url, "--mirror", mirror, "--mirror", "http://127.0.0.1:9/m.bin", "--split", "4", "--min-split-size",
            "512k", "--checksum", "sha256=\(digest)",
        ])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/m.bin") == digest)
        // Both servers sent pieces (closed ranges from the mirror).
        #expect(!rig.requests(for: "/slow/a/m.bin").isEmpty)
        #expect(!rig.requests(for: "/slow/b/m.bin").isEmpty, "the mirror was not used")

        // An input file: a line with a URL and its mirror, and a line whose mirror is no URL.
        let other = try rig.serve("/slow/c/n.bin", count: 2 << 20, seed: 42)
        try rig.serve("/slow/d/n.bin", count: 2 << 20, seed: 42)
        let list = rig.scratch.path("list.txt")
        try """
        \(rig.server.httpURL("/slow/c/n.bin"))\t\(rig.server.httpURL("/slow/d/n.bin")) out=n.bin
        \(rig.server.httpURL("/x.bin")) ftp://mirror.example/x.bin
        """.write(toFile: list, atomically: true, encoding: .utf8)
        let fromList = try await rig.get(["-i", list, "--split", "2", "--min-split-size", "512k"])
        #expect(fromList.status == 64, "\(fromList.errorText)")
        #expect(fromList.errorText.contains("mirror"), "\(fromList.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/n.bin") == other)
        #expect(!rig.requests(for: "/slow/d/n.bin").isEmpty, "the input line's mirror was not used")

        let usage = try await rig.get([url, mirror, "--mirror", mirror])
        #expect(usage.status == 64 && usage.errorText.contains("--mirror"), "\(usage.errorText)")
    }

    @Test func sameNameDownloadsKeepTheirOwnBytesInOneProcessAndAcrossProcesses() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        var digests: Set<String> = []
        var urls: [String] = []
        for index in 0..<6 {
            digests.insert(try rig.serve("/d\(index)/same.bin", count: 100_000 + index, seed: UInt64(10 + index)))
            urls.append(rig.server.httpURL("/d\(index)/same.bin"))
        }
        // Three in one process, three more in two processes at once, all into one directory.
        async let one = rig.get(Array(urls[0..<3]))
        async let two = rig.get([urls[3], urls[4]])
        async let three = rig.get([urls[5]])
        let outputs = try await [one, two, three]
        for output in outputs { #expect(output.status == 0, "\(output.errorText)") }
        let names = rig.visibleFiles
        #expect(names.count == 6, "\(names)")
        var found: Set<String> = []
        for name in names { found.insert(try Rig.fileSHA256(rig.downloads + "/" + name)) }
        #expect(found == digests, "a file was overwritten")
    }

    /// Two processes downloading into one directory at once, then a rerun of the second's file:
    /// the rerun finds it complete (no second GET, no copy under another name), and a second
    /// process interrupted beside a first one resumes on its rerun.
    @Test func twoProcessesInOneDirectoryThenARerunFetchNothingTwice() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let partials: @Sendable () -> [Int64] = {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: rig.downloads)) ?? []
            return names.filter { $0.hasSuffix(".part") }.compactMap { name in
                let attributes = try? FileManager.default.attributesOfItem(atPath: rig.downloads + "/" + name)
                return (attributes?[.size] as? NSNumber)?.int64Value
            }
        }
        /// Starts a run once the one before holds the directory's first store (its part file
        /// exists): the next run takes the next store.
        func afterFirstHoldsTheStore() async throws {
            for _ in 0..<6_000 where partials().isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        }
        let one = try rig.serve("/slow/good1.bin", count: 3 << 20, seed: 51)
        let two = try rig.serve("/slow/good2.bin", count: 1 << 20, seed: 52)
        async let first = rig.get([rig.server.httpURL("/slow/good1.bin")])
        try await afterFirstHoldsTheStore()
        let second = try await rig.get([rig.server.httpURL("/slow/good2.bin")])
        #expect(second.status == 0, "\(second.errorText)")
        #expect(try await first.status == 0)
        let rerun = try await rig.get([rig.server.httpURL("/slow/good2.bin")])
        #expect(rerun.status == 0, "\(rerun.errorText)")
        #expect(rig.requests(for: "/slow/good2.bin").count == 1, "the rerun fetched the file again")
        #expect(rig.visibleFiles == ["good1.bin", "good2.bin"])
        #expect(try Rig.fileSHA256(rig.downloads + "/good1.bin") == one)
        #expect(try Rig.fileSHA256(rig.downloads + "/good2.bin") == two)

        // The second process interrupted while the first still runs: its rerun (which opens the
        // first's store) resumes the partial file with Range, under the file's own name.
        try rig.serve("/slow/first.bin", count: 3 << 20, seed: 53)
        let big = try rig.serve("/slow/second.bin", count: 12 << 20, seed: 54)
        async let firstRun = rig.get([rig.server.httpURL("/slow/first.bin")])
        try await afterFirstHoldsTheStore()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: rig.tool)
        process.arguments = [
            "get", "-d", rig.downloads, "--state-dir", rig.state, "--quiet", rig.server.httpURL("/slow/second.bin"),
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Only the second's part file grows past 3.5 MiB (the first's file is 3 MiB).
        let grown = await onOwnThread { () -> Bool in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, process.isRunning {
                if partials().contains(where: { $0 > 7 << 19 }) {
                    kill(process.processIdentifier, SIGINT)
                    return true
                }
                usleep(5_000)
            }
            return false
        }
        try #require(grown, "the second download never got 3.5 MiB in")
        await onOwnThread { process.waitUntilExit() }
        #expect(process.terminationStatus == 130)
        #expect(try await firstRun.status == 0)
        let resumed = try await rig.get([rig.server.httpURL("/slow/second.bin")])
        #expect(resumed.status == 0, "\(resumed.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/second.bin") == big)
        let requests = rig.requests(for: "/slow/second.bin")
        #expect(requests.count == 2 && requests.last?.contains("\" 206 ") == true, "not resumed: \(requests)")
        #expect(rig.visibleFiles == ["first.bin", "good1.bin", "good2.bin", "second.bin"])
    }

    /// `-i <(…)`, as aria2c and wget users write it: the list comes through a pipe
    /// (`/dev/fd/63`) whose size nobody knows ahead.
    @Test func anInputListFromAProcessSubstitutionIsRead() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let sha = try rig.serve("/p.bin", count: 3000, seed: 11)
        let command = #"exec "$0" get -d "$1" --state-dir "$2" --quiet -i <(printf '%s out=piped.bin\n' "$3")"#
        let output = try await ChildProcess.run(
            "/bin/bash", ["-c", command, rig.tool, rig.downloads, rig.state, rig.server.httpURL("/p.bin")],
            allowFailure: true)
        #expect(output.status == 0, "\(output.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/piped.bin") == sha)
    }

    /// aria2's input files: a URL line, then indented option lines for it.
    @Test func anAria2InputFileWithOptionLinesIsRead() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let digest = try rig.serve("/a/one.bin", count: 50_000, seed: 21)
        try rig.serve("/a/never.bin", count: 1000, seed: 22)
        let other = rig.scratch.path("other")
        let list = rig.scratch.path("aria2.txt")
        try """
        # an aria2 input file
        \(rig.server.httpURL("/a/one.bin"))
          out=renamed.bin
          dir=\(other)
        \tchecksum=sha-256=\(digest)

        \(rig.server.httpURL("/echo"))
          header=X-Token: from the line
          referer=http://example.com/from
          user-agent=Line-Agent/1.0
          out=echo.txt
        \(rig.server.httpURL("/a/never.bin"))
          max-tries=3
        """.write(toFile: list, atomically: true, encoding: .utf8)
        let output = try await rig.get(["-i", list, "-H", "X-Token: global"])
        // The third file's unknown option fails it alone, naming the option.
        #expect(output.status == 64, "\(output.errorText)")
        #expect(output.errorText.contains("max-tries="), "\(output.errorText)")
        #expect(rig.requests(for: "/a/never.bin").isEmpty)
        #expect(try Rig.fileSHA256(other + "/renamed.bin") == digest)
        #expect(!FileManager.default.fileExists(atPath: rig.downloads + "/renamed.bin"))
        let echoed = try String(contentsOfFile: rig.downloads + "/echo.txt", encoding: .utf8)
        #expect(echoed == "from the line|Line-Agent/1.0|http://example.com/from")

        // A wrong checksum on an option line fails that file (7), in a file with Windows line
        // ends too; an option line before any URL is a malformed file (64).
        try [
            rig.server.httpURL("/a/one.bin"), "  out=bad.bin",
            "  checksum=sha-256=\(String(repeating: "0", count: 64))",
        ].joined(separator: "\r\n").write(toFile: list, atomically: true, encoding: .utf8)
        let mismatch = try await rig.get(["-i", list])
        #expect(mismatch.status == 7, "\(mismatch.errorText)")
        #expect(!FileManager.default.fileExists(atPath: rig.downloads + "/bad.bin"))
        try "  out=x.bin\n\(rig.server.httpURL("/a/one.bin"))\n".write(toFile: list, atomically: true, encoding: .utf8)
        let stray = try await rig.get(["-i", list])
        #expect(stray.status == 64 && stray.errorText.contains("before any URL"), "\(stray.errorText)")
    }

    /// What curl, wget and aria2c users type: -c, -e/--referer, and -x as a number (aria2c's
    /// connections per server) beside -x as a proxy (curl's).
    @Test func curlWgetAndAria2cFlagsAreTakenAsTheirUsersMeanThem() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let digest = try rig.serve("/slow/x.bin", count: 2 << 20, seed: 31)
        let split = try await rig.get([rig.server.httpURL("/slow/x.bin"), "-x", "4", "-k", "512k", "-c"])
        #expect(split.status == 0, "\(split.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/x.bin") == digest)
        #expect(rig.requests(for: "/slow/x.bin").count >= 2, "-x 4 did not split the file")

        let echoed = try await rig.get([rig.server.httpURL("/echo"), "-e", "http://example.com/page", "-o", "e.txt"])
        #expect(echoed.status == 0, "\(echoed.errorText)")
        let body = try String(contentsOfFile: rig.downloads + "/e.txt", encoding: .utf8)
        #expect(body.hasSuffix("|http://example.com/page"), "\(body)")

        let proxied = try await rig.get([rig.server.httpURL("/p.bin"), "-x", "http://127.0.0.1:9", "--retry", "0"])
        #expect(proxied.status == 2, "-x with a URL is the proxy: \(proxied.errorText)")
        let tooMany = try await rig.get([rig.server.httpURL("/p.bin"), "-x", "65"])
        #expect(tooMany.status == 64 && tooMany.errorText.contains("-x N"), "\(tooMany.errorText)")
        let badReferer = try await rig.get([rig.server.httpURL("/p.bin"), "--referer", "not a url"])
        #expect(badReferer.status == 64 && badReferer.errorText.contains("--referer"), "\(badReferer.errorText)")
    }

    /// On a terminal (a pty from `script`, 40 columns): the progress line never wraps (a long
    /// name is shortened in its middle) and a path on standard output starts a line of its own,
    /// never glued to the progress line of the downloads still running.
    @Test func theProgressLineFitsTheTerminalAndAPathGetsItsOwnLine() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let long = "a-name-much-longer-than-the-forty-columns-of-this-terminal.bin"
        try rig.serve("/slow/" + long, count: 1_500_000, seed: 41)
        try rig.serve("/slow/short.bin", count: 300_000, seed: 42)
        let command =
            "stty cols 40; exec '\(rig.tool)' get -d '\(rig.downloads)' --state-dir '\(rig.state)' "
            + "'\(rig.server.httpURL("/slow/" + long))' '\(rig.server.httpURL("/slow/short.bin"))'"
        let output = try await ChildProcess.run("/usr/bin/script", ["-qec", command, "/dev/null"], allowFailure: true)
        #expect(output.status == 0, "\(output.text)")
        let clear = "\u{1B}[2K"
        let drawn = output.text.components(separatedBy: clear).dropFirst().map { piece in
            String(piece.prefix { $0 != "\r" && $0 != "\n" })
        }
        let progress = drawn.filter { $0.hasPrefix("[") }
        #expect(!progress.isEmpty, "no progress line was drawn: \(output.text.debugDescription)")
        for line in progress { #expect(line.count <= 39, "\(line.count) columns: \(line)") }
        for name in [long, "short.bin"] {
            // The last mention: the first is the "done" line on standard error.
            let path = rig.downloads + "/" + name
            let range = try #require(
                output.text.range(of: path, options: .backwards), "\(output.text.debugDescription)")
            let before = output.text[..<range.lowerBound]
            #expect(
                before.hasSuffix(clear) || before.hasSuffix("\n") || before.hasSuffix("\r") || before.isEmpty,
                "the path followed \(String(before.suffix(30)).debugDescription)")
        }
    }

    @Test func aBadURLFailsAloneAndTheOthersDownload() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let digest = try rig.serve("/ok.bin", count: 10_000, seed: 3)
        let output = try await rig.get(["http://bad host/x", rig.server.httpURL("/ok.bin"), "ftp://nope/x"])
        #expect(output.status == 64, "\(output.errorText)")
        #expect(output.errorText.contains("http://bad host/x"))
        #expect(output.errorText.contains("ftp://nope/x"))
        #expect(try Rig.fileSHA256(rig.downloads + "/ok.bin") == digest)
    }

    @Test func credentialsInURLsAppearInNoOutputAndNoFile() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        try rig.serve("/private/f.bin", count: 1000, seed: 4)
        let secret = "s3cr3t-Pa55"
        let url = rig.server.httpURL("/private/f.bin").replacingOccurrences(of: "://", with: "://alice:\(secret)@")
        let output = try await rig.get([url, "--json", "--log", rig.scratch.path("get.log"), "-v"])
        // Plain http: the password is never sent, the 401 fails the download.
        #expect(output.status == 4, "\(output.text) \(output.errorText)")
        #expect(!output.text.contains(secret))
        #expect(!output.errorText.contains(secret))
        #expect(output.text.contains("alice:***@"))
        let log = (try? String(contentsOfFile: rig.accessLog, encoding: .utf8)) ?? ""
        #expect(!log.contains("Authorization") && !log.contains(secret))
        // Not in the store, the download directory, the log, nor anywhere else under the scratch
        // directory.
        let found = try await ChildProcess.run("/bin/grep", ["-r", "-l", secret, rig.scratch.path], allowFailure: true)
        #expect(found.text.isEmpty, "the password was written to \(found.text)")
    }

    @Test func theJSONStreamParsesAndEndsWithTheResult() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        let digest = try rig.serve("/j.bin", count: 300_000, seed: 5)
        let output = try await rig.get([rig.server.httpURL("/j.bin"), "--json", "--checksum", "sha256=\(digest)"])
        #expect(output.status == 0, "\(output.errorText)")
        let objects = try output.text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        #expect(objects.first?["event"] as? String == "added")
        let finished = try #require(objects.last)
        #expect(finished["event"] as? String == "finished")
        #expect(finished["path"] as? String == rig.downloads + "/j.bin")
        #expect(finished["size"] as? Int == 300_000)
        #expect(finished["digest"] as? String == "sha256=\(digest)")
    }

    @Test func eachExitStatus() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        try rig.serve("/e.bin", count: 5000, seed: 6)
        let url = rig.server.httpURL("/e.bin")
        #expect(try await rig.get([url]).status == 0)
        // Nothing listens on port 9.
        #expect(try await rig.get(["http://127.0.0.1:9/x", "--retry", "0"]).status == 2)
        #expect(try await rig.get([rig.server.httpURL("/missing.bin")]).status == 3)
        #expect(try await rig.get([rig.server.httpURL("/private/f.bin")]).status == 4)
        let mismatch = try await rig.get([
            rig.server.httpURL("/e.bin?x"), "--checksum", "sha256=\(String(repeating: "1", count: 64))",
            "--delete-mismatched",
        ])
        #expect(mismatch.status == 7, "\(mismatch.errorText)")
        let unwritable = try await ChildProcess.run(
            rig.tool, ["get", "-d", "/proc/peregrine-cannot-be-made", "--state-dir", rig.state, url],
            allowFailure: true)
        #expect(unwritable.status == 8, "\(unwritable.errorText)")
        let clobber = try await rig.get([rig.server.httpURL("/e.bin?again"), "--no-clobber", "-O", "e.bin"])
        #expect(clobber.status == 9, "--no-clobber keeps an existing file, with status 9: \(clobber.errorText)")
        // A redirect loop fails at once, named with its flag: followed up to --max-redirects once,
        // not retried (each of --retry's attempts would follow it again).
        let loop = try await rig.get([rig.server.httpURL("/loop"), "--max-redirects", "3"])
        #expect(loop.status == 10, "\(loop.errorText)")
        #expect(loop.errorText.contains("--max-redirects"), "\(loop.errorText)")
        #expect(rig.requests(for: "/loop").count == 4, "\(rig.requests(for: "/loop"))")
        #expect(rig.visibleFiles == ["e.bin"])
        let badFlags = [
            (["--limit-rate", "fast"], "--limit-rate"), (["--limit-rate", "-1"], "--limit-rate"),
            (["--max-overall-limit", "2X"], "--max-overall-limit"),
            (["--max-overall-limit", "9999999G"], "--max-overall-limit"),
            (["--max-overall-limit", "0.5"], "--max-overall-limit"),
            (["--retry", "-1"], "--retry"),
            (["-H", "NoColon"], "--header"),
            (["-i", "/nonexistent/list"], "--input-file"), (["--timeout", "0"], "--timeout"),
            (["--file-allocation", "prealloc"], "--file-allocation"),
        ]
        for (flags, name) in badFlags {
            let output = try await rig.get(flags + [url])
            #expect(output.status == 64, "\(flags): \(output.errorText)")
            #expect(output.errorText.contains(name), "\(output.errorText)")
        }
    }
}

/// A real small file system filled during downloads (a tmpfs mounted by the test; it needs root,
/// as CI has): a file that cannot fit fails before its first byte, a download whose blocks cannot
/// be reserved beside another's fails at its start with the disk-full status and says so, the
/// others finish with the right bytes, and the store — on the same full disk — loads again.
@Suite struct FullDiskTests {
    /// With `--file-allocation none` the two files that fit alone both start and run out of space
    /// as they write; with `falloc` (the default) the first to start reserves its blocks, so it
    /// finishes and the other fails at its start.
    @Test(arguments: ["none", "falloc"])
    func aFullDiskFailsOnlyTheDownloadsThatMeetIt(allocation: String) async throws {
        guard getuid() == 0 else {
            // Mounting needs root; CI runs as root, so there this test always runs.
            print("skipped: mounting a tmpfs needs root")
            return
        }
        let rig = try await GetCommandTests.Rig.start()
        defer { rig.stop() }
        let small = try rig.serve("/a.bin", count: 300_000, seed: 21)
        let other = try rig.serve("/c.bin", count: 200_000, seed: 22)
        try rig.serve("/slow/big.bin", count: 12 << 20, seed: 23)
        let m1 = try rig.serve("/slow/m1.bin", count: 5 << 19, seed: 24)
        let m2 = try rig.serve("/slow/m2.bin", count: 5 << 19, seed: 25)
        let mount = rig.scratch.path("tmpfs")
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let mounted = try await ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mount])
        #expect(mounted.status == 0)
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [mount]
            try? umount.run()
            umount.waitUntilExit()
        }

        // The two small files first; the 12 MiB file cannot fit in 4 MiB at all; the two 2.5 MiB
        // files each fit on their own, not together.
        let arguments = [
            "get", "-d", mount + "/downloads", "--state-dir", mount + "/state", "--quiet", "--retry", "0", "-j", "5",
            "--file-allocation", allocation, rig.server.httpURL("/a.bin"), rig.server.httpURL("/c.bin"),
            rig.server.httpURL("/slow/big.bin"),
            rig.server.httpURL("/slow/m1.bin"), rig.server.httpURL("/slow/m2.bin"),
        ]
        let first = try await ChildProcess.run(rig.tool, arguments, allowFailure: true)
        #expect(first.status == 8, "\(first.text) \(first.errorText)")
        let lines = first.errorText.split(separator: "\n")
        #expect(lines.contains { $0.contains("big.bin") && $0.contains("not enough free space") }, "\(first.errorText)")
        #expect(try GetCommandTests.Rig.fileSHA256(mount + "/downloads/a.bin") == small)
        #expect(try GetCommandTests.Rig.fileSHA256(mount + "/downloads/c.bin") == other)
        let landed = ["m1.bin", "m2.bin"].filter { FileManager.default.fileExists(atPath: mount + "/downloads/\($0)") }
        if allocation == "none" {
            #expect(
                lines.contains { $0.contains("/slow/m") && $0.contains("No space left on device") },
                "\(first.errorText)")
            #expect(landed.count < 2)
        } else {
            // The blocks of the one that started first are reserved: it finishes; the other fails
            // at its start (the free-space check sees the reservation, or `fallocate` fails).
            #expect(landed.count == 1, "\(landed) \(first.errorText)")
            if let name = landed.first {
                let digest = try GetCommandTests.Rig.fileSHA256(mount + "/downloads/\(name)")
                #expect(digest == (name == "m1.bin" ? m1 : m2))
                let failed = name == "m1.bin" ? "m2.bin" : "m1.bin"
                #expect(
                    lines.contains {
                        $0.contains("/slow/\(failed)")
                            && ($0.contains("not enough free space") || $0.contains("No space left on device"))
                    }, "\(first.errorText)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: mount + "/downloads/big.bin"))
        #expect(rig.requests(for: "/slow/big.bin").count == 1)

        // Again, on the still-full disk: the store loads, the two files are complete already.
        let second = try await ChildProcess.run(rig.tool, arguments, allowFailure: true)
        #expect(second.status == 8, "\(second.errorText)")
        #expect(second.text.contains(mount + "/downloads/a.bin"))
        #expect(second.text.contains(mount + "/downloads/c.bin"))
        #expect(rig.requests(for: "/a.bin").count == 1)
        #expect(rig.requests(for: "/c.bin").count == 1)
    }
}

extension GetCommandTests {
    /// `-o FILE` names the file of the one URL, as curl's `-o`, wget's `-O` and aria2c's `-o`
    /// do (relative to `-d`); `-o` naming a directory, or given with several URLs, is refused
    /// with the flag that does it (`-d`); `-o -` writes the file to standard output and nothing
    /// else there, leaving no file behind.
    @Test func outputNamesTheFileOfTheOneURL() async throws {
        let rig = try await Rig.start()
        defer { rig.stop() }
        // The same bytes under three names: a rerun of one URL would report it complete.
        let digest = try rig.serve("/o.bin", count: 300_000, seed: 7)
        _ = try rig.serve("/nested.bin", count: 300_000, seed: 7)
        _ = try rig.serve("/piped.bin", count: 300_000, seed: 7)
        let url = rig.server.httpURL("/o.bin")

        let named = try await rig.get([url, "-o", "named.bin"])
        #expect(named.status == 0, "\(named.errorText)")
        #expect(named.text == rig.downloads + "/named.bin\n")
        #expect(try Rig.fileSHA256(rig.downloads + "/named.bin") == digest)
        // Run again with another name: a download under that name (a hidden one, as asked),
        // reported by it; the first file stays.
        let hidden = try await rig.get([url, "-o", ".hidden"])
        #expect(hidden.status == 0, "\(hidden.errorText)")
        #expect(hidden.text == rig.downloads + "/.hidden\n")
        #expect(try Rig.fileSHA256(rig.downloads + "/.hidden") == digest)
        #expect(try Rig.fileSHA256(rig.downloads + "/named.bin") == digest)
        let again = try await rig.get([url, "-o", ".hidden"])
        #expect(again.status == 0 && again.text == rig.downloads + "/.hidden\n", "\(again.errorText)")

        let nested = try await rig.get([rig.server.httpURL("/nested.bin"), "--output", "sub/inner.bin"])
        #expect(nested.status == 0, "\(nested.errorText)")
        #expect(try Rig.fileSHA256(rig.downloads + "/sub/inner.bin") == digest)

        // A directory is not a file name: the flag for it is named, nothing is downloaded.
        let directory = try await rig.get([url, "-o", "sub"])
        #expect(directory.status == 64, "\(directory.errorText)")
        #expect(directory.errorText.contains("use -d sub"), "\(directory.errorText)")
        let several = try await rig.get([url, rig.server.httpURL("/o.bin?2"), "-o", "both.bin"])
        #expect(several.status == 64, "\(several.errorText)")
        #expect(several.errorText.contains("-d DIR"), "\(several.errorText)")

        let piped = try await rig.get([rig.server.httpURL("/piped.bin"), "-o", "-"])
        #expect(piped.status == 0, "\(piped.errorText)")
        #expect(piped.standardOutput.count == 300_000)
        #expect(Rig.sha256(piped.standardOutput) == digest)
        #expect(rig.visibleFiles == ["named.bin", "sub"], "-o - leaves no file in the directory")
        let withJSON = try await rig.get([url, "-o", "-", "--json"])
        #expect(withJSON.status == 64, "\(withJSON.errorText)")
        #expect(rig.requests(for: "/o.bin").count == 2, "the same name was fetched again")
        #expect(rig.requests(for: "/piped.bin").count == 1)
    }
}

extension GetCommandTests {
    /// A server that names the file in ISO-8859-1 (`filename="caf\u{E9}.txt"` with the one
    /// byte 0xE9, as old servers do) gets the name it meant, not a replacement character.
    @Test func aLatin1NameFromTheServerKeepsItsLetters() async throws {
        let tool = try #require(Self.executable, "no peregrine binary beside the tests: build with --build-tests")
        let scratch = try TemporaryDirectory(prefix: "peregrine-latin1")
        defer { scratch.remove() }
        let script = """
            import socket
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(4)
            print(server.getsockname()[1], flush=True)
            while True:
                client, _ = server.accept()
                request = b""
                while b"\\r\\n\\r\\n" not in request:
                    chunk = client.recv(4096)
                    if not chunk:
                        break
                    request += chunk
                client.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\nConnection: close\\r\\n"
                    + b"Content-Disposition: attachment; filename=\\"caf\\xe9.txt\\"\\r\\n\\r\\nhello")
                client.close()
            """
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = ["-c", script]
        let output = Pipe()
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            // SIGKILL: a SIGTERM ignored by this process is ignored by its children too.
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        let portLine = await onOwnThread { () -> String in
            var bytes: [UInt8] = []
            while let byte = try? output.fileHandleForReading.read(upToCount: 1)?.first, byte != 10 {
                bytes.append(byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        let port = try #require(Int(portLine), "the server printed \(portLine)")
        let result = try await ChildProcess.run(
            tool,
            [
                "get", "-d", scratch.path("downloads"), "--state-dir", scratch.path("state"), "--quiet",
                "http://127.0.0.1:\(port)/name",
            ], allowFailure: true)
        #expect(result.status == 0, "\(result.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("downloads")) == ["caf\u{E9}.txt"])
    }
}
