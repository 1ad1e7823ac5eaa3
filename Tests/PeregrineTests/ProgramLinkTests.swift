import Foundation
import TestSupport
import Testing

/// `peregrine` links FoundationEssentials only (issue 14): the whole of Foundation brings ICU's
/// code and data, 8 MiB of a download's resident memory (35 → 27 MiB in P1). A module of the
/// program that imports `Foundation` (or a target with a resource bundle, whose generated
/// accessor does) brings them back; this test names the library that came back.
@Suite struct ProgramLinkTests {
    @Test func peregrineLinksNoFoundationBeyondItsEssentials() async throws {
        let tool = try #require(
            ChildProcess.builtProduct(named: "peregrine"),
            "no peregrine binary beside the tests: build with --build-tests")
        let ldd = try ChildProcess.executable(named: "ldd", debianPackage: "libc-bin")
        let output = try await ChildProcess.run(ldd, [tool])
        let libraries = output.text.split(separator: "\n").compactMap {
            $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        }
        // The debug build links the toolchain's libraries dynamically: each one is listed.
        #expect(libraries.contains { $0.hasPrefix("libFoundationEssentials") }, "\(libraries)")
        for unwanted in [
            "libFoundation.so", "libFoundationNetworking", "libFoundationInternationalization", "lib_FoundationICU",
        ] {
            #expect(!libraries.contains { $0.hasPrefix(unwanted) }, "peregrine links \(unwanted)")
        }
    }
}
