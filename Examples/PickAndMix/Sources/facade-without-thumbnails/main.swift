// The DownloadManager facade built without the Thumbnails trait (this package depends on
// Peregrine with `traits: []`): the SDE-style manager, its store and its list, and no
// libjpeg-turbo or libpng in the binary (`check.sh` proves it with ldd). Files come from the
// in-memory transport, so it runs anywhere.
//
//   facade-without-thumbnails STATE_DIRECTORY
//
// Run it twice: the first run downloads two files, the second finds them in the store.

import Foundation
import Peregrine
import PeregrineMockTransport

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: facade-without-thumbnails STATE_DIRECTORY\n".utf8))
    exit(64)
}
let root = CommandLine.arguments[1]

let server = MockServer()
let files = [("photo.jpg", 120_000), ("notes.pdf", 40_000)]
for (index, (name, size)) in files.enumerated() {
    server.setRoute(
        .file(MockBody.generated(seed: UInt64(index), count: Int64(size)), entityTag: .fixed("\"v1\"")),
        for: "/" + name)
}

do {
    let manager = try DownloadManager(
        identifier: "no-thumbnails",
        configuration: DownloadManager.Configuration(
            downloadDirectory: root + "/downloads", stateDirectory: root, transport: MockTransport(server: server)))
    for (name, _) in files {
        // Idempotent: a file the store already has is reported at once, not fetched again.
        let location = try await manager.download("http://mock.test/" + name).value
        print("\(name) at \(location.lastPathComponent), kind \(manager.fileType(ofTask: "http://mock.test/" + name) ?? "?")")
    }
    print("requests \(server.requests.count)")
} catch {
    FileHandle.standardError.write(Data("facade-without-thumbnails: \(error)\n".utf8))
    exit(1)
}
