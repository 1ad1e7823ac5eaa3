import PeregrineCore
import Synchronization

/// A scriptable HTTP server without sockets: a route table and a log of the requests received.
///
/// Routes are keyed by path (`/files/a.bin`, without the query) and optionally by host; a route
/// for the request's host wins over one for any host, and a path without a route answers 404.
/// ``MockTransport`` asks it for responses in memory; the test suite's loopback HTTP server
/// serves the same routes over real sockets.
///
/// Thread safety: every method may be called from any thread.
public final class MockServer: Sendable {
    private struct RouteKey: Hashable {
        var host: String?
        var path: String
    }

    private struct Entry {
        var routes: [MockRoute]
        var answered = 0
    }

    private struct State {
        var entries: [RouteKey: Entry] = [:]
        var log: [MockRequest] = []
    }

    private let state = Locked(State())

    /// Creates a server with no routes.
    public init() {}

    /// Serves `route` on `path` (for `host` only, when given), replacing what was there.
    public func setRoute(_ route: MockRoute, for path: String, host: String? = nil) {
        setRoutes([route], for: path, host: host)
    }

    /// Serves `routes` on `path` in turn: the first request gets the first, and so on; the last
    /// one answers every later request. For a server that fails twice and then works.
    ///
    /// - Precondition: `routes` is not empty.
    public func setRoutes(_ routes: [MockRoute], for path: String, host: String? = nil) {
        precondition(!routes.isEmpty, "a path is served by at least one route")
        let key = RouteKey(host: host?.lowercased(), path: path)
        state.withLock { $0.entries[key] = Entry(routes: routes) }
    }

    /// Stops serving `path` (for `host`, when given): it answers 404 from now on.
    public func removeRoute(for path: String, host: String? = nil) {
        let key = RouteKey(host: host?.lowercased(), path: path)
        _ = state.withLock { $0.entries.removeValue(forKey: key) }
    }

    /// Removes every route.
    public func removeAllRoutes() {
        state.withLock { $0.entries.removeAll() }
    }

    /// The route that the next request for `path` (on `host`) would get, if any.
    public func route(for path: String, host: String? = nil) -> MockRoute? {
        state.withLock { state in
            Self.entryKey(in: state, path: path, host: host?.lowercased()).map { key in
                let entry = state.entries[key]!
                return entry.routes[min(entry.answered, entry.routes.count - 1)]
            }
        }
    }

    /// The route served on a path for any host; setting nil removes it.
    public subscript(path: String) -> MockRoute? {
        get { route(for: path) }
        set {
            if let newValue { setRoute(newValue, for: path) } else { removeRoute(for: path) }
        }
    }

    /// The requests received so far, oldest first.
    public var requests: [MockRequest] { state.withLock { $0.log } }

    /// The requests received so far for `path`, oldest first.
    public func requests(for path: String) -> [MockRequest] {
        state.withLock { $0.log }.filter { $0.path == path }
    }

    /// Empties the request log.
    public func clearRequests() {
        state.withLock { $0.log.removeAll() }
    }

    /// Logs `request`, picks its route and plans the response with ``MockResponsePlan``.
    ///
    /// Called by the transports once per request; tests may call it to see what would be sent.
    public func respond(to request: MockRequest) -> MockResponsePlan {
        let (route, number): (MockRoute?, Int) = state.withLock { state in
            state.log.append(request)
            guard let key = Self.entryKey(in: state, path: request.path, host: request.host) else { return (nil, 0) }
            let entry = state.entries[key]!
            let route = entry.routes[min(entry.answered, entry.routes.count - 1)]
            state.entries[key]!.answered += 1
            return (route, entry.answered + 1)
        }
        return MockResponsePlan(request: request, route: route, requestNumber: number)
    }

    private static func entryKey(in state: State, path: String, host: String?) -> RouteKey? {
        if let host, state.entries[RouteKey(host: host, path: path)] != nil { return RouteKey(host: host, path: path) }
        let any = RouteKey(host: nil, path: path)
        return state.entries[any] != nil ? any : nil
    }
}
