// swift-tools-version: 6.0
import Foundation
import PackageDescription

// libFuzzer harnesses for Peregrine's parsers. Build and run them with Scripts/fuzz.sh, which
// passes `--sanitize fuzzer --sanitize address` so that Peregrine's own modules are instrumented
// too (coverage guidance inside the parsers, not only in the harnesses).
//
// Each harness is an executable target with a single file that defines
// `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`.

// A path dependency's identity is the name of its folder, which is whatever the clone is called
// (`main` here, something else in CI), so the products below name it as found.
let peregrine = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let harnesses: [(name: String, dependencies: [Target.Dependency])] = [
    ("FuzzContentDisposition", [.product(name: "PeregrineEngine", package: peregrine)]),
    ("FuzzAuthChallenge", [.product(name: "PeregrineAuth", package: peregrine)]),
    ("FuzzChecksum", [.product(name: "PeregrineVerification", package: peregrine)]),
    (
        "FuzzStoreRecords",
        [
            .product(name: "PeregrineStorage", package: peregrine),
            .product(name: "PeregrineJournal", package: peregrine),
            .product(name: "PeregrineJSONStorage", package: peregrine),
            .product(name: "PeregrinePlistStorage", package: peregrine),
        ]
    ),
    ("FuzzImageDecoding", [.product(name: "PeregrineThumbnails", package: peregrine)]),
    ("FuzzRawHTTPFraming", [.product(name: "PeregrineService", package: peregrine)]),
    (
        "FuzzRPCRequest",
        [
            .product(name: "PeregrineService", package: peregrine),
            .product(name: "Peregrine", package: peregrine),
            .product(name: "PeregrineMockTransport", package: peregrine),
            .product(name: "PeregrineStorage", package: peregrine),
        ]
    ),
]

let package = Package(
    name: "PeregrineFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "FuzzSupport", path: "Sources/FuzzSupport")
    ]
        + harnesses.map { harness in
            .executableTarget(
                name: harness.name,
                dependencies: ["FuzzSupport"] + harness.dependencies,
                path: "Sources/\(harness.name)"
            )
        }
)
