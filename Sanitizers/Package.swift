// swift-tools-version: 5.8
import Foundation
import PackageDescription

// The sanitizer runs' test bundle (Scripts/sanitize.sh): only the suites that exercise threads —
// the engine, the facade with its stress test, the curl transport and the stores — for
// ThreadSanitizer, the parsers' suites for AddressSanitizer, and the controls, built against the
// main package by path. A sanitized build of the main package's own test bundle would compile
// every test target and every dependency again (BoringSSL, SwiftNIO, Hummingbird, PostgresNIO);
// this package links none of them.
//
// `Tests/<Suite>` are symbolic links to the main package's `Tests/<Suite>`, so the sources are
// the same files.

// A path dependency's identity is the name of its folder, which is whatever the clone is called
// (`main` here, something else in CI), so the products below name it as found.
let peregrine = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

func product(_ name: String) -> Target.Dependency { .product(name: name, package: peregrine) }

// The suites use the main package's `package` declarations, so they are compiled as part of it
// (`-package-name`, which SwiftPM names after a package's identity with `-` made `_`). SwiftPM
// passes a package's own name after a target's flags, except to a package whose tools version
// predates `package` (5.9): hence tools version 5.8 above, and Swift 6 mode set below.
let samePackage: [SwiftSetting] = [
    .unsafeFlags(["-package-name", peregrine.replacingOccurrences(of: "-", with: "_")])
]

func suite(_ name: String, dependencies: [Target.Dependency], exclude: [String] = []) -> Target {
    .testTarget(
        name: name, dependencies: dependencies, path: "Tests/\(name)", exclude: exclude, swiftSettings: samePackage)
}

let package = Package(
    name: "PeregrineSanitizers",
    dependencies: [.package(path: "..")],
    targets: [
        .target(
            name: "TestSupport",
            dependencies: [
                product("PeregrineCore"), product("PeregrineVerification"),
                product("PeregrineTransportTestKit"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: samePackage
        ),
        suite(
            "PeregrineEngineTests",
            dependencies: [
                product("PeregrineEngine"), product("PeregrineCore"), product("PeregrineTransport"),
                product("PeregrineMockTransport"), product("PeregrineCurlTransport"),
                product("PeregrineVerification"), "TestSupport",
            ]
        ),
        suite(
            "PeregrineTests",
            dependencies: [
                product("Peregrine"), product("PeregrineEngine"), product("PeregrineCore"),
                product("PeregrineTransport"), product("PeregrineMockTransport"),
                product("PeregrineCurlTransport"), product("PeregrineStorage"), product("PeregrineJSONStorage"),
                product("PeregrinePlistStorage"), product("PeregrineSorting"), product("PeregrineThumbnails"),
                product("PeregrineVerification"), product("PeregrineAuth"), product("PeregrineTestKit"),
                "TestSupport",
            ],
            // These run (or inspect) the `peregrine` and `peregrine-queue` programs, which this
            // package does not build; their threads are another process's.
            exclude: [
                "GetCommandTests.swift", "PeregrineQueueTests.swift", "KillPointTests.swift", "ProgramLinkTests.swift",
            ]
        ),
        suite(
            "PeregrineCurlTransportTests",
            dependencies: [
                product("PeregrineCore"), product("PeregrineTransport"), product("PeregrineCurlTransport"),
                product("PeregrineMockTransport"), "TestSupport",
            ]
        ),
        suite(
            "PeregrineStorageTests",
            dependencies: [
                product("PeregrineStorage"), product("PeregrineJournal"), product("PeregrinePlistStorage"),
                product("PeregrineJSONStorage"), product("PeregrineCore"), product("PeregrineStorageTestKit"),
                "TestSupport",
            ]
        ),
        // The parsers' suites, for the AddressSanitizer run (Scripts/sanitize.sh --address runs
        // their parser tests only, with FileNamingTests and StoreFormatTests from the suites above).
        suite(
            "PeregrineAuthTests",
            dependencies: [
                product("PeregrineAuth"), product("PeregrineCore"), product("PeregrineTransport"),
                product("PeregrineMockTransport"), product("PeregrineCurlTransport"),
                product("PeregrineVerification"), "TestSupport",
            ]
        ),
        suite(
            "PeregrineVerificationTests",
            dependencies: [
                product("PeregrineVerification"), product("PeregrineCore"), product("PeregrineEngine"),
                product("PeregrineTransport"), "TestSupport",
            ]
        ),
        suite(
            "PeregrineThumbnailsTests",
            dependencies: [product("PeregrineThumbnails"), product("PeregrineCore"), "TestSupport"]
        ),
        // A deliberate data race and a deliberate lock-order inversion, each run alone by
        // Scripts/sanitize.sh, which fails unless ThreadSanitizer reports it.
        suite("SanitizerControls", dependencies: [product("PeregrineCore")]),
    ],
    swiftLanguageVersions: [.version("6")]
)
