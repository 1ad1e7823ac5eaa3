/// A way a mock route misbehaves on the wire.
///
/// Faults apply to every response of the route that carries a body; when several end the
/// body, the first of drop, stall and extra bytes wins.
public enum MockFault: Sendable, Hashable {
    /// Close the connection after this many body bytes while announcing the full `Content-Length`.
    case dropAfter(bytes: Int64)
    /// Send this many body bytes, then nothing more, keeping the connection open: a stalled
    /// server, for the too-slow rule.
    case stallAfter(bytes: Int64)
    /// Answer a satisfiable `Range` with 200 and the whole body, though `Accept-Ranges: bytes`
    /// is advertised.
    case ignoreRange
    /// Answer a satisfiable `Range` with 206 even when its `If-Range` does not match the current
    /// validator: a server that would splice a changed file onto an old partial one.
    case ignoreIfRange
    /// Send this many bytes beyond the announced `Content-Length`, then close the connection.
    case extraBytes(count: Int)
    /// Announce a 206's `Content-Range` moved by this many bytes (the body sent is still the
    /// range asked for). The first byte announced never goes below zero.
    case wrongContentRange(shift: Int64)
}
