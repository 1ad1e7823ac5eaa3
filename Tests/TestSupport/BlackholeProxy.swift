import Foundation

/// A TCP proxy in front of a local port that can stop forwarding without closing anything, as a
/// network partition does: packets are dropped, nothing is reset, so a peer waits rather than
/// fails (`Tests/Tools/blackhole_proxy.py`, told "cut", "cutlisteners" and "open" on its
/// standard input).
///
/// The proxy ends with its standard input: ``stop()``, or this process's end.
public final class BlackholeProxy: @unchecked Sendable {
    /// The port the proxy listens on (127.0.0.1).
    public let port: Int
    private let process = Process()
    private let commands = Pipe()
    private let output = Pipe()

    /// Starts a proxy to `targetPort` on 127.0.0.1.
    public init(to targetPort: Int) async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/blackhole_proxy.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, String(targetPort)]
        process.standardOutput = output
        process.standardInput = commands
        try process.run()
        let line = try await Self.nextLine(of: output)
        guard let port = Int(line) else {
            try? commands.fileHandleForWriting.close()
            throw ChildProcessError(command: "blackhole_proxy.py", status: -1, message: "printed \(line)")
        }
        self.port = port
    }

    /// Stops forwarding, in both directions and for new connections; returns once in effect.
    public func cut() async throws { try await send("cut") }

    /// Stops forwarding on the connections that have sent a `LISTEN` so far, and on those only
    /// (later connections are forwarded); returns once in effect.
    public func cutListeners() async throws { try await send("cutlisteners") }

    /// Forwards again (what was held back is dropped); returns once in effect.
    public func open() async throws { try await send("open") }

    /// Ends the proxy (it ends with its input; Foundation reaps it).
    public func stop() { try? commands.fileHandleForWriting.close() }

    deinit { stop() }

    private func send(_ command: String) async throws {
        try commands.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
        let answer = try await Self.nextLine(of: output)
        guard answer == command else {
            throw ChildProcessError(
                command: "blackhole_proxy.py", status: -1, message: "answered \(answer) to \(command)")
        }
    }

    /// The proxy's next line, read on a thread of its own (the read blocks).
    private static func nextLine(of pipe: Pipe) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        var bytes: [UInt8] = []
                        while let byte = try pipe.fileHandleForReading.read(upToCount: 1)?.first, byte != 10 {
                            bytes.append(byte)
                        }
                        return String(decoding: bytes, as: UTF8.self)
                    })
            }.start()
        }
    }
}
