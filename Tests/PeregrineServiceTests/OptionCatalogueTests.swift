import Foundation
import Peregrine
import PeregrineService
import TestSupport
import Testing

/// aria2's options as aria2's clients send them: every option aria2 takes is taken with
/// aria2's checks, kept and reported; the request options reach the server.
@Suite(.serialized) struct OptionCatalogueTests {
    @Test func everyAria2OptionIsTakenCheckedAndReported() async throws {
        try await ServiceRig.with { rig in
            let url = rig.server.httpURL("/catalogue.bin")
            let gid = try #require(
                try await rig.result(
                    "aria2.addUri",
                    """
                    ["\(url)"], {"pause":"true","gid":"00000000000000AA","bt-max-peers":"7","file-allocation":"none",
                    "bogus":"1","min-split-size":"1M","timeout":"9","user-agent":"UA-test/1",
                    "http-user":"alice","http-passwd":"pw","header":["X-A: 1","X-B: 2"]}
                    """) as? String)
            #expect(gid == "00000000000000aa")
            let options = try #require(try await rig.result("aria2.getOption", "\"\(gid)\"") as? [String: Any])
            // Kept and reported, as aria2 reports them (sizes in bytes, header one string).
            #expect(options["bt-max-peers"] as? String == "7")
            #expect(options["file-allocation"] as? String == "none")
            #expect(options["min-split-size"] as? String == "1048576")
            #expect(options["timeout"] as? String == "9")
            #expect(options["user-agent"] as? String == "UA-test/1")
            #expect(options["http-user"] as? String == "alice")
            #expect(options["header"] as? String == "X-A: 1\nX-B: 2\n")
            // aria2's defaults for what was not given; the service's where it works otherwise.
            #expect(options["seed-ratio"] as? String == "1.0")
            #expect(options["dir"] as? String == rig.manager.downloadDirectory)
            #expect(options["max-tries"] as? String == "6")
            // Not reported: unknown names, what names one addition, secrets.
            for absent in ["bogus", "gid", "pause", "http-passwd"] { #expect(options[absent] == nil, "\(absent)") }
            #expect(options.count > 60, "aria2 reports about 78 options of a download: \(options.count)")
            // The secret is not stored either.
            guard case .dictionary(let stored) = rig.manager.metaInfo(ofTask: url)?["aria2.options"] else {
                Issue.record("no options in the meta info")
                return
            }
            #expect(stored["http-user"] == .string("alice"))
            #expect(stored["http-passwd"] == nil)

            // aria2's checks, aria2's error.
            for (name, bad) in [
                ("timeout", "0"), ("file-allocation", "fast"), ("max-connection-per-server", "17"),
                ("min-split-size", "1K"), ("check-integrity", "yes"), ("seed-ratio", "-1"),
            ] {
                let error = try await rig.error("aria2.addUri", "[\"\(url)-\(name)\"], {\"\(name)\":\"\(bad)\"}")
                #expect(error.code == 1)
                #expect(error.message.hasPrefix("We encountered a problem while processing the option '--\(name)'"))
            }
            #expect(rig.manager.engine.task("\(url)-timeout") == nil, "a refused addition adds nothing")
            let taken = try await rig.error("aria2.addUri", "[\"\(url)-again\"], {\"gid\":\"00000000000000aa\"}")
            #expect(taken.message == "GID 00000000000000aa is not unique.")
            #expect(try await rig.error("aria2.addUri", "[\"\(url)-x\"], {\"gid\":\"xyz\"}").code == 1)

            // changeOption keeps what aria2 keeps; the global options too, except what a
            // running service cannot change.
            #expect(
                try await rig.result("aria2.changeOption", "\"\(gid)\", {\"bt-max-peers\":\"9\"}") as? String == "OK")
            #expect(
                (try await rig.result("aria2.getOption", "\"\(gid)\"") as? [String: Any])?["bt-max-peers"] as? String
                    == "9")
            let before = try #require(try await rig.result("aria2.getGlobalOption") as? [String: Any])
            #expect(before.count > 100, "aria2 reports about 128 global options: \(before.count)")
            #expect(
                try await rig.result(
                    "aria2.changeGlobalOption",
                    "{\"rpc-listen-port\":\"7000\",\"bt-max-peers\":\"11\",\"timeout\":\"12\"}")
                    as? String == "OK")
            let after = try #require(try await rig.result("aria2.getGlobalOption") as? [String: Any])
            #expect(after["rpc-listen-port"] as? String == String(rig.port))
            #expect(after["bt-max-peers"] as? String == "11")
            // A global option of a download is the default of those added later.
            let later = try #require(
                try await rig.result("aria2.addUri", "[\"\(url)-later\"], {\"pause\":\"true\"}") as? String)
            #expect(
                (try await rig.result("aria2.getOption", "\"\(later)\"") as? [String: Any])?["timeout"] as? String
                    == "12")
        }
    }

    @Test func requestOptionsReachTheServer() async throws {
        try await ServiceRig.with { rig in
            try rig.serve("/options.bin", count: 20_000, seed: 7)
            let url = rig.server.httpURL("/options.bin")
            let events = rig.manager.events()
            _ = try await rig.result(
                "aria2.addUri",
                """
                ["\(url)"], {"user-agent":"UA-test/2","referer":"http://referrer.example/page","http-user":"alice",
                "http-passwd":"pw","timeout":"30","connect-timeout":"5","max-tries":"3"}
                """)
            let ended = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                if case .failed(url, _) = $0 { return true }
                return false
            }
            guard case .finished = ended else {
                Issue.record("the download did not finish: \(String(describing: ended))")
                return
            }
            // nginx's combined log: the Basic user, the referrer, the user agent.
            let log = try String(contentsOfFile: rig.scratch.path("access.log"), encoding: .utf8)
            let line = try #require(log.split(separator: "\n").first { $0.contains("GET /options.bin") })
            #expect(line.contains(" - alice ["), "\(line)")
            #expect(line.contains("\"http://referrer.example/page\" \"UA-test/2\""), "\(line)")
        }
    }

    /// `dir` inside the root, as AriaNg sends it with every addUri: the file lands in that folder
    /// (made as needed), tellStatus and getOption say so, changeOption moves
    /// a download that has not finished, and a folder outside the root is refused.
    @Test func dirPlacesTheFileInAFolderOfTheRoot() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-dir")
        defer { scratch.remove() }
        try await ServiceRig.with { rig in
            try rig.serve("/dir/a.bin", count: 3000, seed: 41)
            try rig.serve("/dir/b.bin", count: 4000, seed: 42)
            let events = rig.manager.events()
            let gid = try #require(
                try await rig.result(
                    "aria2.addUri", "[\"\(rig.server.httpURL("/dir/a.bin"))\"], {\"dir\":\"music//2026/\"}")
                    as? String)
            let url = rig.server.httpURL("/dir/a.bin")
            _ = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                return false
            }
            let folder = rig.manager.downloadDirectory + "/music/2026"
            #expect(FileManager.default.contents(atPath: folder + "/a.bin")?.count == 3000)
            let status = try #require(try await rig.result("aria2.tellStatus", "\"\(gid)\"") as? [String: Any])
            #expect(status["dir"] as? String == folder, "\(status)")
            let files = status["files"] as? [[String: Any]]
            #expect(files?.first?["path"] as? String == folder + "/a.bin", "\(status)")
            let options = try #require(try await rig.result("aria2.getOption", "\"\(gid)\"") as? [String: String])
            #expect(options["dir"] == folder, "\(options)")

            // Paused before it starts, moved, then resumed: it lands in the new folder.
            let second = try #require(
                try await rig.result(
                    "aria2.addUri",
                    "[\"\(rig.server.httpURL("/dir/b.bin"))\"], {\"dir\":\"first\",\"pause\":\"true\"}") as? String)
            #expect(
                try await rig.result(
                    "aria2.changeOption", "\"\(second)\", {\"dir\":\"\(rig.manager.downloadDirectory)/second\"}")
                    as? String == "OK")
            let secondURL = rig.server.httpURL("/dir/b.bin")
            _ = try await rig.result("aria2.unpause", "\"\(second)\"")
            _ = await ServiceRig.await(events) {
                if case .finished(secondURL, _) = $0 { return true }
                return false
            }
            #expect(
                FileManager.default.contents(atPath: rig.manager.downloadDirectory + "/second/b.bin")?.count == 4000)
            #expect(!FileManager.default.fileExists(atPath: rig.manager.downloadDirectory + "/first/b.bin"))
            // A finished download's file stays where it is.
            let moved = try await rig.call("aria2.changeOption", "\"\(gid)\", {\"dir\":\"elsewhere\"}")
            #expect(moved["error"] != nil, "\(moved)")

            // Outside the root, also through a symbolic link: refused, nothing added.
            try FileManager.default.createSymbolicLink(
                atPath: rig.manager.downloadDirectory + "/escape", withDestinationPath: scratch.path)
            for dir in ["../outside", "/etc", "escape/inner"] {
                let refused = try await rig.call(
                    "aria2.addUri", "[\"\(rig.server.httpURL("/dir/c.bin"))\"], {\"dir\":\"\(dir)\"}")
                #expect(refused["error"] != nil, "\(dir): \(refused)")
            }
            #expect(rig.manager.engine.task(rig.server.httpURL("/dir/c.bin")) == nil)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) == [])
        }
    }

    @Test func maxTriesAndRetryWaitBoundTheRetries() async throws {
        try await ServiceRig.with { rig in
            let url = rig.server.httpURL("/unavailable.bin")
            let events = rig.manager.events()
            _ = try await rig.result("aria2.addUri", "[\"\(url)\"], {\"max-tries\":\"2\",\"retry-wait\":\"1\"}")
            let ended = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                if case .failed(url, _) = $0 { return true }
                return false
            }
            guard case .failed = ended else {
                Issue.record("a 503 did not end the download: \(String(describing: ended))")
                return
            }
            // Two tries in all (the manager's own policy would have made six).
            let log = try String(contentsOfFile: rig.scratch.path("access.log"), encoding: .utf8)
            #expect(log.split(separator: "\n").filter { $0.contains("GET /unavailable.bin") }.count == 2, "\(log)")
            // /metrics counts the retry, and the failure, by reason (the service follows the events
            // on its own: read until the failure is there).
            var samples: [String: Double] = [:]
            for _ in 0..<600 {
                samples = try await MetricsTests.samples(try await MetricsTests.get(rig.port, "/metrics").body)
                if samples[#"peregrine_downloads_failed_total{reason="httpStatus"}"#] == 1 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(samples[#"peregrine_downloads_failed_total{reason="httpStatus"}"#] == 1, "\(samples)")
            #expect(samples[#"peregrine_download_retries_total{reason="httpStatus"}"#] == 1, "\(samples)")
        }
    }

    @Test func allProxyCarriesTheDownload() async throws {
        try await ServiceRig.with { rig in
            try rig.serve("/proxied.bin", count: 10_000, seed: 8)
            // A TCP relay to nginx, which serves a request in absolute form by its path: the host
            // of the URL never resolves, so only the proxy can fetch it.
            let proxy = try await BlackholeProxy(to: rig.server.httpPort)
            defer { proxy.stop() }
            let url = "http://peregrine-proxy-test.invalid/proxied.bin"
            let events = rig.manager.events()
            _ = try await rig.result(
                "aria2.addUri", "[\"\(url)\"], {\"all-proxy\":\"127.0.0.1:\(proxy.port)\",\"max-tries\":\"1\"}")
            let ended = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                if case .failed(url, _) = $0 { return true }
                return false
            }
            guard case .finished(_, let file) = ended else {
                Issue.record("the download did not finish through the proxy: \(String(describing: ended))")
                return
            }
            #expect(try fileSHA256(file.path) == fileSHA256(rig.server.documentPath("/proxied.bin")))
            #expect(try await rig.error("aria2.addUri", "[\"\(url)2\"], {\"all-proxy\":\"ftp://x\"}").code == 1)
            // Credentials have options of their own: inside the URL they would be stored.
            let inURL = try await rig.error(
                "aria2.addUri", "[\"\(url)3\"], {\"all-proxy\":\"http://u:p@127.0.0.1:\(proxy.port)\"}")
            #expect(inURL.message.contains("all-proxy-user"))
        }
    }
}
