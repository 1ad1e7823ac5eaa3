// swift-tools-version: 6.0
// Issue 20: the PostgreSQL store beside the journal (JSON) store — put, progress, load, and a
// list of 10,000 with one item changed. Kept apart from the main package so that benchmarks
// never build with the library's tests. Run it through Benchmarks/pgstore.sh, which builds it
// in release and starts a PostgreSQL of its own.
import PackageDescription

// A path dependency's identity is its folder's name, which depends on where the repository was
// cloned: read it instead of guessing.
let repositoryFolder = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "main"

let package = Package(
    name: "PostgresStoreBenchmark",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "PostgresStoreBenchmark",
            dependencies: [
                .product(name: "PeregrineStorage", package: repositoryFolder),
                .product(name: "PeregrineJSONStorage", package: repositoryFolder),
                .product(name: "PeregrinePostgresStorage", package: repositoryFolder),
            ],
            path: "Sources/PostgresStoreBenchmark"
        ),
        // P10 (Benchmarks/p10.sh): claim-and-finish through one shared queue by N services.
        .executableTarget(
            name: "FleetBenchmark",
            dependencies: [
                .product(name: "PeregrineStorage", package: repositoryFolder),
                .product(name: "PeregrinePostgresStorage", package: repositoryFolder),
            ],
            path: "Sources/FleetBenchmark"
        ),
    ]
)
