import ArgumentParser
import PeregrineJSONStorage
import PeregrinePlistStorage
import PeregrineStorage

/// `peregrine store …`: tools for a download manager's saved state.
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Inspect and convert a download manager's saved state.",
        subcommands: [StoreConvertCommand.self]
    )
}

/// A store backend the CLI can open.
enum StoreBackendName: String, ExpressibleByArgument, CaseIterable {
    case json
    case plist

    func open(identifier: String, root: String) throws(StoreError) -> any TaskStore {
        let configuration = StoreConfiguration(rootDirectory: root)
        switch self {
        case .json: return try JSONTaskStore(identifier: identifier, configuration: configuration)
        case .plist: return try PlistTaskStore(identifier: identifier, configuration: configuration)
        }
    }
}

/// `peregrine store convert --from json --to plist [--root DIR] --identifier ID`: copies a
/// manager's state from one backend's files to the other's.
struct StoreConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Copy a manager's saved state from one store backend to the other.",
        discussion: """
            Loads the state of --identifier from the --from backend's files and makes the --to backend's files \
            hold exactly the same (anything they held before is replaced), then compacts them into one snapshot. \
            The source files are not changed. What the load had to repair (a torn journal entry, a damaged \
            snapshot replaced by its backup) is printed. Neither store may be open in another process.
            """
    )

    @Option(help: "The backend to read: json or plist.")
    var from: StoreBackendName

    @Option(help: "The backend to write: json or plist.")
    var to: StoreBackendName

    @Option(help: ArgumentHelp("The stores' root directory (default: the XDG data directory).", valueName: "dir"))
    var root: String = StoreConfiguration.defaultRootDirectory

    @Option(help: ArgumentHelp("The download manager's identifier.", valueName: "id"))
    var identifier: String

    func validate() throws {
        guard from != to else { throw ValidationError("--from and --to name the same backend") }
    }

    func run() throws {
        do throws(StoreError) {
            let source = try from.open(identifier: identifier, root: root)
            defer { try? source.close() }
            let destination = try to.open(identifier: identifier, root: root)
            let repairs = try StoreConversion.copy(from: source, to: destination)
            let snapshot = try destination.load()
            try destination.close()
            for repair in repairs { printError("repaired while loading: \(repair)") }
            print(
                "converted \(identifier): \(snapshot.tasks.count) task(s), \(snapshot.lists.count) list(s) "
                    + "from \(from.rawValue) to \(to.rawValue) in \(root)")
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}
