import ArgumentParser

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

/// `peregrine add|ls|pause|resume|rm`: clients of a running `peregrine daemon` (or of
/// `aria2c --enable-rpc`: they speak aria2's JSON-RPC). Exit status 0 when every call
/// succeeded, 1 when one was refused (the reason on standard error), 2 when the service could
/// not be reached.
enum ClientCommand {
    /// Runs one call per argument, prints each answer, and fails at the end if one failed.
    static func each(
        _ items: [String], options: RPCClientOptions, _ body: (String) async throws -> String
    ) async throws {
        var failed = false
        for item in items {
            do {
                let line = try await body(item)
                writeToStandardOutput(line + "\n")
            } catch let error as RPCClient.CallError {
                printError("\(item): \(error.message)")
                failed = true
            } catch let error as ExitError {
                printError(error.message)
                throw ExitCode(error.status)
            }
        }
        if failed { throw ExitCode(1) }
    }

    /// A line of JSON for `--json`.
    static func jsonLine(_ object: [String: Any]) -> String {
        JSONText.serialize(object)
    }
}

struct AddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add downloads to a running service; prints each GID.")

    @OptionGroup var rpc: RPCClientOptions

    @Argument(help: "The http or https URLs.")
    var urls: [String]

    @Option(help: "The file name (with one URL only).")
    var out: String?

    @Option(help: ArgumentHelp("The expected digest, as aria2 has it.", valueName: "sha-256=hex"))
    var checksum: String?

    @Flag(help: "Add paused.")
    var pause = false

    func validate() throws {
        if out != nil, urls.count != 1 { throw ValidationError("--out names the file of one URL only") }
    }

    func run() async throws {
        var options: [String: String] = [:]
        if let out { options["out"] = out }
        if let checksum { options["checksum"] = checksum }
        if pause { options["pause"] = "true" }
        let client = rpc.client
        try await ClientCommand.each(urls, options: rpc) { url in
            let gid = try await client.call("aria2.addUri", [[url], options]) as? String ?? ""
            return rpc.json ? ClientCommand.jsonLine(["gid": gid, "url": url]) : gid
        }
    }
}

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List a running service's downloads: active, waiting, then stopped.",
        discussion: "Columns: GID, status, completed/total bytes, file (or URL).")

    @OptionGroup var rpc: RPCClientOptions

    func run() async throws {
        let client = rpc.client
        let keys = ["gid", "status", "totalLength", "completedLength", "files", "errorMessage"]
        var entries: [[String: Any]] = []
        do {
            for (method, params) in [
                ("aria2.tellActive", [keys] as [Any]), ("aria2.tellWaiting", [0, 10_000, keys]),
                ("aria2.tellStopped", [0, 10_000, keys]),
            ] {
                entries += try await client.call(method, params) as? [[String: Any]] ?? []
            }
        } catch let error as RPCClient.CallError {
            printError(error.message)
            throw ExitCode(1)
        } catch let error as ExitError {
            printError(error.message)
            throw ExitCode(error.status)
        }
        for entry in entries {
            let file = (entry["files"] as? [[String: Any]])?.first
            let path = (file?["path"] as? String).flatMap { $0.isEmpty ? nil : $0 }
            let uri = ((file?["uris"] as? [[String: Any]])?.first?["uri"] as? String) ?? ""
            let gid = entry["gid"] as? String ?? ""
            let status = entry["status"] as? String ?? ""
            let completed = entry["completedLength"] as? String ?? "0"
            let total = entry["totalLength"] as? String ?? "0"
            if rpc.json {
                var object: [String: Any] = [
                    "gid": gid, "status": status, "completedLength": Int64(completed) ?? 0,
                    "totalLength": Int64(total) ?? 0, "url": uri,
                ]
                if let path { object["path"] = path }
                if let message = entry["errorMessage"] as? String, !message.isEmpty { object["error"] = message }
                writeToStandardOutput(ClientCommand.jsonLine(object) + "\n")
            } else {
                writeToStandardOutput("\(gid)\t\(status)\t\(completed)/\(total)\t\(path ?? uri)" + "\n")
            }
        }
    }
}

struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause", abstract: "Pause downloads of a running service.")

    @OptionGroup var rpc: RPCClientOptions

    @Argument(help: "The GIDs.")
    var gids: [String]

    func run() async throws {
        let client = rpc.client
        try await ClientCommand.each(gids, options: rpc) { gid in
            let paused = try await client.call("aria2.pause", [gid]) as? String ?? gid
            return rpc.json ? ClientCommand.jsonLine(["gid": paused, "status": "paused"]) : "paused \(paused)"
        }
    }
}

struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Resume paused downloads of a running service.")

    @OptionGroup var rpc: RPCClientOptions

    @Argument(help: "The GIDs.")
    var gids: [String]

    func run() async throws {
        let client = rpc.client
        try await ClientCommand.each(gids, options: rpc) { gid in
            let resumed = try await client.call("aria2.unpause", [gid]) as? String ?? gid
            return rpc.json ? ClientCommand.jsonLine(["gid": resumed, "status": "waiting"]) : "resumed \(resumed)"
        }
    }
}

struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove downloads of a running service (a stopped one's result is forgotten; its file stays).")

    @OptionGroup var rpc: RPCClientOptions

    @Argument(help: "The GIDs.")
    var gids: [String]

    func run() async throws {
        let client = rpc.client
        try await ClientCommand.each(gids, options: rpc) { gid in
            let status = (try await client.call("aria2.tellStatus", [gid, ["status"]]) as? [String: Any])?["status"]
            if let status = status as? String, ["complete", "error", "removed"].contains(status) {
                _ = try await client.call("aria2.removeDownloadResult", [gid])
            } else {
                _ = try await client.call("aria2.remove", [gid])
            }
            return rpc.json ? ClientCommand.jsonLine(["gid": gid, "status": "removed"]) : "removed \(gid)"
        }
    }
}
