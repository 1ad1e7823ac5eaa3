import Foundation
import TestSupport
import Testing

/// The web dashboard in a real browser: `Tests/Dashboard/dashboard_test.py` drives headless
/// Chromium with Selenium against `peregrine daemon` and nginx — sign-in, adding, live progress,
/// sorting, sectioning, manual moves, the trash, markup in names, screenshots — and the
/// dashboard's files as the daemon serves them.
@Suite(.serialized) struct DashboardTests {
    /// Debian's chromium and chromium-driver, when installed.
    static let browser: (chromium: String, driver: String)? = {
        let paths = ["/usr/bin/chromium", "/usr/bin/chromedriver"]
        guard paths.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        return (paths[0], paths[1])
    }()

    @Test(
        .enabled(
            if: browser != nil,
            "chromium and chromium-driver are not installed: apt-get install chromium chromium-driver (CI does)"),
        .timeLimit(.minutes(3)))
    func theDashboardWorksInChromium() async throws {
        let browser = try #require(Self.browser)
        let tool = try #require(DaemonTests.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let python = try ChildProcess.executable(named: "python3", debianPackage: "python3")
        let check = try await ChildProcess.run(
            python, ["-c", "import selenium; assert selenium.__version__ == '4.40.0'"], allowFailure: true)
        try #require(
            check.status == 0, "selenium 4.40.0 is missing: pip install selenium==4.40.0 (Scripts/test.sh does)")
        let (nginx, scratch) = try await ServiceRig.makeServer()
        defer {
            nginx.stop()
            scratch.remove()
        }
        // Names that sort otherwise than sizes: by name a, b, c; by size c, a, b.
        let files = [("a-mid.bin", 300_000), ("b-big.bin", 450_000), ("c-small.bin", 150_000)]
        for (index, (name, count)) in files.enumerated() {
            try serve(nginx, "/files/\(name)", count: count, seed: UInt64(70 + index))
        }
        try serve(nginx, "/files/<img src=x onerror=alert(1)>.bin", count: 1000, seed: 80)
        try serve(nginx, "/slow/big.bin", count: 24 << 20, seed: 81)
        let secret = "dashboard-\(UInt32.random(in: 0...UInt32.max))"
        let daemon = try await DaemonProcess(
            tool,
            [
                "daemon", "--dir", scratch.path("downloads"), "--state", scratch.path("state"), "--rpc-listen-port",
                "{port}",
            ], log: scratch.path("daemon.log"), environment: ["PEREGRINE_RPC_SECRET": secret])
        defer { daemon.stop() }
        let screenshots =
            ProcessInfo.processInfo.environment["PEREGRINE_DASHBOARD_SCREENSHOTS"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("peregrine-dashboard-screenshots").path
        let result = try await ChildProcess.run(
            python,
            [
                DaemonTests.repository + "/Tests/Dashboard/dashboard_test.py", "--port", String(daemon.port),
                "--secret", secret, "--base-url", nginx.httpBaseURL, "--slow", "slow/big.bin",
                "--hostile", "files/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E.bin", "--screenshots", screenshots,
                "--chromium", browser.chromium, "--chromedriver", browser.driver,
            ] + files.flatMap { ["--file", $0.0] }, allowFailure: true)
        print(result.text)
        print("dashboard screenshots: \(screenshots)")
        #expect(result.status == 0, "\(result.text)\n\(result.errorText)\n\(daemon.logText)")
        #expect(result.text.hasSuffix("PASS\n"))
        #expect(!daemon.logText.contains(secret), "the daemon logged its secret")
    }

