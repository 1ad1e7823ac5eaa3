import PeregrineCore
import PeregrineTransport
import Synchronization

/// A transport whose transfers the test drives by hand: it records every call and lets the
/// test deliver each attempt's events, so the decorator's control flow is checked step by step
/// without threads or timing.
final class ScriptedTransport: Transport {
    enum Call: Hashable, CustomStringConvertible {
        case start(TransferID, url: String, authorization: String?)
        case pause(TransferID)
        case resume(TransferID)
        case cancel(TransferID)

        var description: String {
            switch self {
            case .start(let id, let url, let authorization): "start \(id) \(url) auth=\(authorization ?? "-")"
            case .pause(let id): "pause \(id)"
            case .resume(let id): "resume \(id)"
            case .cancel(let id): "cancel \(id)"
            }
        }
    }

    private struct State {
        var next: UInt64 = 1
        var calls: [Call] = []
        var handlers: [TransferID: @Sendable (TransferEvent) -> Void] = [:]
        var requests: [TransferID: TransferRequest] = [:]
    }

    private let state = Locked(State())

    func start(
        _ request: TransferRequest, sink: any TransferSink, events: @escaping @Sendable (TransferEvent) -> Void
    ) -> TransferID {
        state.withLock { state in
            let id = TransferID(rawValue: state.next)
            state.next += 1
            state.calls.append(.start(id, url: request.url.string, authorization: request.credentials?.authorization))
            state.handlers[id] = events
            state.requests[id] = request
            return id
        }
    }

    func pause(_ id: TransferID) { state.withLock { $0.calls.append(.pause(id)) } }
    func resume(_ id: TransferID) { state.withLock { $0.calls.append(.resume(id)) } }
    func cancel(_ id: TransferID) { state.withLock { $0.calls.append(.cancel(id)) } }

    var calls: [Call] { state.withLock { $0.calls } }

    /// The identifier of the latest attempt.
    var latest: TransferID { TransferID(rawValue: state.withLock { $0.next } - 1) }

    func request(_ id: TransferID) -> TransferRequest? { state.withLock { $0.requests[id] } }

    /// Delivers an event of attempt `id`, on the calling thread.
    func send(_ event: TransferEvent, to id: TransferID) {
        let handler = state.withLock { $0.handlers[id] }
        handler?(event)
    }

    /// Delivers a `401` head and the failure that follows it.
    func challenge(_ id: TransferID, url: String, _ challenges: [String] = [#"Basic realm="scripted""#]) {
        var headers = HTTPHeaders()
        for challenge in challenges { headers.add(name: "WWW-Authenticate", value: challenge) }
        send(.head(ResponseHead(status: 401, headers: headers, effectiveURL: url)), to: id)
        send(
            .completed(.failure(TransportError(.httpStatus, "401", httpStatus: 401, url: url))), to: id)
    }

    /// Delivers a 200 head and a success.
    func succeed(_ id: TransferID, url: String, bytes: Int64 = 0) {
        let head = ResponseHead(status: 200, headers: ["Content-Length": "\(bytes)"], effectiveURL: url)
        send(.head(head), to: id)
        send(.completed(.success(TransferSummary(head: head, receivedBytes: bytes, redirectCount: 0))), to: id)
    }
}
