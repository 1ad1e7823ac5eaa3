import ArgumentParser
import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `peregrine watch`: a running service's notifications (start, pause, stop, complete, error)
/// as they come over WebSocket, and the active downloads' progress once a second.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Show a running service's downloads live: notifications, and progress every second.",
        discussion: "Runs until interrupted or until the service stops (exit 0); 2 when it cannot be reached.")

    @OptionGroup var rpc: RPCClientOptions

    @Flag(help: "Print only notifications, no progress lines.")
    var quiet = false

    /// What the watch loop reacts to.
    enum Event: Sendable {
        case notification(String)
        case tick
        case closed
    }

    func run() async throws {
        let client = rpc.client
        let connection: WebSocketConnection
        do {
            connection = try WebSocketConnection(url: client.url)
        } catch let error as ExitError {
            printError(error.message)
            throw ExitCode(error.status)
        }
        // A call answered over the socket proves the service has this client among those it
        // notifies; then the first line says the watch listens: nothing from now on is missed.
        connection.sendText(#"{"jsonrpc":"2.0","id":"peregrine-watch","method":"system.listNotifications"}"#)
        var early: [String] = []
        while true {
            guard let text = connection.receiveText() else { throw ExitCode(2) }
            if text.contains(#""id":"peregrine-watch""#) { break }
            early.append(text)
        }
        print(["event": "connected"])
        let (events, continuation) = AsyncStream<Event>.makeStream()
        for text in early { continuation.yield(.notification(text)) }
        // The socket is read with blocking calls, off the cooperative threads.
        DispatchQueue.global().async {
            while let text = connection.receiveText() { continuation.yield(.notification(text)) }
            continuation.yield(.closed)
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                continuation.yield(.tick)
            }
        }
        defer { ticker.cancel() }
        for await event in events {
            switch event {
            case .closed:
                return
            case .notification(let text):
                guard let object = (try? JSONText.parse(text)) as? [String: Any],
                    let method = object["method"] as? String,
                    let gid = ((object["params"] as? [[String: Any]])?.first?["gid"]) as? String
                else { continue }
                let name = method.replacing("aria2.onDownload", with: "").lowercased()
                var line: [String: Any] = ["event": name, "gid": gid]
                if name == "complete" || name == "error",
                    let status = try? await client.call("aria2.tellStatus", [gid, ["files", "errorMessage"]])
                        as? [String: Any]
                {
                    if let path = ((status["files"] as? [[String: Any]])?.first?["path"]) as? String {
                        line["path"] = path
                    }
                    if let message = status["errorMessage"] as? String, !message.isEmpty { line["message"] = message }
                }
                print(line)
            case .tick:
                guard !quiet,
                    let active = try? await client.call(
                        "aria2.tellActive", [["gid", "completedLength", "totalLength", "downloadSpeed"]])
                        as? [[String: Any]]
                else { continue }
                for entry in active {
                    print([
                        "event": "progress", "gid": entry["gid"] as? String ?? "",
                        "completedLength": Int64(entry["completedLength"] as? String ?? "") ?? 0,
                        "totalLength": Int64(entry["totalLength"] as? String ?? "") ?? 0,
                        "downloadSpeed": Int64(entry["downloadSpeed"] as? String ?? "") ?? 0,
                    ])
                }
            }
        }
    }

    /// One line: JSON with `--json`, else `EVENT GID [details]`.
    private func print(_ line: [String: Any]) {
        if rpc.json {
            writeToStandardOutput(ClientCommand.jsonLine(line) + "\n")
            return
        }
        if line["event"] as? String == "connected" {
            writeToStandardOutput("connected to \(rpc.url)\n")
            return
        }
        var text = "\(line["event"] ?? "")\t\(line["gid"] ?? "")"
        if let completed = line["completedLength"], let total = line["totalLength"], let speed = line["downloadSpeed"] {
            text += "\t\(completed)/\(total)\t\(speed) B/s"
        }
        if let path = line["path"] { text += "\t\(path)" }
        if let message = line["message"] { text += "\t\(message)" }
        writeToStandardOutput(text + "\n")
    }
}
