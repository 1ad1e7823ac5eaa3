// The download manager's list behaviour from PeregrineQueue with parts picked here: the JSON
// store and the in-memory transport (a server of generated files, so it runs anywhere) — no
// libcurl, no OpenSSL, no thumbnails.
//
//   listed-queue STATE_DIRECTORY
//
// The first run downloads three files into a list sectioned by file size and moves one to the
// trash; a second run finds the same list, trash included, in the store and downloads nothing.

import Foundation
import PeregrineJSONStorage
import PeregrineMockTransport
import PeregrineQueue

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: listed-queue STATE_DIRECTORY\n".utf8))
    exit(64)
}
let root = CommandLine.arguments[1]

let server = MockServer()
let files = [("small.bin", 70_000), ("large.bin", 3 << 20), ("medium.bin", 300_000)]
for (index, (name, size)) in files.enumerated() {
    server.setRoute(
        .file(MockBody.generated(seed: UInt64(index), count: Int64(size)), entityTag: .fixed("\"v1\"")),
        for: "/" + name)
}

do {
    let store = try JSONTaskStore(identifier: "listed", configuration: StoreConfiguration(rootDirectory: root))
    let queue = try DownloadQueue(
        identifier: "listed", transport: MockTransport(server: server), store: store,
        configuration: DownloadEngine.Configuration(directory: root + "/downloads"),
        options: DownloadQueue.Options(isTrashOpened: true))
    print("restored \(queue.allTasksSet.count) task(s)")
    if queue.allTasksSet.isEmpty {
        let handles = try files.map { file throws(DownloadManagerError) in
            try queue.download("http://mock.test/" + file.0)
        }
        for handle in handles { _ = try await handle.value }
        print("downloaded \(handles.count) file(s)")
        queue.sortListBy(type: .fileSize)
        try queue.deleteTasks(["http://mock.test/medium.bin"])
    }
    for (section, title) in queue.sectionTitles.enumerated() {
        let names = (queue.downloadList[section]).compactMap { queue.fileDisplayName(ofTask: $0) }
        print("section \(title): \(names.joined(separator: " "))")
    }
    print("trash: \(queue.toDeleteList.compactMap { queue.fileDisplayName(ofTask: $0) }.joined(separator: " "))")
    try queue.saveData()
} catch {
    FileHandle.standardError.write(Data("listed-queue: \(error)\n".utf8))
    exit(1)
}
