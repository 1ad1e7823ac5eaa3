import Foundation
import Peregrine
import PeregrineService
import TestSupport
import Testing

@testable import PeregrineService

/// aria2's methods about a download's sources and pieces: `changeUri`, `getServers`, the
/// `bitfield` of `tellStatus`, and `numStoppedTotal`, which a purge does not lower.
@Suite(.serialized) struct URIMethodTests {
    @Test func bitfieldsSetAPieceOnlyWhenAllOfItIsHere() {
        let mebibyte: Int64 = 1 << 20
        // Five pieces: two whole ones at the start, half of the third.
        #expect(
            RPCDispatcher.bitfield(total: 5 * mebibyte, pieceLength: mebibyte, have: [0..<(5 * mebibyte / 2)]) == "c0")
        // Ranges that meet cover a piece together; a piece's last byte missing leaves it unset.
        #expect(
            RPCDispatcher.bitfield(
                total: 5 * mebibyte, pieceLength: mebibyte,
                have: [(3 * mebibyte)..<(5 * mebibyte), 0..<(mebibyte / 2), (mebibyte / 2)..<(mebibyte + 10)]) == "98")
        #expect(RPCDispatcher.bitfield(total: 5 * mebibyte, pieceLength: mebibyte, have: [0..<(5 * mebibyte)]) == "f8")
        #expect(RPCDispatcher.bitfield(total: 9 * mebibyte + 1, pieceLength: mebibyte, have: []) == "0000")
        #expect(RPCDispatcher.bitfield(total: 0, pieceLength: mebibyte, have: []) == "")
    }

    @Test func changeUriReplacesTheMirrorsAndGetServersListsTheSources() async throws {
        try await ServiceRig.with { rig in
            let url = rig.server.httpURL("/uris.bin")
            let mirror = rig.server.httpURL("/mirror-a.bin")
            let gid = try #require(
                try await rig.result("aria2.addUri", "[\"\(url)\",\"\(mirror)\"], {\"pause\":\"true\"}") as? String)
            let added = [rig.server.httpURL("/mirror-b.bin"), rig.server.httpURL("/mirror-c.bin")]
            let counts = try await rig.result(
                "aria2.changeUri", "\"\(gid)\", 1, [\"\(mirror)\"], [\"\(added[0])\",\"\(added[1])\"], 1")
            #expect(counts as? [Int] == [1, 2])
            let uris = try #require(try await rig.result("aria2.getUris", "\"\(gid)\"") as? [[String: Any]])
            #expect(uris.compactMap { $0["uri"] as? String } == [url] + added)
            // The download's own URL names it: it stays; a second file does not exist.
            #expect(try await rig.result("aria2.changeUri", "\"\(gid)\", 1, [\"\(url)\"], []") as? [Int] == [0, 0])
            #expect(
                try await rig.error("aria2.changeUri", "\"\(gid)\", 2, [], []").message == "fileIndex is out of range")
            #expect(try await rig.error("aria2.changeUri", "\"\(gid)\", 1, [], [\"ftp:x\"]").code == 1)
            // Only an active download has servers.
            #expect(
                try await rig.error("aria2.getServers", "\"\(gid)\"").message == "No active download for GID#\(gid)")
        }
    }

    @Test func getServersOfAnActiveDownload() async throws {
        try await ServiceRig.with { rig in
            try rig.serve("/slow/servers.bin", count: 2_000_000, seed: 11)
            let url = rig.server.httpURL("/slow/servers.bin")
            let events = rig.manager.events()
            let gid = try #require(try await rig.result("aria2.addUri", "[\"\(url)\"]") as? String)
            _ = await ServiceRig.await(events) {
                if case .progress(url, _, _) = $0 { return true }
                return false
            }
            let servers = try #require(try await rig.result("aria2.getServers", "\"\(gid)\"") as? [[String: Any]])
            #expect(servers.first?["index"] as? String == "1")
            let first = try #require((servers.first?["servers"] as? [[String: Any]])?.first)
            #expect(first["uri"] as? String == url)
            #expect(first["currentUri"] as? String == url)
            #expect(first["downloadSpeed"] is String)
            _ = try await rig.result("aria2.forceRemove", "\"\(gid)\"")
        }
    }

    @Test func aPurgeDoesNotLowerNumStoppedTotal() async throws {
        try await ServiceRig.with { rig in
            try rig.serve("/stopped.bin", count: 70_000, seed: 12)
            let url = rig.server.httpURL("/stopped.bin")
            let events = rig.manager.events()
            let gid = try #require(try await rig.result("aria2.addUri", "[\"\(url)\"]") as? String)
            let finished = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                return false
            }
            #expect(finished != nil)
            let status = try #require(try await rig.result("aria2.tellStatus", "\"\(gid)\"") as? [String: Any])
            #expect(status["bitfield"] as? String == "80", "one piece, here")
            var stat = try #require(try await rig.result("aria2.getGlobalStat") as? [String: Any])
            #expect(stat["numStopped"] as? String == "1")
            #expect(stat["numStoppedTotal"] as? String == "1")
            #expect(try await rig.result("aria2.purgeDownloadResult") as? String == "OK")
            stat = try #require(try await rig.result("aria2.getGlobalStat") as? [String: Any])
            #expect(stat["numStopped"] as? String == "0")
            #expect(stat["numStoppedTotal"] as? String == "1")
        }
    }
}

