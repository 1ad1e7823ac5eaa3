// swift-tools-version: 6.1
import PackageDescription

/// Every module lives under `Modules/<Name>`, every test target under `Tests/<Name>`.
func module(
    _ name: String,
    dependencies: [Target.Dependency] = [],
    exclude: [String] = [],
    resources: [Resource]? = nil,
    swiftSettings: [SwiftSetting]? = nil
) -> Target {
    .target(
        name: name, dependencies: dependencies, path: "Modules/\(name)", exclude: exclude, resources: resources,
        swiftSettings: swiftSettings)
}

func tests(_ name: String, dependencies: [Target.Dependency]) -> Target {
    .testTarget(name: name, dependencies: dependencies, path: "Tests/\(name)")
}

let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")

// The programs, built for release on Linux, link with lld and export none of their symbols: the
// static Swift standard library's link line asks for `-export-dynamic` (46,000 symbols nothing
// looks up), and the loader walks the 130,000 relative relocations of a position-independent
// program at start unless they are packed (DT_RELR, glibc 2.36): 3 MiB of relocations become
// 25 KiB, and the service holds 11 MiB less (Docs/Benchmarks.md, P9).
let programLinking: [LinkerSetting] = [
    .unsafeFlags(
        ["-use-ld=lld", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"],
        .when(platforms: [.linux], configuration: .release))
]

let libraries = [
    "PeregrineCore",
    "PeregrineTransport",
    "PeregrineCurlTransport",
    "PeregrineMockTransport",
    "PeregrineStorage",
    "PeregrineJournal",
    "PeregrinePlistStorage",
    "PeregrineJSONStorage",
    "PeregrineSorting",
    "PeregrineThumbnails",
    "PeregrineAuth",
    "PeregrineChecksums",
    "PeregrineVerification",
    "PeregrineEngine",
    "PeregrinePersistence",
    "PeregrineQueue",
    "Peregrine",
    "PeregrineService",
    "PeregrineTransportTestKit",
    "PeregrineStorageTestKit",
    "PeregrineTestKit",
    "PeregrinePostgresStorage",
    "PeregrineFleet",
]

let package = Package(
    name: "Peregrine",
    platforms: [.macOS(.v15)],
    products: libraries.map { .library(name: $0, targets: [$0]) } + [
        .executable(name: "peregrine", targets: ["peregrine"]),
        .executable(name: "peregrined", targets: ["peregrined"]),
        .executable(name: "peregrine-queue", targets: ["peregrine-queue"]),
    ],
    // Thumbnails (on by default): the facade's thumbnail API and the PeregrineThumbnails target
    // it needs, with libjpeg-turbo and libpng. An app that never shows a thumbnail depends on
    // the package with `traits: []` and links neither (Examples/NoThumbnails). The service and
    // the command-line programs need it.
    traits: [
        .trait(name: "Thumbnails", description: "The facade's thumbnails (libjpeg-turbo, libpng)."),
        .default(enabledTraits: ["Thumbnails"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        // HeapModule: the mock transport's queue of due steps.
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        // The download service's HTTP and WebSocket server (Docs/Service.md says why).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Under Hummingbird: the service's own channel handler (ImmediateRPCHandler) is written on them.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // The service's /metrics: swift-metrics' API, Prometheus' text format (Docs/Service.md).
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // peregrined's settings from the environment and a configuration file.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // The PostgreSQL store's client (PeregrinePostgresStorage only; Docs/PostgresStore.md).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // `swift package generate-documentation` (Scripts/docs.sh); no target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        // Shared value types: no plugins, no C.
        // Kill points (KillPoint.swift) exist in debug builds only: a released program has no
        // variable that makes it kill itself.
        module("PeregrineCore", swiftSettings: [.define("PEREGRINE_KILL_POINTS", .when(configuration: .debug))]),

        // Transport: the protocol, and its two backends.
        module("PeregrineTransport", dependencies: ["PeregrineCore"]),
        .systemLibrary(
            name: "CCurl",
            path: "Modules/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        module("PeregrineCurlTransport", dependencies: ["PeregrineTransport", "CCurl", logging]),
        module(
            "PeregrineMockTransport",
            dependencies: ["PeregrineTransport", .product(name: "HeapModule", package: "swift-collections")]
        ),

        // Storage: the protocol, its value types and the in-memory store; the journaled store
        // engine (snapshot + journal, group commit, crash repair); its two record formats.
        module("PeregrineStorage", dependencies: ["PeregrineCore"]),
        module("PeregrineJournal", dependencies: ["PeregrineCore", "PeregrineStorage"]),
        module("PeregrinePlistStorage", dependencies: ["PeregrineJournal", "PeregrineStorage"]),
        module("PeregrineJSONStorage", dependencies: ["PeregrineJournal", "PeregrineStorage"]),
        // A TaskStore in PostgreSQL, for a queue that several services share (issue 20); the
        // only target that links PostgresNIO. Its rows hold the JSON store's record text.
        module(
            "PeregrinePostgresStorage",
            dependencies: [
                "PeregrineCore", "PeregrineStorage", "PeregrineJournal", "PeregrineJSONStorage", logging,
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),

        // The list model, thumbnails, authentication.
        module("PeregrineSorting", dependencies: ["PeregrineCore"]),
        // The built-in icons are compiled in (BuiltInIconData.swift, Scripts/embed-icons.py), not a
        // resource bundle: its generated accessor would link the whole of Foundation and ICU.
        module("PeregrineThumbnails", dependencies: ["PeregrineCore", "CTurboJPEG", "CPNG"], exclude: ["Icons"]),
        .systemLibrary(
            name: "CTurboJPEG",
            path: "Modules/CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        .systemLibrary(name: "CPNG", path: "Modules/CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        module("PeregrineAuth", dependencies: ["PeregrineCore", "PeregrineTransport", "PeregrineVerification"]),

        // Checksums: value types, checksum files and hashing beside a transfer, over a digest
        // protocol; no C. Verification: that protocol over OpenSSL's EVP interface.
        module("PeregrineChecksums", dependencies: ["PeregrineCore", "PeregrineTransport"]),
        .systemLibrary(
            name: "COpenSSL",
            path: "Modules/COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        module("PeregrineVerification", dependencies: ["PeregrineChecksums", "PeregrineTransport", "COpenSSL"]),

        // The scheduler and the facade.
        // Every dependency is imported: the engine knows no store, no authentication.
        module(
            "PeregrineEngine",
            dependencies: ["PeregrineCore", "PeregrineTransport", "PeregrineChecksums", logging]
        ),
        // Persistence below the facade: the engine with any TaskStore, restored after a crash,
        // its endings announced once they are durable.
        module(
            "PeregrinePersistence",
            dependencies: ["PeregrineEngine", "PeregrineStorage", "PeregrineChecksums", "PeregrineTransport", logging]
        ),
        // The queue: the engine on a store, kept as sorted, sectioned lists with a trash and meta
        // info (SDE's API over any transport and store). No plugin, no C.
        module(
            "PeregrineQueue",
            dependencies: [
                "PeregrineEngine", "PeregrinePersistence", "PeregrineStorage", "PeregrineSorting",
                "PeregrineChecksums", "PeregrineTransport", "PeregrineCore", logging,
            ]
        ),
        // The facade: the queue with the default parts (libcurl, the JSON store, OpenSSL) and
        // thumbnails, named by identifier.
        module(
            "Peregrine",
            dependencies: [
                "PeregrineQueue", "PeregrineCurlTransport", "PeregrineJSONStorage",
                "PeregrineVerification", logging,
                .target(name: "PeregrineThumbnails", condition: .when(traits: ["Thumbnails"])),
            ]
        ),

        // A manager as one service of a fleet sharing a queue (issue 20): claims, lease renewals
        // and batched finishing over the ClaimingTaskQueue protocol; no database client.
        module(
            "PeregrineFleet",
            dependencies: [
                "Peregrine", "PeregrinePersistence", "PeregrineCore",
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]),

        // The download service: aria2-compatible JSON-RPC over HTTP and WebSocket on the facade.
        module(
            "PeregrineService",
            dependencies: [
                "Peregrine", "PeregrineCore", logging,
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The web dashboard: plain HTML, CSS and JavaScript modules, served at `/`.
            resources: [.copy("Dashboard")]
        ),

        // The example command-line program. `peregrine daemon` runs `peregrined` from the same
        // directory, so that `peregrine get` does not load the service's server stack.
        .executableTarget(
            name: "peregrine",
            dependencies: [
                "Peregrine", "PeregrineCurlTransport", "PeregrineVerification", "PeregrineAuth", "PeregrineStorage",
                "PeregrineJSONStorage", "PeregrinePlistStorage", "CCurl", logging,
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/peregrine",
            linkerSettings: programLinking
        ),
        // The download service as its own program: aria2's JSON-RPC on Hummingbird; with
        // `--store postgresql://…` one service of a fleet (the only program linking PostgresNIO).
        .executableTarget(
            name: "peregrined",
            dependencies: [
                "Peregrine", "PeregrineCurlTransport", "PeregrineService", "PeregrineFleet",
                "PeregrinePostgresStorage", logging,
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            path: "Examples/peregrined",
            linkerSettings: programLinking
        ),
        // A persistent download queue on the facade: add, run, list; survives kill -9.
        .executableTarget(
            name: "peregrine-queue",
            dependencies: [
                "Peregrine", "PeregrineAuth", "PeregrineCurlTransport", "PeregrineTransport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/peregrine-queue",
            linkerSettings: programLinking
        ),

        // The Transport conformance suite as a library, for any backend's tests: the scenarios
        // with their expected traces, the runner, and a loopback HTTP server serving them.
        module(
            "PeregrineTransportTestKit",
            dependencies: ["PeregrineCore", "PeregrineTransport", "PeregrineMockTransport", "PeregrineVerification"]),

        // The TaskStore conformance suite as a library: the checks every store must pass.
        module("PeregrineStorageTestKit", dependencies: ["PeregrineStorage"]),

        // What an app's tests need: a manager on a driven virtual clock, scratch directories,
        // an event recorder.
        module("PeregrineTestKit", dependencies: ["Peregrine", "PeregrineMockTransport"]),

        // Test support: nginx and lighttpd launchers, certificates, child processes, a seeded
        // generator; it re-exports the Transport conformance kit.
        .target(
            name: "TestSupport",
            dependencies: ["PeregrineCore", "PeregrineVerification", "PeregrineTransportTestKit"],
            path: "Tests/TestSupport"
        ),

        tests("PeregrineCoreTests", dependencies: ["PeregrineCore", "TestSupport"]),
        tests("PeregrineTransportTests", dependencies: ["PeregrineCore", "PeregrineTransport"]),
        tests(
            "PeregrineMockTransportTests",
            dependencies: ["PeregrineCore", "PeregrineTransport", "PeregrineMockTransport", "TestSupport"]
        ),
        tests(
            "PeregrineCurlTransportTests",
            dependencies: [
                "PeregrineCore", "PeregrineTransport", "PeregrineCurlTransport", "PeregrineMockTransport",
                "TestSupport",
            ]
        ),
        tests(
            "PeregrineVerificationTests",
            dependencies: [
                "PeregrineVerification", "PeregrineCore", "PeregrineEngine", "PeregrineTransport", "TestSupport",
            ]
        ),
        tests(
            "PeregrineAuthTests",
            dependencies: [
                "PeregrineAuth", "PeregrineCore", "PeregrineTransport", "PeregrineMockTransport",
                "PeregrineCurlTransport",
                "PeregrineVerification", "TestSupport",
            ]
        ),
        tests(
            "PeregrineStorageTests",
            dependencies: [
                "PeregrineStorage", "PeregrineJournal", "PeregrinePlistStorage", "PeregrineJSONStorage",
                "PeregrineCore", "PeregrineStorageTestKit", "TestSupport",
            ]
        ),
        tests(
            "PeregrinePostgresStorageTests",
            dependencies: [
                "PeregrinePostgresStorage", "PeregrineStorage", "PeregrineStorageTestKit", "PeregrinePersistence",
                "PeregrineEngine", "PeregrineMockTransport", "TestSupport", logging,
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        tests(
            "PeregrineFleetTests",
            dependencies: [
                "PeregrineFleet", "Peregrine", "PeregrinePostgresStorage", "PeregrineMockTransport", "TestSupport",
            ]
        ),
        tests(
            "PeregrineTests",
            dependencies: [
                "Peregrine", "PeregrineEngine", "PeregrineCore", "PeregrineTransport", "PeregrineMockTransport",
                "PeregrineCurlTransport", "PeregrineStorage", "PeregrineJSONStorage", "PeregrinePlistStorage",
                "PeregrineSorting", "PeregrineThumbnails", "PeregrineVerification", "PeregrineAuth", "PeregrineTestKit",
                "TestSupport",
            ]
        ),
        tests(
            "PeregrineServiceTests",
            dependencies: [
                "PeregrineService", "Peregrine", "PeregrineCore", "PeregrineCurlTransport", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        tests("PeregrineSortingTests", dependencies: ["PeregrineSorting", "PeregrineCore", "TestSupport"]),
        tests("PeregrineThumbnailsTests", dependencies: ["PeregrineThumbnails", "PeregrineCore", "TestSupport"]),
        tests(
            "PeregrineEngineTests",
            dependencies: [
                "PeregrineEngine", "PeregrineCore", "PeregrineTransport", "PeregrineMockTransport",
                "PeregrineCurlTransport", "PeregrineVerification", "TestSupport",
            ]
        ),
        // The documentation's Swift snippets, compiled (Scripts/doc-snippets.py writes them), each
        // in a file of its own with only its own imports, as a reader's file would have them.
        .testTarget(
            name: "DocSnippets",
            dependencies: [
                "Peregrine", "PeregrineEngine", "PeregrinePersistence", "PeregrineJSONStorage",
                "PeregrineCurlTransport",
                "PeregrineMockTransport", "PeregrineTransport", "PeregrineVerification", "PeregrineService",
                "PeregrinePostgresStorage", "PeregrineFleet",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/DocSnippets"
        ),
        tests(
            "PeregrinePersistenceTests",
            dependencies: [
                "PeregrinePersistence", "PeregrineEngine", "PeregrineJSONStorage", "PeregrineJournal",
                "PeregrineMockTransport", "PeregrineStorage", "TestSupport",
            ]
        ),
        tests(
            "TransportConformance",
            // As a third-party backend's tests would: the kit and the backends, nothing else.
            dependencies: ["PeregrineTransportTestKit", "PeregrineCurlTransport", "PeregrineMockTransport"]
        ),
        tests(
            "IntegrationTests",
            dependencies: [
                "PeregrineCore", "PeregrineTransport", "PeregrineCurlTransport", "PeregrineEngine",
                "PeregrineVerification",
                "TestSupport",
            ]
        ),
    ]
)
