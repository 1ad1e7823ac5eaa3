// A persistent download queue from four Peregrine targets: the engine, persistence, the JSON
// store and the in-memory transport (a server of generated files, so it runs anywhere).
//
//   pick-and-mix STATE_DIRECTORY
//
// Run it twice: the first run downloads three files, the second finds them finished in the
// store and downloads nothing.

import Foundation
import PeregrineEngine
import PeregrineJSONStorage
import PeregrineMockTransport
import PeregrinePersistence

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: pick-and-mix STATE_DIRECTORY\n".utf8))
    exit(64)
}
let root = CommandLine.arguments[1]

let server = MockServer()
let files = [("a.bin", 300_000), ("b.bin", 70_000), ("c.bin", 1 << 20)]
for (index, (name, size)) in files.enumerated() {
    server.setRoute(
        .file(MockBody.generated(seed: UInt64(index), count: Int64(size)), entityTag: .fixed("\"v1\"")),
        for: "/" + name)
}

do {
    let store = try JSONTaskStore(identifier: "pick-and-mix", configuration: StoreConfiguration(rootDirectory: root))
    let queue = try PersistentQueue(
        transport: MockTransport(server: server),
        configuration: DownloadEngine.Configuration(directory: root + "/downloads"), store: store)
    print("restored \(queue.restoreResult.restored.count) task(s)")
    let events = queue.events()
    let added = queue.engine.download(files.map { DownloadItem("http://mock.test/" + $0.0) }).added
    print("added \(added.count) task(s)")
    var left = Set(added)
    if !left.isEmpty {
        for await event in events {
            switch event {
            case .finished(let url, _):
                left.remove(url)
                print("finished \(url)")
            case .failed(let url, let reason):
                left.remove(url)
                print("failed \(url): \(reason)")
            default:
                break
            }
            if left.isEmpty { break }
        }
    }
    for url in queue.engine.urlStrings() {
        print("\(url) \(queue.engine.state(ofTask: url))")
    }
    try queue.close()
} catch {
    FileHandle.standardError.write(Data("pick-and-mix: \(error)\n".utf8))
    exit(1)
}
