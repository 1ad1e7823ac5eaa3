// swift-tools-version: 6.0
// P5 (shared BENCHMARKS.md): the download list's sorts, bulk insertion and lookups at 100 000
// tasks. Kept apart from the main package so that benchmarks never build with the library's tests.
// Run it through Benchmarks/p5.sh, which builds it in release.
import PackageDescription

// A path dependency's identity is its folder's name, which depends on where the repository was
// cloned: read it instead of guessing.
let repositoryFolder = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "main"

let package = Package(
    name: "SortingBenchmark",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "SortingBenchmark",
            dependencies: [.product(name: "PeregrineSorting", package: repositoryFolder)],
            path: "Sources/SortingBenchmark"
        )
    ]
)
