/// Why a child process could not be run, or how it failed.
public struct ChildProcessError: Error, Sendable, CustomStringConvertible {
    /// The command line, for the message.
    public var command: String
    /// The exit status, when the process ran and exited with a failure.
    public var status: Int32?
    /// What happened and, where it helps, what to install.
    public var message: String

    /// Creates an error.
    public init(command: String, status: Int32? = nil, message: String) {
        self.command = command
        self.status = status
        self.message = message
    }

    public var description: String { "\(command): \(message)" }
}
