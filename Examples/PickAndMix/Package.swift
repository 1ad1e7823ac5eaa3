// swift-tools-version: 6.1
import Foundation
import PackageDescription

// Peregrine picked target by target: the engine, persistence below the facade, the JSON store
// and the in-memory transport — and nothing else. The binary links no libcurl, OpenSSL,
// libjpeg-turbo or libpng (`check.sh` proves it with ldd). The download manager's lists, trash
// and meta info from PeregrineQueue on the same parts: none of them either. And the facade
// without the Thumbnails trait (`traits: []`): no libjpeg-turbo or libpng.

// A path dependency's identity is its folder's name (whatever the clone is called).
let peregrine = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "PickAndMix",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..", traits: [])],
    targets: [
        .executableTarget(
            name: "pick-and-mix",
            dependencies: [
                .product(name: "PeregrineEngine", package: peregrine),
                .product(name: "PeregrinePersistence", package: peregrine),
                .product(name: "PeregrineJSONStorage", package: peregrine),
                .product(name: "PeregrineMockTransport", package: peregrine),
            ]
        ),
        .executableTarget(
            name: "listed-queue",
            dependencies: [
                .product(name: "PeregrineQueue", package: peregrine),
                .product(name: "PeregrineJSONStorage", package: peregrine),
                .product(name: "PeregrineMockTransport", package: peregrine),
            ]
        ),
        .executableTarget(
            name: "facade-without-thumbnails",
            dependencies: [
                .product(name: "Peregrine", package: peregrine),
                .product(name: "PeregrineMockTransport", package: peregrine),
            ]
        ),
    ]
)
