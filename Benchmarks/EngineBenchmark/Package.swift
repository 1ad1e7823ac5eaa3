// swift-tools-version: 6.0
// P7 (shared BENCHMARKS.md): zero-byte tasks through the download engine on the mock transport;
// P2: many small files from nginx through the DownloadManager facade (p2-download).
// Kept apart from the main package so that benchmarks never build with the library's tests.
// Run it through Benchmarks/p7.sh, which builds it in release.
import PackageDescription

// A path dependency's identity is its folder's name, which depends on where the repository was
// cloned: read it instead of guessing.
let repositoryFolder = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "main"

let package = Package(
    name: "EngineBenchmark",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "EngineBenchmark",
            dependencies: [
                .product(name: "PeregrineEngine", package: repositoryFolder),
                .product(name: "PeregrineMockTransport", package: repositoryFolder),
            ],
            path: "Sources/EngineBenchmark"
        ),
        .executableTarget(
            name: "p2-download",
            dependencies: [.product(name: "Peregrine", package: repositoryFolder)],
            path: "Sources/p2-download"
        ),
    ]
)
