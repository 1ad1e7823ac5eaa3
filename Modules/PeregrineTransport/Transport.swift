/// Moves bytes from a server to a sink: the plug-in point for libcurl, the in-memory mock,
/// or anything else.
///
/// ## Implementation requirements
/// A backend must, for every transfer:
/// 1. Refuse before any I/O a request whose credentials may not be sent to its URL
///    (``RequestCredentials/isAllowed(for:)``), completing with ``TransportError/Code/invalidRequest``.
/// 2. Follow redirects itself through ``RedirectPolicy/decide(from:to:status:hopsSoFar:)``, send
///    each hop the headers of ``TransferRequest/headersToSend(to:)``, report each hop as
///    ``TransferEvent/redirected(_:)``, and never write a redirect's body to the sink.
/// 3. Report the final response's head once, as ``TransferEvent/head(_:)``, before any body byte.
/// 4. For a status outside 2xx, write nothing to the sink and complete with
///    ``TransportError/Code/httpStatus``.
/// 5. For a request with a range, accept only the answers that ``TransferRequest/rangeRefusal(of:)``
///    passes: a 206 whose `Content-Range` starts at the range's start and that carries the
///    request's `If-Range` validator and complete length. Any other 2xx (a 200 above all, or a 206
///    of another version) completes with ``TransportError/Code/rangeNotHonoured`` and writes
///    nothing: neither a whole file nor another version is ever appended to a partial one.
/// 6. Write body bytes to the sink at `range.start + bytes so far` (0 without a range), then call
///    ``TransferSink/flush()`` before reporting success.
/// 7. Complete with ``TransportError/Code/connectionClosed`` when the connection ends before the
///    `Content-Length` announced has arrived, and with ``TransportError/Code/lengthMismatch`` when
///    more arrives; never with success.
/// 8. Complete with ``TransportError/Code/writeFailed`` when the sink throws, carrying its errno.
/// 9. Deliver a transfer's events serially and in order, ending with exactly one
///    ``TransferEvent/completed(_:)``; ``TransferEvent/progress(_:)`` events may be coalesced.
/// 10. Make ``pause(_:)``, ``resume(_:)`` and ``cancel(_:)`` safe from any thread, including from
///    inside the event handler; a cancelled transfer completes with ``TransportError/Code/cancelled``
///    and writes nothing more to its sink. Calls naming a finished or unknown transfer do nothing.
/// 11. If it checks TLS certificates, check each hop under ``TransferRequest/trust(for:)`` for
///    that hop — a redirect to another host gets that host's policy, and nothing of the previous
///    hop's (its CA file, pins, `insecure` opt-out) — and fail closed with
///    ``TransportError/Code/tls`` when a policy cannot be applied.
/// 12. Charge every body chunk to the request's ``TransferRequest/bandwidthLimiters`` (through a
///    ``BandwidthAccount``) and receive nothing more while the account must wait, without
///    spinning: hold the transfer back for at most ``BandwidthLimiter/recheckInterval`` at a time,
///    then ask again, so that a changed limit takes effect within that time.
///
/// The conformance suite (`PeregrineTransportTestKit`, run in `Tests/TransportConformance`) checks
/// every rule on every backend; rule 12's rates over time are checked by each backend's own tests
/// (libcurl against nginx, the mock on its clock).
public protocol Transport: Sendable {
    /// Starts a transfer and returns at once.
    ///
    /// - Parameters:
    ///   - request: what to fetch.
    ///   - sink: where body bytes go; called on the backend's thread, one write at a time.
    ///   - events: called with each event on the backend's thread; must return quickly.
    /// - Returns: the identifier for ``pause(_:)``, ``resume(_:)`` and ``cancel(_:)``.
    func start(
        _ request: TransferRequest,
        sink: any TransferSink,
        events: @escaping @Sendable (TransferEvent) -> Void
    ) -> TransferID

    /// Stops receiving without closing the connection; nothing is written until ``resume(_:)``.
    func pause(_ id: TransferID)

    /// Continues a paused transfer.
    func resume(_ id: TransferID)

    /// Ends a transfer; it completes with ``TransportError/Code/cancelled`` unless it already ended.
    func cancel(_ id: TransferID)

    /// Whether every transfer's events arrive on one shared thread (libcurl's), so that an event
    /// handler that blocks — an `fsync`, a rename, a store's sync — stalls every other transfer.
    /// A client then moves such work elsewhere. False by default: the mock transport delivers
    /// events on the thread that advances it, and deterministic tests rely on handlers running
    /// right there.
    var eventsShareOneThread: Bool { get }
}

extension Transport {
    public var eventsShareOneThread: Bool { false }
}

extension Transport {
    /// Starts a transfer and returns its events as an asynchronous sequence.
    ///
    /// The sequence ends after the ``TransferEvent/completed(_:)`` event. Ending the iteration
    /// early (a cancelled task, a `break`) cancels the transfer.
    public func events(
        for request: TransferRequest,
        sink: any TransferSink
    ) -> (id: TransferID, events: AsyncStream<TransferEvent>) {
        let (stream, continuation) = AsyncStream<TransferEvent>.makeStream()
        let id = start(request, sink: sink) { event in
            continuation.yield(event)
            if case .completed = event { continuation.finish() }
        }
        continuation.onTermination = { [self] reason in
            if case .cancelled = reason { cancel(id) }
        }
        return (id, stream)
    }

    /// Runs a transfer to its end.
    ///
    /// - Parameter request: what to fetch.
    /// - Parameter sink: where the body's bytes go.
    /// - Parameter progress: called with each progress event, on the backend's thread.
    /// - Throws: the ``TransportError`` the transfer ended with; cancelling the calling task
    ///   cancels the transfer and throws ``TransportError/Code/cancelled``.
    public func download(
        _ request: TransferRequest,
        to sink: any TransferSink,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(TransportError) -> TransferSummary {
        let (id, stream) = events(for: request, sink: sink)
        let result: Result<TransferSummary, TransportError> = await withTaskCancellationHandler {
            for await event in stream {
                switch event {
                case .progress(let value): progress?(value)
                case .completed(let result): return result
                case .head, .redirected: continue
                }
            }
            return .failure(TransportError(.cancelled, "the transfer was cancelled", url: request.url.string))
        } onCancel: {
            cancel(id)
        }
        return try result.get()
    }
}
