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
}

/// The version `--version` prints.
let peregrineVersion = "0.2.0"