/// As aria2, a service on the IPv4 loopback answers on the IPv6 one, on the same port.
@Suite struct IPv6LoopbackTests {
    @Test func theServiceAnswersOnTheIPv6LoopbackToo() async throws {
        try await ServiceRig.with { rig in
            let curl = try ChildProcess.executable(named: "curl", debianPackage: "curl")
            let body = #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:\#(rig.secret!)"]}"#
            // The IPv6 listener starts once the IPv4 one is up: a hang guard, not a timing.
            var answer = ""
            let deadline = ContinuousClock.now + .seconds(60)
            while !answer.contains("\"version\""), ContinuousClock.now < deadline {
                let result = try await ChildProcess.run(
                    curl, ["-g", "-s", "--max-time", "5", "-d", body, "http://[::1]:\(rig.port)/jsonrpc"],
                    allowFailure: true)
                answer = result.text
                if !answer.contains("\"version\"") { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(answer.contains("\"version\""), "\(answer)")
        }
    }
}

/// A thumbnail that exists (or an icon where none can be made) is answered at once: the
/// service waits for the thumbnailer only while a real thumbnail is being made.
@Suite struct ThumbnailPatienceTests {
    /// `body` within a hang guard; nil when the guard came first.
    private static func withinGuard(_ body: @escaping @Sendable () async -> Thumbnail?) async -> Thumbnail?? {
        await withTaskGroup(of: Thumbnail??.self) { group in
            group.addTask { .some(await body()) }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return .none
            }
            let first = await group.next() ?? .none
            group.cancelAll()
            return first
        }
    }

    @Test func aThumbnailAtHandIsAnsweredWithoutWaitingThePatience() async throws {
        try await ServiceRig.with { rig in
            var pixels: [UInt8] = []
            for y in 0..<60 {
                for x in 0..<80 { pixels += [UInt8(x), UInt8(y * 4), 64] }
            }
            let png = try RasterImage(width: 80, height: 60, pixelFormat: .rgb8, pixels: pixels).pngData()
            try png.write(to: URL(fileURLWithPath: rig.server.documentPath("/patience.png")))
            let url = rig.server.httpURL("/patience.png")
            let events = rig.manager.events()
            let gid = try #require(try await rig.result("aria2.addUri", "[\"\(url)\"]") as? String)
            _ = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                return false
            }
            let dispatcher = rig.service.dispatcher
            // The first request waits for the thumbnail being made (well within an hour).
            let made = await Self.withinGuard {
                try? await dispatcher.thumbnail(gid: gid, height: 30, patience: .seconds(3600))
            }
            #expect(made??.height == 30, "the thumbnail being made was not answered")
            // Made, it is cached: answered at once, whatever the patience.
            let cached = await Self.withinGuard {
                try? await dispatcher.thumbnail(gid: gid, height: 30, patience: .seconds(3600))
            }
            #expect(cached??.height == 30, "a cached thumbnail waited for the patience")
            // A file that has no thumbnail (not here yet): its icon at once.
            let pending = try #require(
                try await rig.result("aria2.addUri", "[\"\(rig.server.httpURL("/later.iso"))\"], {\"pause\":\"true\"}")
                    as? String)
            let icon = await Self.withinGuard {
                try? await dispatcher.thumbnail(gid: pending, height: 30, patience: .seconds(3600))
            }
            #expect(icon??.height == 30, "an icon waited for the patience")
        }
    }
}
