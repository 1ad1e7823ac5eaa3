import ArgumentParser

/// The `peregrine` command: downloads with Peregrine's libcurl transport.
@main
struct PeregrineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peregrine",
        abstract: "Download files with Peregrine, and verify their checksums.",
        version: peregrineVersion,
        subcommands: [
            GetCommand.self, VerifyCommand.self, StoreCommand.self,
            // The download service, and its clients.
            DaemonCommand.self, AddCommand.self, ListCommand.self, PauseCommand.self, ResumeCommand.self,
            RemoveCommand.self, WatchCommand.self,
        ]
    )

    /// Parses the command line with a `get`'s URLs taken out (see `URLArguments`).
    static func main() async {
        await main(URLArguments.lift(Array(CommandLine.arguments.dropFirst())))
    }
}

/// The version `--version` prints.
let peregrineVersion = "0.2.0"
