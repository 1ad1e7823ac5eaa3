import Foundation
import Peregrine
import PeregrineService
import TestSupport
import Testing

/// The `peregrine.*` methods the dashboard uses, over HTTP on the service (no browser): the list
/// view with its rows, the five sort types, sectioning, manual moves and titles, adding into a
/// list and section, the trash, deleting for good, the revision counter.
@Suite struct DashboardMethodTests {
    /// The GIDs of a list view, section by section.
    private func sections(_ rig: ServiceRig, _ list: String = "") async throws -> [[String]] {
        let view = try #require(try await rig.result("peregrine.listView", "\"\(list)\"") as? [String: Any])
        let sections = try #require(view["sections"] as? [[String: Any]])
        return sections.map { (($0["downloads"] as? [[Any]]) ?? []).compactMap { $0.first as? String } }
    }

    private func addPaused(_ rig: ServiceRig, _ uris: [String], options: String = "{\"pause\":true}") async throws
        -> [[String: Any]]
    {
        let list = "[" + uris.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        return try #require(try await rig.result("peregrine.addUris", "\(list), \(options)") as? [[String: Any]])
    }

    @Test func theListViewHasEveryRowAndTheModelsSortAndSectioning() async throws {
        try await ServiceRig.with { rig in
            let base = rig.server.httpBaseURL
            let added = try await addPaused(rig, ["\(base)/v/b.bin", "\(base)/v/a.bin", "\(base)/v/c.bin"])
            let gids = added.compactMap { $0["gid"] as? String }
            #expect(gids.count == 3, "\(added)")
            let view = try #require(try await rig.result("peregrine.listView") as? [String: Any])
            #expect(view["sortType"] as? String == "addTime")
            #expect(
                view["sectioning"] as? [String: Bool] == ["addTime": false, "fileSize": false, "fileNameIndex": false])
            #expect(
                view["fields"] as? [String] == ["gid", "name", "status", "total", "done", "kind", "speed"])
            let rows = ((view["sections"] as? [[String: Any]])?.first?["downloads"] as? [[Any]]) ?? []
            #expect(rows.map { $0.first as? String } == gids)
            let first = try #require(rows.first)
            #expect(first.count == 7)
            #expect(first[1] as? String == "b")
            #expect(first[2] as? String == "paused")
            #expect(first[3] as? Int == 0 && first[4] as? Int == 0 && first[6] as? Int == 0)
            #expect(first[5] as? String == "Other")

