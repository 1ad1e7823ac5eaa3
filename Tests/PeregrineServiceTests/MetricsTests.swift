import Foundation
import TestSupport
import Testing

/// `/healthz`, `/readyz` and `/metrics` as an operator's tools read them: the metrics parsed by
/// the `prometheus-client` Python package's own parser, their numbers checked against what the
/// downloads did and against `aria2.getGlobalStat`.
@Suite struct MetricsTests {
    /// The samples of a `/metrics` text, parsed by prometheus-client: `name{labels}` → value.
    static func samples(_ text: String) async throws -> [String: Double] {
        let python = try ChildProcess.executable(named: "python3", debianPackage: "python3")
        let script = """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            samples = {}
            for family in text_string_to_metric_families(sys.stdin.read()):
                for sample in family.samples:
                    labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()) if k != "le")
                    le = sample.labels.get("le")
                    key = sample.name + ("{" + labels + "}" if labels else "") + (f"[le={le}]" if le else "")
                    samples[key] = sample.value
            print(json.dumps(samples))
            """
        let output = try await ChildProcess.run(python, ["-c", script], input: Data(text.utf8))
        let parsed = try JSONSerialization.jsonObject(with: Data(output.text.utf8)) as? [String: Double]
        return try #require(parsed, "not parsed: \(output.text)")
    }

    static func get(_ port: Int, _ path: String) async throws -> RPCTestClient.Response {
        try await onOwnThread { try RPCTestClient(port: port).request("GET", path: path) }
    }

    @Test func metricsMoveAsDownloadsRunAndTheHealthChecksAnswer() async throws {
        let python = try ChildProcess.executable(named: "python3", debianPackage: "python3")
        let check = try await ChildProcess.run(python, ["-c", "import prometheus_client"], allowFailure: true)
        try #require(check.status == 0, "prometheus-client is missing: pip install prometheus-client==0.26.0")
        try await ServiceRig.with { rig in
            let health = try await Self.get(rig.port, "/healthz")
            #expect(health.status == 200 && health.body == "ok\n")
            let ready = try await Self.get(rig.port, "/readyz")
            #expect(ready.status == 200, "\(ready.body)")

            // The last one small enough to finish before any progress event.
            let sizes = [10_000, 20_000, 30_000, 100]
            for (index, size) in sizes.enumerated() {
                try rig.serve("/m/\(index).bin", count: size, seed: UInt64(60 + index))
                _ = try await rig.result("aria2.addUri", "[\"\(rig.server.httpURL("/m/\(index).bin"))\"]")
            }
            _ = try await rig.result("aria2.addUri", "[\"\(rig.server.httpURL("/m/missing.bin"))\"]")
            _ = try await rig.call("aria2.noSuchMethod")
            _ = try await rig.call("aria2.noSuchMethod2")

            // The counters follow the manager's events: read until every download ended.
            var samples: [String: Double] = [:]
            for _ in 0..<1_200 {
                samples = try await Self.samples(try await Self.get(rig.port, "/metrics").body)
                let ended =
                    (samples["peregrine_downloads_finished_total"] ?? 0)
                    + samples.filter { $0.key.hasPrefix("peregrine_downloads_failed_total{") }.values.reduce(0, +)
                if ended >= 5 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(samples["peregrine_downloads_finished_total"] == 4, "\(samples)")
            #expect(samples[#"peregrine_downloads_failed_total{reason="httpStatus"}"#] == 1, "\(samples)")
            #expect(samples["peregrine_received_bytes_total"] == Double(sizes.reduce(0, +)), "\(samples)")
            #expect(samples[#"peregrine_rpc_calls_total{method="aria2.addUri"}"#] == 5, "\(samples)")
            #expect(samples[#"peregrine_rpc_calls_total{method="unknown"}"#] == 2, "\(samples)")
            #expect(samples[#"peregrine_rpc_call_seconds_count{method="aria2.addUri"}"#] == 5, "\(samples)")
            #expect(samples["peregrine_websocket_clients"] == 0, "\(samples)")

            // Nothing runs any more: the gauges are what getGlobalStat says.
            let stat = try #require(try await rig.result("aria2.getGlobalStat") as? [String: String])
            let again = try await Self.samples(try await Self.get(rig.port, "/metrics").body)
            for (status, key) in [("active", "numActive"), ("waiting", "numWaiting"), ("stopped", "numStopped")] {
                #expect(
                    again["peregrine_downloads{status=\"\(status)\"}"] == stat[key].flatMap(Double.init),
                    "\(status): \(again) against \(stat)")
            }
            #expect(again["peregrine_downloads{status=\"stopped\"}"] == 5)
            #expect(again[#"peregrine_rpc_calls_total{method="aria2.getGlobalStat"}"#] == 1)
        }
    }
}