    /// The dashboard of a fleet service: `Tests/Dashboard/fleet_dashboard_test.py` opens the
    /// page on one of two `peregrined` sharing a PostgreSQL queue, adds every download through
    /// the other's RPC, and checks that the page shows the shared queue (their ends, the holder
    /// of the active one) and that pause, resume and remove on the page act on the queue.
    @Test(
        .enabled(
            if: browser != nil,
            "chromium and chromium-driver are not installed: apt-get install chromium chromium-driver (CI does)"),
        .timeLimit(.minutes(3)))
    func theDashboardOfAFleetServiceShowsTheSharedQueue() async throws {
        let browser = try #require(Self.browser)
        let tool = try #require(FleetDaemonTests.peregrined, "no peregrined beside the tests: build with --build-tests")
        let python = try ChildProcess.executable(named: "python3", debianPackage: "python3")
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        try await postgres.start()
        try await postgres.createDatabase("dashboard")
        let (nginx, scratch) = try await ServiceRig.makeServer()
        defer {
            nginx.stop()
            scratch.remove()
        }
        let files = [("one.bin", 200_000), ("two.jpg", 120_000)]
        for (index, (name, count)) in files.enumerated() {
            _ = try serve(nginx, "/files/\(name)", count: count, seed: UInt64(90 + index))
        }
        _ = try serve(nginx, "/slow/big.iso", count: 24 << 20, seed: 92)
        let secret = "fleet-dashboard-\(UInt32.random(in: 0...UInt32.max))"
        func service(_ name: String) async throws -> DaemonProcess {
            try await DaemonProcess(
                tool,
                [
                    "--dir", scratch.path("downloads-\(name)"), "--state", scratch.path("state-\(name)"),
                    "--rpc-listen-port", "{port}", "--queue", "dashboard", "--lease", "3", "--fleet-slots", "2",
                ], log: scratch.path("daemon-\(name).log"),
                environment: [
                    "PEREGRINE_STORE": postgres.connectionString(database: "dashboard"),
                    "PEREGRINE_RPC_SECRET": secret,
                ])
        }
        let here = try await service("here")
        defer { here.stop() }
        let other = try await service("other")
        defer { other.stop() }
        let screenshots =
            ProcessInfo.processInfo.environment["PEREGRINE_DASHBOARD_SCREENSHOTS"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("peregrine-dashboard-screenshots").path
        let result = try await ChildProcess.run(
            python,
            [
                DaemonTests.repository + "/Tests/Dashboard/fleet_dashboard_test.py", "--port", String(here.port),
                "--other-port", String(other.port), "--secret", secret, "--base-url", nginx.httpBaseURL,
                "--slow", "slow/big.iso", "--screenshots", screenshots, "--chromium", browser.chromium,
                "--chromedriver", browser.driver,
                "--service-pid", String(here.process.processIdentifier),
                "--service-pid", String(other.process.processIdentifier),
            ] + files.flatMap { ["--file", $0.0] }, allowFailure: true)
        print(result.text)
        #expect(result.status == 0, "\(result.text)\n\(result.errorText)\n\(here.logText)\n\(other.logText)")
        #expect(result.text.hasSuffix("PASS\n"))
        #expect(!here.logText.contains(secret) && !other.logText.contains(secret), "a service logged its secret")
    }

    /// `GET /` is the page and `GET /dashboard/NAME` its files, with their media types and a
    /// strict content security policy; any other name, an escape or a hidden file is 404.
    @Test func theDaemonServesTheDashboardsFilesAndNothingElse() async throws {
        let tool = try #require(DaemonTests.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let scratch = try TemporaryDirectory(prefix: "peregrine-dashboard")
        defer { scratch.remove() }
        let daemon = try await DaemonProcess(
            tool,
            [
                "daemon", "--dir", scratch.path("downloads"), "--state", scratch.path("state"), "--rpc-listen-port",
                "{port}",
            ], log: scratch.path("daemon.log"), environment: ["PEREGRINE_RPC_SECRET": "files-secret"])
        defer { daemon.stop() }
        let port = daemon.port
        func get(_ path: String) async throws -> (status: Int, type: String, body: String, headers: [String: String]) {
            try await onOwnThread {
                let answer = try RPCTestClient(port: port).request("GET", path: path)
                return (answer.status, answer.headers["content-type"] ?? "", answer.body, answer.headers)
            }
        }
        let index = try await get("/")
        #expect(index.status == 200)
        #expect(index.type == "text/html; charset=utf-8")
        #expect(index.body.contains("<script type=\"module\" src=\"/dashboard/app.js\"></script>"))
        #expect(index.headers["content-security-policy"]?.contains("script-src 'self'") == true)
        #expect(index.headers["x-content-type-options"] == "nosniff")
        for (name, type) in [
            ("app.js", "text/javascript; charset=utf-8"), ("dashboard.css", "text/css; charset=utf-8"),
            ("rpc.js", "text/javascript; charset=utf-8"), ("virtual-list.js", "text/javascript; charset=utf-8"),
            ("first-view.js", "text/javascript; charset=utf-8"),
        ] {
            let file = try await get("/dashboard/\(name)")
            #expect(file.status == 200, "\(name)")
            #expect(file.type == type, "\(name)")
        }
        for path in [
            "/dashboard/", "/dashboard/missing.js", "/dashboard/..%2FPackage.swift", "/dashboard/../index.html",
            "/dashboard/%2e%2e/%2e%2e/etc/passwd", "/dashboard/.hidden", "/index.html/../../etc/passwd",
        ] {
            let answer = try await get(path)
            #expect(answer.status == 404, "\(path): \(answer.status)")
        }
        // The files need no secret; the RPC still does.
        let refused = try await daemon.call("peregrine.listView", "")
        #expect((refused["error"] as? [String: Any])?["message"] as? String == "Unauthorized")
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