            #expect(try await rig.result("peregrine.setSort", "\"fileName\", \"descending\"") as? String == "OK")
            #expect(try await sections(rig) == [[gids[2], gids[0], gids[1]]])
            #expect(
                try await rig.result("peregrine.setSectioning", "{\"fileNameIndex\": true}") as? String == "OK")
            let indexed = try #require(try await rig.result("peregrine.listView") as? [String: Any])
            let titles = (indexed["sections"] as? [[String: Any]])?.compactMap { $0["title"] as? String }
            #expect(titles == ["C", "B", "A"])
            #expect(indexed["complete"] as? Bool == true)

            // The first rows only (the dashboard's first screenful): every section keeps its count.
            let firstTwo = try #require(try await rig.result("peregrine.listView", "\"\", 2") as? [String: Any])
            let partial = try #require(firstTwo["sections"] as? [[String: Any]])
            #expect(partial.map { $0["count"] as? Int } == [1, 1, 1])
            #expect(partial.map { ($0["downloads"] as? [[Any]])?.count } == [1, 1, 0])
            #expect(firstTwo["complete"] as? Bool == false)
            let allThree = try #require(try await rig.result("peregrine.listView", "\"\", 3") as? [String: Any])
            #expect(allThree["complete"] as? Bool == true)
            #expect(try await rig.error("peregrine.listView", "\"\", -1").message.contains("must not be negative"))
            #expect(try await rig.error("peregrine.listView", "\"\", \"2\"").message.contains("wrong type"))
            #expect(
                try await rig.error("peregrine.setSectioning", "{\"fileSize\": 1}").message.contains("true or false"))
            #expect(try await rig.error("peregrine.setSort", "\"bySomething\"").message.contains("Unknown sort type"))
            #expect(try await rig.error("peregrine.listView", "\"no such list\"").message.contains("No list named"))
            #expect(try await rig.result("peregrine.lists") as? [String] == [""])
        }
    }

    @Test func manualModeMovesTasksAndNamesSections() async throws {
        try await ServiceRig.with { rig in
            let base = rig.server.httpBaseURL
            let added = try await addPaused(rig, ["\(base)/m/1.bin", "\(base)/m/2.bin", "\(base)/m/3.bin"])
            let gids = added.compactMap { $0["gid"] as? String }
            #expect(try await rig.result("peregrine.setSort", "\"manual\"") as? String == "OK")
            #expect(try await sections(rig) == [gids])
            // Moving before an earlier row, then into a new section.
            #expect(try await rig.result("peregrine.moveTask", "\"\(gids[2])\", 0, 0") as? String == "OK")
            #expect(try await sections(rig) == [[gids[2], gids[0], gids[1]]])
            #expect(try await rig.result("peregrine.insertSection", "1, \"Later\"") as? String == "OK")
            #expect(try await rig.result("peregrine.moveTask", "\"\(gids[0])\", 1, 0") as? String == "OK")
            #expect(try await sections(rig) == [[gids[2], gids[1]], [gids[0]]])
            #expect(try await rig.result("peregrine.renameSection", "0, \"First <b>\"") as? String == "OK")
            let view = try #require(try await rig.result("peregrine.listView") as? [String: Any])
            let titles = (view["sections"] as? [[String: Any]])?.compactMap { $0["title"] as? String }
            #expect(titles == ["First <b>", "Later"])
            #expect(try await rig.error("peregrine.moveTask", "\"\(gids[0])\", 5, 0").code == 1)
            // Adding in manual mode goes to the section asked for; a checksum is refused there.
            let more = try await addPaused(rig, ["\(base)/m/4.bin"], options: "{\"pause\":true,\"section\":0}")
            let fourth = try #require(more.first?["gid"] as? String)
            #expect(try await sections(rig) == [[gids[2], gids[1], fourth], [gids[0]]])
            let refused = try await addPaused(
                rig, ["\(base)/m/5.bin"], options: "{\"checksum\":\"sha-256=\(String(repeating: "0", count: 64))\"}")
            #expect((refused.first?["error"] as? String)?.contains("manual mode") == true, "\(refused)")
            // aria2's addUri knows nothing of sections: the download goes to the end of the last.
            let viaAria2 = try #require(
                try await rig.result("aria2.addUri", "[\"\(base)/m/6.bin\"], {\"pause\":\"true\"}") as? String)
            #expect(try await sections(rig) == [[gids[2], gids[1], fourth], [gids[0], viaAria2]])
            // Back to a predefined sort.
            #expect(try await rig.result("peregrine.setSort", "\"fileName\"") as? String == "OK")
            #expect(try await sections(rig).count == 1)
        }
    }

    @Test func addingReportsEachURIAndTakesAListAndAChecksum() async throws {
        try await ServiceRig.with { rig in
            let base = rig.server.httpBaseURL
            let results = try await addPaused(rig, ["\(base)/x/1.bin", "ftp://nope/x", "\(base)/x/1.bin"])
            #expect(results.count == 3)
            let gid = try #require(results[0]["gid"] as? String)
            #expect(results[1]["error"] != nil && results[1]["gid"] == nil)
            #expect(results[2]["gid"] as? String == gid && results[2]["existing"] as? Bool == true)
            #expect(
                try await rig.error("peregrine.addUris", "[\"\(base)/a\", \"\(base)/b\"], {\"checksum\":\"md5=00\"}")
                    .message.contains("one URI"))
            let bad = try await addPaused(rig, ["\(base)/x/2.bin"], options: "{\"checksum\":\"sha-256=zz\"}")
            #expect((bad.first?["error"] as? String)?.contains("checksum") == true, "\(bad)")
            // Another list: a new tab.
            let other = try await addPaused(rig, ["\(base)/x/3.bin"], options: "{\"pause\":true,\"list\":\"work\"}")
            let otherGID = try #require(other.first?["gid"] as? String)
            #expect(try await rig.result("peregrine.lists") as? [String] == ["", "work"])
            #expect(try await sections(rig, "work") == [[otherGID]])
            #expect(!(try await sections(rig)).joined().contains(otherGID))
        }
    }

    @Test func theTrashRestoresCleansUpAndDeletesForGood() async throws {
        try await ServiceRig.with { rig in
            let base = rig.server.httpBaseURL
            let gids = try await addPaused(rig, ["\(base)/t/1.bin", "\(base)/t/2.bin", "\(base)/t/3.bin"])
                .compactMap { $0["gid"] as? String }
            let before = try #require(try await rig.result("peregrine.listRevision") as? Int)
            _ = try await rig.result("peregrine.trash", "\"\(gids[0])\"")
            _ = try await rig.result("peregrine.trash", "\"\(gids[1])\"")
            let trash = try #require(try await rig.result("peregrine.trashView") as? [[String: Any]])
            #expect(trash.compactMap { $0["gid"] as? String } == [gids[1], gids[0]])
            #expect(trash.first?["status"] as? String == "removed")
            #expect(trash.first?["url"] as? String == "\(base)/t/2.bin")
            #expect(try await sections(rig).joined().elementsEqual([gids[2]]))
            // The revision counts what changed the lists (the events arrive asynchronously).
            var after = before
            for _ in 0..<200 where after == before {
                after = try #require(try await rig.result("peregrine.listRevision") as? Int)
                if after == before { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(after > before)

            _ = try await rig.result("peregrine.untrash", "\"\(gids[0])\"")
            #expect(Set(try await sections(rig).joined()) == [gids[0], gids[2]])
            #expect(try await rig.error("peregrine.untrash", "\"\(gids[0])\"").message.contains("not in the trash"))
            _ = try await rig.result("peregrine.cleanUp", "\"\(gids[1])\"")
            #expect(try await rig.result("peregrine.listTrash") as? [String] == [])
            #expect(try await rig.error("aria2.tellStatus", "\"\(gids[1])\"").message.contains("is not found"))
            #expect(try await rig.error("peregrine.cleanUp", "\"\(gids[0])\"").message.contains("not in the trash"))
            _ = try await rig.result("peregrine.delete", "\"\(gids[0])\"")
            #expect(try await sections(rig).joined().elementsEqual([gids[2]]))
            #expect(try await rig.error("aria2.tellStatus", "\"\(gids[0])\"").message.contains("is not found"))
        }
    }

    @Test func stopAndRestartAndTheBearerTokenForThumbnails() async throws {
        try await ServiceRig.with { rig in
            try rig.serve("/r/file.bin", count: 20_000, seed: 90)
            let url = rig.server.httpURL("/r/file.bin")
            let gid = try #require(try await rig.result("aria2.addUri", "[\"\(url)\"]") as? String)
            var status = ""
            for _ in 0..<600 where status != "complete" {
                let object = try await rig.result("aria2.tellStatus", "\"\(gid)\", [\"status\"]") as? [String: Any]
                status = object?["status"] as? String ?? ""
                if status != "complete" { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(status == "complete")
            #expect(try await rig.result("peregrine.restart", "\"\(gid)\"") as? String == gid)
            _ = try await rig.result("peregrine.stop", "\"\(gid)\"")
            let port = rig.port
            let secret = try #require(rig.secret)
            let answer = try await onOwnThread {
                try RPCTestClient(port: port).request(
                    "GET", path: "/thumbnail/\(gid)?height=32", headers: ["Authorization": "Bearer \(secret)"])
            }
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"] == "image/png")
            let refused = try await onOwnThread {
                try RPCTestClient(port: port).request(
                    "GET", path: "/thumbnail/\(gid)?height=32", headers: ["Authorization": "Bearer wrong"])
            }
            #expect(refused.status == 401)
            #expect(try await rig.error("peregrine.stop").message.contains("missing"))
            let methods = try #require(try await rig.result("system.listMethods") as? [String])
            #expect(methods.contains("peregrine.listView") && methods.contains("peregrine.addUris"))
        }
    }
}
