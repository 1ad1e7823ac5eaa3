// swift-tools-version: 6.0
// Peers for Peregrine's benchmarks: what a Swift-on-Linux user would pick instead.
// Kept apart from the main package so the library's dependency graph stays small.
import PackageDescription

let package = Package(
    name: "PeregrinePeers",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ahc-download", targets: ["ahc-download"]),
        .executable(name: "urlsession-download", targets: ["urlsession-download"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.20.0"),
    ],
    targets: [
        .executableTarget(
            name: "ahc-download",
            dependencies: [.product(name: "AsyncHTTPClient", package: "async-http-client")],
            path: "Sources/ahc-download"
        ),
        .executableTarget(
            name: "urlsession-download",
            path: "Sources/urlsession-download"
        ),
    ]
)
