import PeregrineTransport

/// A request from another thread to the driver thread.
enum CurlCommand: Sendable {
    case start(CurlTransfer)
    case pause(TransferID)
    case resume(TransferID)
    case cancel(TransferID)
}
