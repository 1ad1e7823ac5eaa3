import Foundation
import Peregrine
import PeregrineService
import Synchronization
import TestSupport
import Testing

/// The service on an ephemeral port, driven over HTTP and WebSocket, with real downloads from
/// nginx: aria2's errors, the secret, path confinement, origins, statuses and notifications.
@Suite struct ServiceTests {
    @Test func badRequestsGetJSONRPCErrorsAndTheServiceKeepsServing() async throws {
        try await ServiceRig.with { rig in
            // The HTTP statuses aria2 sends with errors: 500 for a parse error, 400 for an invalid
            // request or a method's error; a batch is 200 whatever its entries.
            let garbage = try await rig.post("{\"jsonrpc\":")
            #expect(garbage.status == 500)
            #expect(garbage.body == #"{"id":null,"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error."}}"#)
            let noMethod = try await rig.post(#"{"jsonrpc":"2.0","id":4}"#)
            #expect(noMethod.status == 400)
            #expect(noMethod.body == #"{"id":4,"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request."}}"#)
            let refused = try await rig.post(#"{"jsonrpc":"2.0","id":5,"method":"aria2.tellActive","params":[]}"#)
            #expect(refused.status == 400 && refused.body.contains("Unauthorized"))
            let unknown = try await rig.post(
                #"{"jsonrpc":"2.0","id":6,"method":"aria2.nope","params":["token:s3cret"]}"#)
            #expect(unknown.status == 400 && unknown.body.contains("No such method"))
            let failedBatch = try await rig.post(#"[{"jsonrpc":"2.0","id":7,"method":"aria2.nope"}]"#)
            #expect(failedBatch.status == 200)

            #expect(try await rig.error("aria2.nope") == (1, "No such method: aria2.nope"))
            #expect(try await rig.error("aria2.tellStatus", "5") == (1, "The parameter at 0 has wrong type."))
            #expect(try await rig.error("aria2.tellStatus") == (1, "The parameter at 0 is missing."))
            #expect(try await rig.error("aria2.tellStatus", "\"zz\"") == (1, "Invalid GID zz"))
            #expect(
                try await rig.error("aria2.tellStatus", "\"0123456789abcdef\"") == (
                    1, "GID 0123456789abcdef is not found"
                ))
            #expect(
                try await rig.error("aria2.pause", "\"0123456789abcdef\"") == (1, "GID 0123456789abcdef is not found"))
            #expect(try await rig.error("aria2.addUri", "[]") == (1, "URI is not provided."))
            #expect(try await rig.error("aria2.addUri", "[\"ftp://x/y\"]").message.contains("Invalid URI"))
            #expect(
                try await rig.error("aria2.addUri", "[\"http://x/y\"], {\"split\":\"abc\"}").message.contains("split"))
            #expect(try await rig.error("aria2.tellStopped", "0, -1").code == 1)
            #expect(
                try await rig.error("aria2.changeGlobalOption", "{\"dir\":\"/tmp\"}").message.contains(
                    "outside the download root"))
            // Options the service does not act on are ignored, as aria2 ignores them.
            #expect(try await rig.result("aria2.changeGlobalOption", "{\"log-level\":\"debug\"}") as? String == "OK")

            // A batch answers each entry, in order, with its id.
            let token = "\"token:\(rig.secret!)\""
            let batch = try await rig.post(
                "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"aria2.getVersion\",\"params\":[\(token)]},"
                    + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"aria2.nope\",\"params\":[\(token)]}, 7]")
            let answers = try #require(
                try JSONSerialization.jsonObject(with: Data(batch.body.utf8)) as? [[String: Any]])
            #expect(answers.count == 3)
            #expect(answers[0]["id"] as? Int == 1 && answers[0]["result"] != nil)
            #expect(answers[1]["id"] as? Int == 2 && (answers[1]["error"] as? [String: Any])?["code"] as? Int == 1)
            #expect(answers[2]["id"] is NSNull && (answers[2]["error"] as? [String: Any])?["code"] as? Int == -32600)
            #expect(try await rig.post("[]").body == "[]")

            // Clients that leave mid-request, mid-upgrade or mid-frame cost nothing.
            let port = rig.port
            try await onOwnThread {
                let half = try RPCTestClient(port: port)
                half.send(
                    Array("POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n{\"js".utf8))
                let socket = try RPCTestClient(port: port)
                _ = socket.upgradeToWebSocket()
                socket.send([0x81, 0xFE, 0x10])
            }

            let stat = try #require(try await rig.result("aria2.getGlobalStat") as? [String: String])
            #expect(stat["numActive"] == "0" && stat["numWaiting"] == "0")
        }
    }

    @Test func callsWithoutTheRightSecretAreRefusedWithAria2sError() async throws {
        try await ServiceRig.with(secret: "s3cret") { rig in
            for params in ["", "\"token:s3cre\"", "\"token:s3cretx\"", "\"token:\"", "\"s3cret\""] {
                let response = try await rig.post(
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"aria2.getGlobalStat\",\"params\":[\(params)]}")
                #expect(response.body == #"{"id":1,"jsonrpc":"2.0","error":{"code":1,"message":"Unauthorized"}}"#)
            }
            // As in aria2, listing methods needs no secret; multicall checks each call's own.
            let methods = try await rig.post(#"{"jsonrpc":"2.0","id":1,"method":"system.listMethods","params":[]}"#)
            #expect(methods.body.contains("aria2.addUri"))
            let multicall = try await rig.post(
                #"{"jsonrpc":"2.0","id":1,"method":"system.multicall","params":[[{"methodName":"aria2.getVersion","params":[]},"#
                    + #"{"methodName":"aria2.getVersion","params":["token:s3cret"]}]]}"#)
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(multicall.body.utf8)) as? [String: Any])
            let results = try #require(object["result"] as? [Any])
            #expect((results[0] as? [String: Any])?["message"] as? String == "Unauthorized")
            #expect(((results[1] as? [Any])?.first as? [String: Any])?["version"] != nil)
        }
    }

    @Test func dirAndOutCannotLeaveTheDownloadRoot() async throws {
        try await ServiceRig.with { rig in
            let outside = try TemporaryDirectory(prefix: "peregrine-outside")
            defer { outside.remove() }
            try FileManager.default.createSymbolicLink(
                atPath: rig.downloads + "/escape", withDestinationPath: outside.path)
            let url = "\"\(rig.server.httpURL("/a.bin"))\""
            for (option, reason) in [
                ("\"dir\":\"/etc\"", "outside the download root"), ("\"dir\":\"../state\"", "parent reference"),
                ("\"dir\":\"escape\"", "outside the download root"),
                ("\"dir\":\"\(outside.path)\"", "outside the download root"),
                ("\"out\":\"../x.bin\"", "parent reference"), ("\"out\":\"/etc/x.bin\"", "outside the download root"),
                ("\"out\":\"a/b.bin\"", "invalid file name"),
            ] {
                let error = try await rig.error("aria2.addUri", "[\(url)], {\(option)}")
                #expect(error.code == 1)
                #expect(error.message.contains(reason), "\(option): \(error.message)")
            }
            #expect(rig.manager.engine.tasks().isEmpty)
            // The root itself is fine.
            let gid = try await rig.result(
                "aria2.addUri", "[\(url)], {\"dir\":\"\(rig.downloads)\",\"pause\":\"true\"}")
            #expect((gid as? String)?.count == 16)
        }
    }

    @Test func aDownloadCompletesWithTheRightBytesAndAria2sStatus() async throws {
        try await ServiceRig.with { rig in
            let digest = try rig.serve("/files/a.bin", count: 300_007, seed: 11)
            let url = rig.server.httpURL("/files/a.bin")
            let events = rig.manager.events()
            let gid = try #require(
                try await rig.result(
                    "aria2.addUri",
                    "[\"\(url)\"], {\"out\":\"renamed.bin\",\"checksum\":\"sha-256=\(digest)\",\"split\":\"4\"}")
                    as? String)
            let finished = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                if case .failed(url, _) = $0 { return true }
                return false
            }
            guard case .finished = finished else {
                Issue.record("the download did not finish: \(String(describing: finished))")
                return
            }
            let status = try #require(try await rig.result("aria2.tellStatus", "\"\(gid)\"") as? [String: Any])
            #expect(status["gid"] as? String == gid)
            #expect(status["status"] as? String == "complete")
            #expect(status["totalLength"] as? String == "300007")
            #expect(status["completedLength"] as? String == "300007")
            #expect(status["dir"] as? String == rig.manager.downloadDirectory)
            let files = try #require(status["files"] as? [[String: Any]])
            let path = try #require(files.first?["path"] as? String)
            #expect(path.hasSuffix("/renamed.bin"))
            #expect(try fileSHA256(path) == digest)

            let filtered = try #require(
                try await rig.result("aria2.tellStatus", "\"\(gid)\", [\"status\",\"gid\"]") as? [String: String])
            #expect(filtered == ["status": "complete", "gid": gid])
            // A unique prefix names the download too, as in aria2.
            let prefixed = try #require(
                try await rig.result("aria2.tellStatus", "\"\(gid.prefix(6))\", [\"gid\"]") as? [String: String])
            #expect(prefixed == ["gid": gid])
            let uris = try #require(try await rig.result("aria2.getUris", "\"\(gid)\"") as? [[String: String]])
            #expect(uris == [["uri": url, "status": "used"]])
            let options = try #require(try await rig.result("aria2.getOption", "\"\(gid)\"") as? [String: Any])
            #expect(options["split"] as? String == "4" && options["out"] as? String == "renamed.bin")
            let stopped = try #require(
                try await rig.result("aria2.tellStopped", "0, 10, [\"gid\"]") as? [[String: String]])
            #expect(stopped == [["gid": gid]])

            #expect(try await rig.error("aria2.pause", "\"\(gid)\"") == (1, "GID#\(gid) cannot be paused now"))
            #expect(
                try await rig.error("aria2.remove", "\"\(gid)\"") == (1, "Active Download not found for GID#\(gid)"))
            // Adding the same URL again names the same download.
            #expect(try await rig.result("aria2.addUri", "[\"\(url)\"]") as? String == gid)
            #expect(try await rig.result("aria2.removeDownloadResult", "\"\(gid)\"") as? String == "OK")
            #expect(try await rig.error("aria2.tellStatus", "\"\(gid)\"").message == "GID \(gid) is not found")
            // The file stays: a result is forgotten, not the download's file.
            #expect(try fileSHA256(path) == digest)
        }
    }

    /// aria2.addUri with several URIs: one download, the others its mirrors. A mirror that
    /// cannot be reached is dropped (and leaves getUris, as in aria2); the file is right.
    @Test func addUriWithSeveralURIsDownloadsOneFileFromItsMirrors() async throws {
        try await ServiceRig.with { rig in
            let digest = try rig.serve("/one/m.bin", count: 3 << 20, seed: 13)
            _ = try rig.serve("/two/m.bin", count: 3 << 20, seed: 13)
            let url = rig.server.httpURL("/one/m.bin")
            let mirror = rig.server.httpURL("/two/m.bin")
            // Nothing listens on port 9 here: connections to it are refused.
            let unreachable = "http://127.0.0.1:9/m.bin"
            let events = rig.manager.events()
            let gid = try #require(
                try await rig.result(
                    "aria2.addUri",
                    "[\"\(url)\", \"\(unreachable)\", \"\(mirror)\"], {\"split\":\"4\",\"checksum\":\"sha-256=\(digest)\"}"
                ) as? String)
            #expect(rig.manager.engine.task(url)?.record.mirrors == [unreachable, mirror])
            let finished = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                if case .failed(url, _) = $0 { return true }
                return false
            }
            guard case .finished = finished else {
                Issue.record("the download did not finish: \(String(describing: finished))")
                return
            }
            let status = try #require(try await rig.result("aria2.tellStatus", "\"\(gid)\"") as? [String: Any])
            let files = try #require(status["files"] as? [[String: Any]])
            let path = try #require(files.first?["path"] as? String)
            #expect(try fileSHA256(path) == digest)
            let uris = try #require(try await rig.result("aria2.getUris", "\"\(gid)\"") as? [[String: String]])
            #expect(uris == [["uri": url, "status": "used"], ["uri": mirror, "status": "used"]], "\(uris)")
            #expect(rig.manager.engine.task(url)?.droppedURLs[unreachable]?.code == .network)

            // A mirror that is no URL refuses the whole download.
            let refused = try await rig.error(
                "aria2.addUri", "[\"\(rig.server.httpURL("/one/other.bin"))\", \"ftp://mirror.example/x\"]")
            #expect(refused.code == 1 && refused.message.contains("Invalid URI"), "\(refused)")
            #expect(rig.manager.engine.task(rig.server.httpURL("/one/other.bin")) == nil)
        }
    }

    @Test func aChecksumMismatchEndsInErrorWithAria2sCode() async throws {
        try await ServiceRig.with { rig in
            try rig.serve("/b.bin", count: 50_000, seed: 12)
            let url = rig.server.httpURL("/b.bin")
            let events = rig.manager.events()
            let wrong = String(repeating: "0", count: 64)
            let gid = try #require(
                try await rig.result("aria2.addUri", "[\"\(url)\"], {\"checksum\":\"sha-256=\(wrong)\"}") as? String)
            let failed = await ServiceRig.await(events) {
                if case .failed(url, _) = $0 { return true }
                return false
            }
            #expect(failed != nil)
            let status = try #require(try await rig.result("aria2.tellStatus", "\"\(gid)\"") as? [String: Any])
            #expect(status["status"] as? String == "error")
            #expect(status["errorCode"] as? String == "32")
            #expect(
                try await rig.error("aria2.addUri", "[\"\(url)x\"], {\"checksum\":\"nope=12\"}").message.contains(
                    "checksum"))
            // Adding the failed URL again starts it again, under the same GID (it fails again:
            // the checksum is still wrong).
            let again = rig.manager.events()
            #expect(try await rig.result("aria2.addUri", "[\"\(url)\"]") as? String == gid)
            let failedAgain = await ServiceRig.await(again) {
                if case .failed(url, _) = $0 { return true }
                return false
            }
            #expect(failedAgain != nil)
        }
    }

    @Test func pausedDownloadsWaitInOrderAndChangePositionMovesThem() async throws {
        try await ServiceRig.with { rig in
            var gids: [String] = []
            for name in ["p1", "p2", "p3"] {
                let url = rig.server.httpURL("/\(name).bin")
                gids.append(
                    try #require(try await rig.result("aria2.addUri", "[\"\(url)\"], {\"pause\":\"true\"}") as? String))
            }
            func waiting() async throws -> [String] {
                let list = try #require(
                    try await rig.result("aria2.tellWaiting", "0, 100, [\"gid\",\"status\"]") as? [[String: String]])
                #expect(list.allSatisfy { $0["status"] == "paused" })
                return list.compactMap { $0["gid"] }
            }
            #expect(try await waiting() == gids)
            #expect(try await rig.result("aria2.changePosition", "\"\(gids[2])\", 0, \"POS_SET\"") as? Int == 0)
            #expect(try await waiting() == [gids[2], gids[0], gids[1]])
            #expect(try await rig.result("aria2.changePosition", "\"\(gids[2])\", 1, \"POS_CUR\"") as? Int == 1)
            #expect(try await waiting() == [gids[0], gids[2], gids[1]])
            #expect(try await rig.result("aria2.changePosition", "\"\(gids[0])\", 0, \"POS_END\"") as? Int == 2)
            #expect(try await waiting() == [gids[2], gids[1], gids[0]])
            let page = try #require(
                try await rig.result("aria2.tellWaiting", "-1, 2, [\"gid\"]") as? [[String: String]])
            #expect(page == [["gid": gids[0]], ["gid": gids[1]]])
            #expect(try await rig.error("aria2.changePosition", "\"\(gids[0])\", 0, \"POS_NOPE\"").code == 1)
            #expect(try await rig.error("aria2.unpause", "\"0123456789abcdef\"").code == 1)
            // Removing a paused download forgets it at once, as aria2 1.36 does.
            #expect(try await rig.result("aria2.remove", "\"\(gids[1])\"") as? String == gids[1])
            #expect(try await rig.error("aria2.tellStatus", "\"\(gids[1])\"").message.contains("is not found"))
            let stat = try #require(try await rig.result("aria2.getGlobalStat") as? [String: String])
            #expect(stat["numWaiting"] == "2" && stat["numStopped"] == "0")
            // The removal kept the order the client set, and new downloads join at the end, also
            // two added in one multicall (which share one sync).
            #expect(try await waiting() == [gids[2], gids[0]])
            let p4 = rig.server.httpURL("/p4.bin")
            let p5 = rig.server.httpURL("/p5.bin")
            let token = rig.secret.map { "\"token:\($0)\"," } ?? ""
            let calls = [p4, p5].map {
                #"{"methodName":"aria2.addUri","params":["# + token + #"[""# + $0 + #""],{"pause":"true"}]}"#
            }
            let answer = try await rig.post(
                #"{"jsonrpc":"2.0","id":1,"method":"system.multicall","params":[["# + calls.joined(separator: ",")
                    + "]]}")
            let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
            let added = try #require(object?["result"] as? [[String]], "\(answer.body)")
            #expect(added.count == 2)
            #expect(try await waiting() == [gids[2], gids[0]] + added.compactMap(\.first))
        }
    }

    @Test func splitAndConnectionsPerServerSetADownloadsConnections() async throws {
        try await ServiceRig.with { rig in
            func connections(_ path: String, _ options: String) async throws -> Int? {
                let url = rig.server.httpURL(path)
                _ = try await rig.result("aria2.addUri", "[\"\(url)\"], {\"pause\":\"true\"\(options)}")
                let task = try #require(rig.manager.engine.task(url))
                return task.record.maxConnections
            }
            // The lower of the two, each defaulting to the global option (split 5, per server 1).
            let both = try await connections("/a.bin", ",\"split\":\"8\",\"max-connection-per-server\":\"6\"")
            let perServer = try await connections("/b.bin", ",\"max-connection-per-server\":\"16\"")
            let split = try await connections("/c.bin", ",\"split\":\"3\"")
            // Neither: the service's own count.
            let neither = try await connections("/d.bin", "")
            #expect(both == 6)
            #expect(perServer == 5)
            #expect(split == 1)
            #expect(neither == nil)
        }
    }

    @Test func optionsAreValidatedStoredAndReported() async throws {
        try await ServiceRig.with { rig in
            let url = rig.server.httpURL("/o.bin")
            let gid = try #require(
                try await rig.result(
                    "aria2.addUri",
                    "[\"\(url)\"], {\"pause\":\"true\",\"max-connection-per-server\":\"4\",\"max-download-limit\":\"1K\",\"header\":[\"X-A: 1\"]}"
                ) as? String)
            let options = try #require(try await rig.result("aria2.getOption", "\"\(gid)\"") as? [String: Any])
            #expect(options["max-connection-per-server"] as? String == "4")
            #expect(options["max-download-limit"] as? String == "1024")
            // As aria2 reports it: one string, a newline after each line.
            #expect(options["header"] as? String == "X-A: 1\n")
            #expect(options["split"] as? String == "5")
            // A second download added with the same options shares them (one copy for both)
            // until one of them changes: the change is its own.
            let twin = try #require(
                try await rig.result(
                    "aria2.addUri",
                    "[\"\(url)-twin\"], {\"pause\":\"true\",\"max-connection-per-server\":\"4\",\"max-download-limit\":\"1K\",\"header\":[\"X-A: 1\"]}"
                ) as? String)
            #expect(try await rig.result("aria2.changeOption", "\"\(gid)\", {\"split\":\"8\"}") as? String == "OK")
            #expect(
                (try await rig.result("aria2.getOption", "\"\(gid)\"") as? [String: Any])?["split"] as? String == "8")
            #expect(
                (try await rig.result("aria2.getOption", "\"\(twin)\"") as? [String: Any])?["split"] as? String == "5")
            let twinMeta = rig.manager.metaInfo(ofTask: "\(url)-twin")
            #expect(twinMeta?["aria2.paused"] == .boolean(true))
            guard case .dictionary(let stored) = twinMeta?["aria2.options"] else {
                Issue.record("the twin's options are not in its meta info: \(String(describing: twinMeta))")
                return
            }
            #expect(stored["max-connection-per-server"] == .string("4"))
            #expect(stored["split"] == nil)
            // The download's connection count is the lower of the two, changed with them.
            #expect(rig.manager.engine.task(url)?.record.maxConnections == 4)
            #expect(
                try await rig.result("aria2.changeOption", "\"\(gid)\", {\"max-connection-per-server\":\"6\"}")
                    as? String == "OK")
            #expect(rig.manager.engine.task(url)?.record.maxConnections == 6)
            #expect(try await rig.result("aria2.changeOption", "\"\(gid)\", {\"out\":\"x\"}") as? String == "OK")
            #expect((try await rig.result("aria2.getOption", "\"\(gid)\"") as? [String: Any])?["out"] == nil)
            #expect(try await rig.error("aria2.changeOption", "\"\(gid)\", {\"dir\":\"../x\"}").code == 1)
            #expect(
                try await rig.error("aria2.changeOption", "\"\(gid)\", {\"split\":\"0\"}").message.contains("split"))
            #expect(
                try await rig.error("aria2.addUri", "[\"\(url)2\"], {\"header\":[\"no colon\"]}").message.contains(
                    "header"))
            #expect(
                try await rig.error("aria2.addUri", "[\"\(url)3\"], {\"max-connection-per-server\":\"17\"}").code == 1)

            #expect(
                try await rig.result("aria2.changeGlobalOption", "{\"max-concurrent-downloads\":\"2\"}") as? String
                    == "OK")
            #expect(rig.manager.maxDownloadCount == 2)
            let global = try #require(try await rig.result("aria2.getGlobalOption") as? [String: String])
            #expect(global["max-concurrent-downloads"] == "2")
            #expect(global["rpc-listen-port"] == String(rig.port))
        }
    }

    @Test func speedLimitsChangeOnARunningDownloadAndGlobally() async throws {
        try await ServiceRig.with { rig in
            let digest = try rig.serve("/limited.bin", count: 2 << 20, seed: 12)
            let url = rig.server.httpURL("/limited.bin")
            let events = rig.manager.events()
            let gid = try #require(
                try await rig.result("aria2.addUri", "[\"\(url)\"], {\"max-download-limit\":\"64K\"}") as? String)
            #expect(rig.manager.speedLimit(ofTask: url)?.bytesPerSecond == 64 << 10)
            // At 64 KiB/s the download runs for half a minute: long enough to change it running.
            let progress = await ServiceRig.await(events) {
                if case .progress(url, let received, _) = $0 { return received > 0 }
                return false
            }
            #expect(progress != nil)
            #expect(rig.manager.engine.state(ofTask: url) == .downloading)

            #expect(
                try await rig.result("aria2.changeOption", "\"\(gid)\", {\"max-download-limit\":\"128K\"}")
                    as? String == "OK")
            let options = try #require(try await rig.result("aria2.getOption", "\"\(gid)\"") as? [String: Any])
            #expect(options["max-download-limit"] as? String == "131072")
            #expect(rig.manager.speedLimit(ofTask: url)?.bytesPerSecond == 128 << 10)
            #expect(rig.manager.engine.task(url)?.record.speedLimit?.bytesPerSecond == 128 << 10)
            #expect(rig.manager.engine.state(ofTask: url) == .downloading)
            // aria2's syntax only: a whole number with K or M.
            for bad in ["1G", "-1", "abc", "1.5M", ""] {
                let error = try await rig.error(
                    "aria2.changeOption", "\"\(gid)\", {\"max-download-limit\":\"\(bad)\"}")
                #expect(error.code == 1)
                #expect(
                    error.message
                        == "We encountered a problem while processing the option '--max-download-limit': must be a byte count, with K or M allowed"
                )
                let global = try await rig.error(
                    "aria2.changeGlobalOption", "{\"max-overall-download-limit\":\"\(bad)\"}")
                #expect(global.message.contains("'--max-overall-download-limit'"))
            }
            #expect(rig.manager.speedLimit(ofTask: url)?.bytesPerSecond == 128 << 10)

            #expect(
                try await rig.result("aria2.changeGlobalOption", "{\"max-overall-download-limit\":\"1M\"}")
                    as? String == "OK")
            #expect(rig.manager.overallSpeedLimit?.bytesPerSecond == 1 << 20)
            let global = try #require(try await rig.result("aria2.getGlobalOption") as? [String: String])
            #expect(global["max-overall-download-limit"] == "1048576")
            // Unlimited per download ("0"), under the 1 MiB/s overall limit: it finishes, byte for byte.
            #expect(
                try await rig.result("aria2.changeOption", "\"\(gid)\", {\"max-download-limit\":\"0\"}")
                    as? String == "OK")
            #expect(rig.manager.speedLimit(ofTask: url) == nil)
            let finished = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                if case .failed(url, _) = $0 { return true }
                return false
            }
            guard case .finished(_, let file) = finished else {
                Issue.record("the download did not finish: \(String(describing: finished))")
                return
            }
            #expect(try fileSHA256(file.path) == digest)
            #expect(
                try await rig.result("aria2.changeGlobalOption", "{\"max-overall-download-limit\":\"0\"}")
                    as? String == "OK")
            #expect(rig.manager.overallSpeedLimit == nil)
        }
    }

    @Test func originsAreRefusedUnlessAllowedAndBodiesAreBounded() async throws {
        try await ServiceRig.with(secret: nil, limits: RPCLimits(maxRequestBytes: 4096)) { rig in
            let body = #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion"}"#
            let plain = try await rig.post(body)
            #expect(plain.status == 200 && plain.headers["access-control-allow-origin"] == nil)
            let foreign = try await rig.post(body, headers: ["Origin": "http://evil.example"])
            #expect(foreign.status == 403)
            let same = try await rig.post(body, headers: ["Origin": "http://127.0.0.1"])
            #expect(same.status == 200)
            // DNS rebinding: a page of a domain pointed at this machine, its origin matching its
            // Host. Without a secret only an address or localhost is trusted as the Host.
            let rebound = try await rig.post(
                body, headers: ["Host": "evil.example:\(rig.port)", "Origin": "http://evil.example:\(rig.port)"])
            #expect(rebound.status == 403)
            for host in ["localhost:\(rig.port)", "[::1]:\(rig.port)", "127.0.0.1:\(rig.port)"] {
                #expect(try await rig.post(body, headers: ["Host": host]).status == 200, "\(host)")
            }
            let large = try await rig.post(body + String(repeating: " ", count: 5000))
            #expect(large.status == 413)
            let port = rig.port
            let upgrade = try await onOwnThread {
                try RPCTestClient(port: port).upgradeToWebSocket(origin: "http://evil.example")
            }
            #expect(upgrade != 101)

        }
        try await ServiceRig.with(secret: nil, allowOriginAll: true) { open in
            let body = #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion"}"#
            let allowed = try await open.post(body, headers: ["Origin": "http://evil.example"])
            #expect(allowed.status == 200 && allowed.headers["access-control-allow-origin"] == "*")
            let openPort = open.port
            let preflight = try await onOwnThread {
                try RPCTestClient(port: openPort).request("OPTIONS", headers: ["Origin": "http://evil.example"])
            }
            #expect(
                preflight.status == 200 && preflight.headers["access-control-allow-methods"]?.contains("POST") == true)
        }
    }

    /// The small reads answered on the event loop (ImmediateRPCHandler) answer exactly what the
    /// general path answers, and leave every other call to it.
    @Test func immediateAnswersAreTheGeneralPathsAnswers() async throws {
        try await ServiceRig.with { rig in
            let gid = try #require(
                try await rig.result("aria2.addUri", #"["http://127.0.0.1:9/a.bin"], {"pause": "true"}"#) as? String)
            let dispatcher = rig.service.dispatcher
            func call(_ method: String, _ params: String, id: String = "1", token: String = "s3cret") -> String {
                #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":["token:\#(token)"\#(params)]}"#
            }
            let immediate = [
                call("aria2.getGlobalStat", ""), call("aria2.tellWaiting", ",0,10", id: #""w""#),
                call("aria2.tellActive", #",["gid"]"#), call("aria2.tellStopped", ",-1,5"),
                call("aria2.tellStatus", #",""# + gid + #"",["gid","status"]"#),
                call("aria2.getUris", #",""# + gid + #"""#), call("aria2.getFiles", #",""# + gid + #"""#),
                call("aria2.getOption", #",""# + gid + #"""#), call("aria2.getGlobalOption", "", id: "null"),
                call("aria2.getSessionInfo", ""),
            ]
            for body in immediate {
                let answer = try #require(dispatcher.immediateResponse(to: Array(body.utf8)), "\(body)")
                #expect(answer == (await dispatcher.respond(to: Array(body.utf8))), "\(body)")
            }
            // The same reads failing take the general way, which gives the answer its HTTP status.
            let failing = [
                call("aria2.tellStatus", #","0123456789abcdef""#), call("aria2.getVersion", "", token: "wrong"),
                call("aria2.tellActive", #","keys""#),
            ]
            for body in failing {
                #expect(dispatcher.immediateResponse(to: Array(body.utf8)) == nil, "\(body)")
                #expect((await dispatcher.respondWithStatus(to: Array(body.utf8))).status == 400, "\(body)")
            }
            let general = [
                call("aria2.addUri", #",["http://127.0.0.1:9/b.bin"]"#), call("aria2.pause", #",""# + gid + #"""#),
                call("system.listMethods", ""), call("aria2.noSuchThing", ""),
                "[" + call("aria2.getGlobalStat", "") + "]",
                #"{"jsonrpc":"2.0","id":1,"method":"aria2.getGlobalStat""#, "",
            ]
            for body in general { #expect(dispatcher.immediateResponse(to: Array(body.utf8)) == nil, "\(body)") }
        }
    }

    /// Requests sent in one write are answered in order, also when the first goes the general
    /// way and a later one could have been answered on the event loop.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await ServiceRig.with { rig in
            let stat = #"{"jsonrpc":"2.0","id":ID,"method":"aria2.getGlobalStat","params":["token:s3cret"]}"#
            let add =
                #"{"jsonrpc":"2.0","id":ID,"method":"aria2.addUri","params":["token:s3cret",["http://127.0.0.1:9/pID.bin"],{"pause":"true"}]}"#
            let bodies = [stat, add, stat, stat, add, stat].enumerated().map { index, body in
                body.replacingOccurrences(of: "ID", with: String(index + 1))
            }
            let port = rig.port
            let responses = try await onOwnThread { try RPCTestClient(port: port).postPipelined(bodies) }
            let objects = try responses.map { response in
                #expect(response.status == 200)
                return try #require(
                    try JSONSerialization.jsonObject(with: Data(response.bodyBytes)) as? [String: Any],
                    "\(response.body)")
            }
            #expect(objects.map { $0["id"] as? Int } == [1, 2, 3, 4, 5, 6])
            let waiting = objects.map { ($0["result"] as? [String: Any])?["numWaiting"] as? String }
            #expect(waiting == ["0", nil, "1", "1", nil, "2"])
            // The first was answered in front of Hummingbird (ImmediateRPCHandler, which adds no
            // Date); every later one by its router, since an answer before it was pending.
            #expect(responses.map { $0.headers["date"] == nil } == [true, false, false, false, false, false])
            #expect(responses[0].headers["content-type"] == "application/json-rpc")
        }
    }

    /// Requests cut anywhere and sent in pieces a moment apart are answered in order, whichever
    /// way each goes: read strictly and answered in front of SwiftNIO's HTTP/1 decoder
    /// (RawRPCHandler), handed on alone (an `addUri`), or — after a request in chunked framing,
    /// which only SwiftNIO's decoder reads — handed on for good. Each `getGlobalStat` counts
    /// exactly the paused downloads added before it. Seeded (`PEREGRINE_RAW_SEED`).
    @Test func requestsCutAnywhereAreAnsweredInOrder() async throws {
        for seed in SeededRandom.seeds(from: "PEREGRINE_RAW_SEED", defaults: [1128, 2811, 77]) {
            print("raw requests: seed \(seed)")
            var random = SeededRandom(seed: seed)
            try await ServiceRig.with { rig in
                enum Kind { case stat, add, refused, chunked }
                let count = 40
                let chunkedAt = Bool.random(using: &random) ? Int.random(in: 20..<count, using: &random) : nil
                var kinds: [Kind] = []
                var stream: [UInt8] = []
                for index in 0..<count {
                    let id = index + 1
                    let kind: Kind =
                        index == chunkedAt ? .chunked : [.stat, .stat, .add, .refused].randomElement(using: &random)!
                    kinds.append(kind)
                    let body: String
                    switch kind {
                    case .stat, .chunked:
                        body =
                            #"{"jsonrpc":"2.0","id":\#(id),"method":"aria2.getGlobalStat","params":["token:s3cret"]}"#
                    case .add:
                        body =
                            #"{"jsonrpc":"2.0","id":\#(id),"method":"aria2.addUri","params":["token:s3cret",["http://127.0.0.1:9/raw\#(seed)-\#(id).bin"],{"pause":"true"}]}"#
                    case .refused:
                        body = #"{"jsonrpc":"2.0","id":\#(id),"method":"aria2.tellActive","params":["token:wrong"]}"#
                    }
                    var head = "POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    if Bool.random(using: &random) { head += "connection:   Keep-Alive \t\r\nX-Extra: a b\r\n" }
                    if kind == .chunked {
                        head += "Transfer-Encoding: chunked\r\n\r\n"
                        head += String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
                        stream += Array(head.utf8)
                    } else {
                        head += "content-length: \(body.utf8.count)\r\n\r\n"
                        stream += Array((head + body).utf8)
                    }
                }
                let sizes = (0..<60).map { _ in Int.random(in: 1...400, using: &random) }
                let port = rig.port
                let bytes = stream
                let responses = try await onOwnThread {
                    try RPCTestClient(port: port).sendInPieces(bytes, sizes: sizes, responses: count)
                }
                var added = 0
                for (index, (kind, response)) in zip(kinds, responses).enumerated() {
                    let object = try #require(
                        try JSONSerialization.jsonObject(with: Data(response.bodyBytes)) as? [String: Any],
                        "seed \(seed), request \(index + 1): \(response.body)")
                    // A refused call is answered with aria2's status for an error, 400.
                    #expect(
                        response.status == (kind == .refused ? 400 : 200) && object["id"] as? Int == index + 1,
                        "seed \(seed): \(response.body)")
                    let result = object["result"] as? [String: Any]
                    switch kind {
                    case .stat, .chunked:
                        #expect(result?["numWaiting"] as? String == String(added), "seed \(seed): \(response.body)")
                    case .add:
                        #expect((object["result"] as? String)?.utf8.count == 16, "seed \(seed): \(response.body)")
                        added += 1
                    case .refused:
                        let code = (object["error"] as? [String: Any])?["code"] as? Int
                        #expect(code == 1, "seed \(seed): \(response.body)")
                    }
                }
            }
        }
    }

    /// `aria2.shutdown` over WebSocket: the answer comes, then the service stops (the shutdown
    /// waits for its answer to be written, not for a guess of how long that takes).
    @Test func shutdownOverWebSocketAnswersThenStops() async throws {
        try await ServiceRig.with { rig in
            let port = rig.port
            let secret = rig.secret!
            let answer = try await onOwnThread { () -> String in
                let client = try RPCTestClient(port: port)
                guard client.upgradeToWebSocket() == 101 else { return "no upgrade" }
                client.sendText(
                    #"{"jsonrpc":"2.0","id":"s","method":"aria2.shutdown","params":["token:\#(secret)"]}"#)
                return client.receiveText() ?? "no answer"
            }
            #expect(answer.contains(#""result":"OK""#), "\(answer)")
            #expect(await rig.hasStopped(within: .seconds(60)), "the service did not stop after answering")
        }
    }

    @Test func webSocketCarriesCallsAndNotifications() async throws {
        try await ServiceRig.with { rig in
            let digest = try rig.serve("/ws.bin", count: 120_000, seed: 13)
            let url = rig.server.httpURL("/ws.bin")
            let port = rig.port
            let secret = rig.secret!
            let messages = try await onOwnThread { () -> [String] in
                let client = try RPCTestClient(port: port)
                guard client.upgradeToWebSocket() == 101 else { return ["no upgrade"] }
                var received: [String] = []
                client.sendText(
                    #"{"jsonrpc":"2.0","id":"v","method":"aria2.getVersion","params":["token:\#(secret)"]}"#)
                received.append(client.receiveText() ?? "")
                client.sendText("not json")
                received.append(client.receiveText() ?? "")
                // A batch larger than one default frame (16 KiB), both ways.
                let call = #"{"jsonrpc":"2.0","id":9,"method":"aria2.getVersion","params":["token:\#(secret)"]}"#
                client.sendText("[" + Array(repeating: call, count: 300).joined(separator: ",") + "]")
                let batch = client.receiveText() ?? ""
                guard batch.utf8.count > 16384,
                    (try? JSONSerialization.jsonObject(with: Data(batch.utf8)) as? [Any])?.count == 300
                else { return received + ["bad batch answer of \(batch.utf8.count) bytes"] }
                // A message over the 2 MiB bound gets the size error as its answer, and the
                // connection goes on.
                let padding = String(repeating: "x", count: 3 << 20)
                client.sendText(
                    #"{"jsonrpc":"2.0","id":"big","method":"aria2.getVersion","params":[""# + padding + #""]}"#)
                let tooBig = client.receiveText() ?? ""
                guard tooBig.contains("-32600"), tooBig.contains("exceeds") else {
                    return ["a 3 MiB message was answered \(tooBig.prefix(200))"]
                }
                client.sendText(
                    #"{"jsonrpc":"2.0","id":"a","method":"aria2.addUri","params":["token:\#(secret)",["\#(url)"]]}"#)
                // The answer and the notifications, until the completion.
                while let text = client.receiveText() {
                    received.append(text)
                    if text.contains("onDownloadComplete") || text.contains("onDownloadError") { break }
                }
                return received
            }
            try #require(messages.count >= 4, "\(messages)")
            #expect(messages[0].contains(#""id":"v""#) && messages[0].contains("version"))
            #expect(messages[1].contains("-32700"))
            // The answer and the first notification may come in either order (two writers).
            let answer = try #require(messages.first { $0.contains(#""id":"a""#) }, "\(messages)")
            let added = try #require(
                try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any], "\(messages)")
            let gid = try #require(added["result"] as? String)
            #expect(
                messages.contains(
                    #"{"jsonrpc":"2.0","method":"aria2.onDownloadStart","params":[{"gid":"\#(gid)"}]}"#))
            #expect(
                messages.last
                    == #"{"jsonrpc":"2.0","method":"aria2.onDownloadComplete","params":[{"gid":"\#(gid)"}]}"#)
            #expect(try fileSHA256(rig.downloads + "/ws.bin") == digest)
        }
    }

    @Test func aWebSocketClientThatReadsNothingLosesNotificationsAndSlowsNoOther() async throws {
        try await ServiceRig.with(limits: RPCLimits(notificationBacklogBytes: 1024)) { rig in
            // One slow download holds the only slot; the others wait, so pausing one is a
            // notification and unpausing it makes it wait again, with no transfer.
            // (32 MiB at 200 KB/s: longer than all the rounds take on a loaded machine.)
            try rig.serve("/slow/hold.bin", count: 32 << 20, seed: 15)
            #expect(
                try await rig.result("aria2.changeGlobalOption", #"{"max-concurrent-downloads":"1"}"#) as? String
                    == "OK")
            _ = try await rig.result("aria2.addUri", "[\"\(rig.server.httpURL("/slow/hold.bin"))\"]")
            let port = rig.port
            let secret = rig.secret!
            func multicall(_ method: String, _ params: [String]) async throws -> [Any] {
                let calls = params.map { #"{"methodName":"\#(method)","params":["token:\#(secret)",\#($0)]}"# }
                let body =
                    #"{"jsonrpc":"2.0","id":1,"method":"system.multicall","params":[["#
                    + calls.joined(separator: ",") + "]]}"
                let answer = try await rig.post(body).body
                let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
                return try #require(object?["result"] as? [Any], "\(answer)")
            }
            // Eight downloads: a round pauses and unpauses them, eight notifications (about 760
            // bytes), which the 1 KiB backlog holds for the reading client however late the
            // machine lets it read; the flood of all rounds (95 KB) overflows the other's window.
            let added = try await multicall(
                "aria2.addUri", (0..<8).map { "[\"\(rig.server.httpURL("/w/\($0).bin"))\"]" })
            let gids = added.compactMap { ($0 as? [String])?.first }
            try #require(gids.count == 8, "\(added)")

            // A client that reads nothing through a small window, and one that reads everything.
            let (slow, fast) = try await onOwnThread { () -> (RPCTestClient, RPCTestClient) in
                let slow = try RPCTestClient(port: port, receiveBuffer: 4096)
                let fast = try RPCTestClient(port: port)
                for client in [slow, fast] {
                    guard client.upgradeToWebSocket() == 101 else { throw RPCTestClient.ClientError("no upgrade") }
                    // Answered once the client is subscribed to the notifications.
                    client.sendText(
                        #"{"jsonrpc":"2.0","id":0,"method":"aria2.getVersion","params":["token:\#(secret)"]}"#)
                    guard client.receiveText()?.contains("version") == true else {
                        throw RPCTestClient.ClientError("no answer")
                    }
                }
                return (slow, fast)
            }
            let rounds = 125
            let expected = rounds * gids.count
            let fastCount = SharedCount()
            let reader = Task {
                try await onOwnThread {
                    while fastCount.value < expected, let text = fast.receiveText() {
                        if text.contains("aria2.onDownloadPause") { fastCount.add() }
                    }
                }
            }
            for round in 1...rounds {
                _ = try await multicall("aria2.pause", gids.map { "\"\($0)\"" })
                _ = try await multicall("aria2.unpause", gids.map { "\"\($0)\"" })
                // The next round once the reading client has read this one: its buffers are empty
                // again (the bound only keeps a stalled test from waiting for ever).
                for _ in 0..<6000 where fastCount.value < round * gids.count {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            try await reader.value
            #expect(fastCount.value == expected, "the client that reads lost notifications")

            // The slow client is answered, after what its connection held: fewer notifications.
            let slowCount = try await onOwnThread { () -> Int? in
                slow.sendText(
                    #"{"jsonrpc":"2.0","id":"late","method":"aria2.getVersion","params":["token:\#(secret)"]}"#)
                var count = 0
                while let text = slow.receiveText() {
                    if text.contains(#""id":"late""#) { return count }
                    if text.contains("aria2.onDownloadPause") { count += 1 }
                }
                return nil
            }
            let received = try #require(slowCount, "the slow client's call was not answered")
            #expect(received < expected, "nothing was dropped for the client that read nothing")
            print("the client that read nothing got \(received) of \(expected) notifications")
            // Every notification it lost is counted in /metrics (others too: starts, waits).
            let metrics = try await MetricsTests.samples(try await MetricsTests.get(port, "/metrics").body)
            let dropped = metrics["peregrine_notifications_dropped_total"] ?? 0
            #expect(dropped >= Double(expected - received), "\(dropped) counted, \(expected - received) lost")
        }
    }

    @Test func peregrineMethodsListTrashRestoreAndRename() async throws {
        try await ServiceRig.with { rig in
            var gids: [String] = []
            for name in ["b.bin", "a.bin"] {
                let url = rig.server.httpURL("/t/\(name)")
                gids.append(
                    try #require(
                        try await rig.result("aria2.addUri", "[\"\(url)\"], {\"pause\":\"true\",\"out\":\"\(name)\"}")
                            as? String))
            }
            func listed() async throws -> [[String: String]] {
                let list = try #require(try await rig.result("peregrine.list") as? [String: Any])
                let sections = try #require(list["sections"] as? [[String: Any]])
                #expect(sections.allSatisfy { ($0["title"] as? String)?.isEmpty == false })
                return sections.flatMap { $0["downloads"] as? [[String: String]] ?? [] }
            }
            #expect(try await listed().map { $0["gid"] } == gids)

            #expect(try await rig.result("peregrine.setDisplayName", "\"\(gids[1])\", \"Zebra\"") as? String == "OK")
            #expect(try await listed().first { $0["gid"] == gids[1] }?["displayName"] == "Zebra")
            #expect(try await rig.result("peregrine.sortList", "\"fileName\", \"descending\"") as? String == "OK")
            let sorted = try #require(try await rig.result("peregrine.list") as? [String: Any])
            #expect(sorted["sortType"] as? String == "fileName" && sorted["sortOrder"] as? String == "descending")
            #expect(try await rig.error("peregrine.sortList", "\"manual\"").code == 1)

            #expect(try await rig.result("peregrine.trash", "\"\(gids[0])\"") as? String == gids[0])
            #expect(try await rig.result("peregrine.listTrash") as? [String] == [gids[0]])
            let trashed = try #require(
                try await rig.result("aria2.tellStatus", "\"\(gids[0])\", [\"status\"]") as? [String: String])
            #expect(trashed == ["status": "removed"])
            #expect(try await listed().map { $0["gid"] } == [gids[1]])
            #expect((try await rig.result("aria2.tellStopped", "0, 10") as? [Any])?.isEmpty == true)
            #expect(try await rig.error("peregrine.trash", "\"\(gids[0])\"").code == 1)

            #expect(try await rig.result("peregrine.restore", "\"\(gids[0])\"") as? String == gids[0])
            let restored = try #require(
                try await rig.result("aria2.tellStatus", "\"\(gids[0])\", [\"status\"]") as? [String: String])
            #expect(restored == ["status": "paused"])
            #expect(Set(try await listed().compactMap { $0["gid"] }) == Set(gids))

            #expect(try await rig.result("peregrine.trash", "\"\(gids[1])\"") as? String == gids[1])
            #expect(try await rig.result("peregrine.emptyTrash") as? String == "OK")
            #expect(try await rig.error("aria2.tellStatus", "\"\(gids[1])\"").message.contains("is not found"))
            #expect((try await rig.result("peregrine.listTrash") as? [String])?.isEmpty == true)
        }
    }

    @Test func aStalledClientDoesNotHoldTheShutdown() async throws {
        let rig = try await ServiceRig.start()
        let port = rig.port
        // Requests that never finish — after an answered one, as the first, with half a head,
        // with a head only SwiftNIO's decoder reads — a connection that never sends, and a
        // WebSocket that never speaks, kept open.
        let stalled = try await onOwnThread { () -> [RPCTestClient] in
            let answered = try RPCTestClient(port: port)
            _ = try answered.post(#"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:s3cret"]}"#)
            answered.send(Array("POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{".utf8))
            var clients = [answered]
            for start in [
                "POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{",
                "POST /jsonrpc HTTP/1.1\r\nHo",
                "GET /jsonrpc HTTP/1.1\r\nHo", "POST /jsonrpc HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{", "",
            ] {
                let client = try RPCTestClient(port: port)
                client.send(Array(start.utf8))
                clients.append(client)
            }
            let socket = try RPCTestClient(port: port)
            _ = socket.upgradeToWebSocket()
            return clients + [socket]
        }
        // Bounded, so that a shutdown that waits for the client fails the test instead of hanging.
        let (outcome, continuation) = AsyncStream<Bool>.makeStream()
        Task {
            try? await rig.shutDown()
            continuation.yield(true)
        }
        Task {
            try? await Task.sleep(for: .seconds(30))
            continuation.yield(false)
        }
        var first = outcome.makeAsyncIterator()
        let finished = await first.next() ?? false
        #expect(finished, "the shutdown waited for the stalled clients")
        #expect(stalled.count == 7)
        if finished { await rig.stop() }
    }

    @Test func aRestartedServiceHasTheSameDownloadsGIDsAndStates() async throws {
        let (server, scratch) = try await ServiceRig.makeServer()
        defer {
            server.stop()
            scratch.remove()
        }
        // The first service, its manager released when this closure returns (the store's lock
        // goes with it).
        let (complete, paused) = try await { () async throws -> (String, String) in
            let first = try await ServiceRig.start(shared: (server, scratch))
            try first.serve("/r1.bin", count: 70_000, seed: 14)
            let events = first.manager.events()
            let url = server.httpURL("/r1.bin")
            let complete = try #require(try await first.result("aria2.addUri", "[\"\(url)\"]") as? String)
            _ = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                return false
            }
            let paused = try #require(
                try await first.result(
                    "aria2.addUri", "[\"\(server.httpURL("/r2.bin"))\"], {\"pause\":\"true\",\"split\":\"3\"}")
                    as? String)
            #expect(try await first.result("aria2.shutdown") as? String == "OK")
            try await first.waitUntilStopped()
            return (complete, paused)
        }()

        let second = try await ServiceRig.start(shared: (server, scratch))
        let a = try #require(
            try await second.result("aria2.tellStatus", "\"\(complete)\", [\"status\"]") as? [String: String])
        #expect(a == ["status": "complete"])
        let b = try #require(
            try await second.result("aria2.tellStatus", "\"\(paused)\", [\"status\"]") as? [String: String])
        #expect(b == ["status": "paused"])
        #expect(
            (try await second.result("aria2.getOption", "\"\(paused)\"") as? [String: Any])?["split"] as? String == "3")
        try await second.shutDown()
    }
}

/// A count that threads share.
private final class SharedCount: Sendable {
    private let count = Atomic(0)
    var value: Int { count.load(ordering: .acquiring) }
    func add() { count.add(1, ordering: .releasing) }
}
