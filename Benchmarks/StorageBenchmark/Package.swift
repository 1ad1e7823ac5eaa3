// swift-tools-version: 6.0
// P4 (shared BENCHMARKS.md): the stores at 100 000 and 1 000 000 tasks — load, one change
// amortized, durable changes' p99, memory — beside a naive rewrite-everything store (Codable, one
// atomic file) and SQLite through GRDB. Kept apart from the main package so that benchmarks never build with the
// library's tests. Run it through Benchmarks/p4.sh, which builds it in release.
import PackageDescription

// A path dependency's identity is its folder's name, which depends on where the repository was
// cloned: read it instead of guessing.
let repositoryFolder = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "main"

let package = Package(
    name: "StorageBenchmark",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        // The SQLite peer (issue 19): the same tasks in one table, through GRDB.
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "StorageBenchmark",
            dependencies: [
                .product(name: "PeregrineStorage", package: repositoryFolder),
                .product(name: "PeregrineJSONStorage", package: repositoryFolder),
                .product(name: "PeregrinePlistStorage", package: repositoryFolder),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/StorageBenchmark"
        )
    ]
)
