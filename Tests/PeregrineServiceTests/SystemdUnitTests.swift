import Foundation
import TestSupport
import Testing

/// The systemd units the peregrined package installs (Packaging/systemd) pass `systemd-analyze
/// verify` (their `ExecStart` pointed at the `peregrined` built beside the tests, since verify
/// checks that it runs).
@Suite struct SystemdUnitTests {
    static let units = ["peregrined.service", "peregrine-fleet@.service"]

    @Test(arguments: units)
    func theUnitVerifies(_ unit: String) async throws {
        let analyze = try ChildProcess.executable(named: "systemd-analyze", debianPackage: "systemd")
        let daemon = try #require(FleetDaemonTests.peregrined, "no peregrined beside the tests")
        let scratch = try TemporaryDirectory(prefix: "peregrine-units")
        defer { scratch.remove() }
        let source = DaemonTests.repository + "/Packaging/systemd/" + unit
        let text = try String(contentsOfFile: source, encoding: .utf8)
        #expect(text.contains("ExecStart=/usr/bin/peregrined"), "the unit runs the packaged peregrined")
        // A template is verified as one of its instances (the RPC port).
        let name = unit.replacingOccurrences(of: "@.service", with: "@6800.service")
        let copy = scratch.path(name)
        // verify runs `man` for Documentation=: the page is the package's, not installed here
        // (Scripts/package-test.sh verifies the installed unit with it).
        let checked = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("Documentation=man:") }.joined(separator: "\n")
        try checked.replacingOccurrences(of: "/usr/bin/peregrined", with: daemon).write(
            toFile: copy, atomically: true, encoding: .utf8)
        let result = try await ChildProcess.run(analyze, ["verify", copy], allowFailure: true)
        let complaints = (result.text + result.errorText).split(separator: "\n").filter { $0.contains("peregrine") }
        #expect(result.status == 0 && complaints.isEmpty, "\(result.text)\(result.errorText)")
    }
}
