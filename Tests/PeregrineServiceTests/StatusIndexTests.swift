import Foundation
import Peregrine
import PeregrineService
import Testing

/// `tellActive`, `tellWaiting` and `getGlobalStat` read a status index kept between changes:
/// every change made through the service must show in the very next call.
@Suite struct StatusIndexTests {
    @Test func listsAndCountsFollowEveryChangeMadeThroughTheService() async throws {
        try await ServiceRig.with { rig in
            func counts() async throws -> (waiting: String?, active: String?) {
                let stat = try #require(try await rig.result("aria2.getGlobalStat") as? [String: String])
                return (stat["numWaiting"], stat["numActive"])
            }
            func waiting() async throws -> [String] {
                let list = try #require(
                    try await rig.result("aria2.tellWaiting", "0, 100, [\"gid\"]") as? [[String: String]])
                return list.compactMap { $0["gid"] }
            }
            #expect(try await counts().waiting == "0")
            var gids: [String] = []
            for name in ["i1", "i2", "i3"] {
                let url = rig.server.httpURL("/\(name).bin")
                gids.append(
                    try #require(try await rig.result("aria2.addUri", "[\"\(url)\"], {\"pause\":\"true\"}") as? String))
                // Read after every change: a kept index must not hide the next one.
                #expect(try await waiting() == gids)
                #expect(try await counts().waiting == String(gids.count))
            }
            #expect(try await rig.result("aria2.changePosition", "\"\(gids[2])\", 0, \"POS_SET\"") as? Int == 0)
            #expect(try await waiting() == [gids[2], gids[0], gids[1]])
            #expect(try await rig.result("aria2.remove", "\"\(gids[0])\"") as? String == gids[0])
            // Only membership: deleting a task makes the facade push its own (add-time) order
            // into the engine again, which undoes changePosition (as before the index).
            let afterRemove = try await waiting()
            #expect(Set(afterRemove) == [gids[2], gids[1]], "\(afterRemove) after removing \(gids[0]) from \(gids)")
            #expect(try await counts() == ("2", "0"))
            #expect(try await rig.result("aria2.tellActive") as? [Any] != nil)
            #expect((try await rig.result("aria2.tellActive") as? [Any])?.isEmpty == true)
        }
    }

    @Test func aChangeTheApplicationMakesShowsOnceTheServiceHasItsEvent() async throws {
        try await ServiceRig.with { rig in
            #expect(try await rig.result("aria2.tellWaiting", "0, 10") as? [Any] != nil)  // the index is kept now
            let url = rig.server.httpURL("/direct.bin")
            _ = try rig.manager.download([DownloadItem(url)])
            // No sleep: the answer is awaited, bounded, and must come.
            var seen = false
            for _ in 0..<600 where !seen {
                let list = try #require(try await rig.result("aria2.tellWaiting", "0, 10, [\"status\"]") as? [Any])
                seen = list.count == 1
                if !seen { await Task.yield() }
            }
            #expect(seen, "a download the application added never showed in tellWaiting")
        }
    }
}
