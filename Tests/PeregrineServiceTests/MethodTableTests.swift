import Foundation
import TestSupport
import Testing

@testable import PeregrineService

/// The method table and the dispatcher agree: `system.listMethods` gives the table, each name
/// once, and every listed method is answered (a result, or an error of its own about its
/// parameters or state — never "Method not found").
@Suite struct MethodTableTests {
    @Test func everyListedMethodIsAnswered() async throws {
        try await ServiceRig.with { rig in
            let listed = try #require(try await rig.result("system.listMethods") as? [String])
            #expect(listed == RPCDispatcher.methodTable.map(\.name))
            #expect(Set(listed).count == listed.count, "a method is listed twice: \(listed)")
            // The shutdowns last: they stop the service.
            let shutdowns: Set = ["aria2.shutdown", "aria2.forceShutdown"]
            for method in listed where !shutdowns.contains(method) {
                let response = try await rig.call(method)
                let message = (response["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(!message.hasPrefix("No such method"), "\(method) is listed but not answered: \(response)")
            }
            #expect(try await rig.result("aria2.forceShutdown") as? String == "OK")
            #expect(await rig.hasStopped(within: .seconds(60)), "the service did not stop")
        }
    }

    /// A method's traits fit together: a read the fast paths answer changes nothing, and a
    /// fleet service never both refuses a method and answers it from memory.
    @Test func traitsFitTogether() {
        for method in RPCDispatcher.methodTable {
            if method.traits.contains(.immediate) {
                #expect(method.traits.contains(.readOnly), "\(method.name) is answered at once but not read-only")
            }
            #expect(
                !method.traits.isSuperset(of: [.fleetLocal, .fleetRefused]),
                "\(method.name) is both refused by a fleet service and answered from its memory")
        }
    }
}
