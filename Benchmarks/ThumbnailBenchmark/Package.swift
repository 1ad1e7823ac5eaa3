// swift-tools-version: 6.0
// P8 of shared/BENCHMARKS.md: 4000 × 3000 JPEGs to 128-pixel-high thumbnails with Peregrine's
// thumbnail pipeline, timed per image. Run through Benchmarks/p8.sh, which also runs the peers
// (vipsthumbnail, ImageMagick) in the same session. Kept apart from the main package.
import PackageDescription

let package = Package(
    name: "ThumbnailBenchmark",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Peregrine", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "thumbnail-benchmark",
            dependencies: [.product(name: "PeregrineThumbnails", package: "Peregrine")],
            path: "Sources/thumbnail-benchmark"
        )
    ]
)
