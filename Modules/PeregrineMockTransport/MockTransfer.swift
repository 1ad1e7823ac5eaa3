import PeregrineCore
import PeregrineTransport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One transfer of a ``MockTransport``: a state machine advanced one step at a time.
///
/// Each step delivers at most one event (a chunk step writes to the sink first), so a pause or
/// cancel made by the handler takes effect before anything else happens. The transport never
/// runs two steps at once, and only the thread running a step touches this object: that is why
/// the mutable state needs no lock (hence `@unchecked Sendable`).
final class MockTransfer: @unchecked Sendable {
    /// What the transport tells a step.
    struct Context {
        /// The virtual time of the step.
        var now: MockInstant
        /// The transfer was cancelled: the step only reports it.
        var isCancelled: Bool
        /// The transfer was paused and resumed since the last step.
        var wasPaused: Bool
        /// Whether the transfer has been cancelled by now (from another thread, say).
        var isCancelledNow: () -> Bool
    }

    /// When the next step is due.
    enum Outcome {
        /// At this time.
        case next(MockInstant)
        /// Never, unless a pause, resume or cancel changes that (a stalled server without a too-slow rule).
        case waiting
        /// The transfer has completed.
        case finished
    }

    private struct Body {
        var head: ResponseHead
        var plan: MockResponsePlan
        var announced: Int64?
        var sinkBase: Int64
        var bytesPerSecond: Int64?
        var wireOffset: Int64 = 0
        var written: Int64 = 0
        /// Until when the bandwidth limiters hold the next chunk back, if they do.
        var heldUntil: MockInstant?
    }

    private enum Phase {
        case starting
        case sending(DownloadURL)
        case awaitingHead(DownloadURL, MockResponsePlan)
        case receiving(Body)
        case stalled
        case completing(Result<TransferSummary, TransportError>)
        case finished
    }

    let id: TransferID
    private let request: TransferRequest
    private let sink: any TransferSink
    private let handler: @Sendable (TransferEvent) -> Void
    private let server: MockServer
    private let chunkSize: Int

    private var phase = Phase.starting
    private var redirectCount = 0
    private var now = MockInstant.zero
    /// When the too-slow rule aborts the transfer, while a phase without enough bytes lasts.
    private var slowDeadline: MockInstant?
    /// A step postponed past ``slowDeadline``: the deadline step fires instead, unless moved.
    private var postponedStep: MockInstant??
    private var buffer: UnsafeMutableRawBufferPointer?
    /// The transfer's standing with its request's bandwidth limiters.
    private var bandwidth: BandwidthAccount

    init(
        id: TransferID, request: TransferRequest, sink: any TransferSink,
        handler: @escaping @Sendable (TransferEvent) -> Void, server: MockServer, chunkSize: Int
    ) {
        self.id = id
        self.request = request
        self.sink = sink
        self.handler = handler
        self.server = server
        self.chunkSize = chunkSize
        bandwidth = BandwidthAccount(request.bandwidthLimiters)
    }

    deinit { buffer?.deallocate() }

    /// Runs the step that is due.
    func step(_ context: Context) -> Outcome {
        now = context.now
        if case .finished = phase { return .finished }
        if context.isCancelled {
            return finish(.failure(error(.cancelled, "the transfer was cancelled", url: request.url.string)))
        }
        if context.wasPaused, slowDeadline != nil, let lowSpeed = request.timeouts.lowSpeed {
            // Time spent paused does not count against the too-slow rule.
            slowDeadline = now.advanced(by: lowSpeed.duration)
        }
        if let postponed = postponedStep {
            postponedStep = nil
            if let deadline = slowDeadline, now >= deadline { return tooSlow() }
            return schedule(postponed)
        }

        switch phase {
        case .starting:
            if let credentials = request.credentials, !credentials.isAllowed(for: request.url) {
                return finish(
                    .failure(
                        error(
                            .invalidRequest,
                            "credentials may not be sent over plain http to \(request.url); use https or allow plain http in the credentials",
                            url: request.url.string)))
            }
            return send(to: request.url)
        case .sending(let hop):
            return send(to: hop)
        case .awaitingHead(let hop, let plan):
            return receiveHead(of: plan, from: hop)
        case .receiving(let body):
            return receiveChunk(body, isCancelledNow: context.isCancelledNow)
        case .stalled:
            return schedule(nil)
        case .completing(let result):
            return finish(result)
        case .finished:
            return .finished
        }
    }

    // MARK: Steps

    private func send(to hop: DownloadURL) -> Outcome {
        let sent = MockRequest(
            method: request.method.rawValue, url: hop.string, headers: request.headersToSend(to: hop))
        let plan = server.respond(to: sent)
        phase = .awaitingHead(hop, plan)
        // No byte arrives while the server delays the head.
        slowDeadline = request.timeouts.lowSpeed.map { now.advanced(by: $0.duration) }
        return schedule(now.advanced(by: plan.latency))
    }

    private func receiveHead(of plan: MockResponsePlan, from hop: DownloadURL) -> Outcome {
        slowDeadline = nil
        let status = plan.status
        if RedirectPolicy.isRedirect(status: status) {
            let location = plan.headers["Location"].map { RedirectPolicy.resolve(location: $0, against: hop) }
            switch request.redirects.decide(from: hop, to: location, status: status, hopsSoFar: redirectCount) {
            case .follow(let target):
                redirectCount += 1
                phase = .sending(target)
                handler(.redirected(Redirect(status: status, from: hop.string, to: target.string)))
                return .next(now)
            case .refuse(let error):
                return finish(.failure(error))
            }
        }

        let head = ResponseHead(status: status, headers: plan.headers, effectiveURL: hop.string)
        if !head.isSuccess {
            phase = .completing(
                .failure(
                    error(
                        .httpStatus, "the server answered \(status) \(plan.reasonPhrase) for \(hop)",
                        httpStatus: status, url: hop.string)))
        } else if let range = request.range, let refusal = request.rangeRefusal(of: head) {
            phase = .completing(
                .failure(
                    error(
                        .rangeNotHonoured, "asked \(hop) for \(range) and the server answered with \(refusal)",
                        httpStatus: status, url: hop.string)))
        } else if request.method == .head {
            phase = .completing(
                .success(TransferSummary(head: head, receivedBytes: 0, redirectCount: redirectCount)))
        } else {
            let rates = [plan.bytesPerSecond, request.maxReceiveBytesPerSecond].compactMap { $0 }
            let body = Body(
                head: head, plan: plan, announced: head.contentLength, sinkBase: request.range?.start ?? 0,
                bytesPerSecond: rates.min())
            phase = .receiving(body)
            if let lowSpeed = request.timeouts.lowSpeed, let rate = body.bytesPerSecond,
                rate < Int64(lowSpeed.bytesPerSecond)
            {
                slowDeadline = now.advanced(by: lowSpeed.duration)
            }
            handler(.head(head))
            return schedule(nextChunkTime(body))
        }
        handler(.head(head))
        return .next(now)
    }

    private func receiveChunk(_ body: Body, isCancelledNow: () -> Bool) -> Outcome {
        var body = body
        let remaining = body.plan.wireLength - body.wireOffset
        guard remaining > 0 else { return endOfBody(body) }
        // The limiters may still hold the transfer back (a limit lowered since the last chunk).
        let owed = bandwidth.remainingWait()
        if owed > .zero { return schedule(now.advanced(by: min(owed, BandwidthLimiter.recheckInterval))) }
        let count = Int(min(Int64(chunkSize), remaining))
        let buffer = self.buffer ?? .allocate(byteCount: chunkSize, alignment: 16)
        self.buffer = buffer
        body.plan.copyWireBytes(
            in: body.wireOffset..<(body.wireOffset + Int64(count)), into: UnsafeMutableRawBufferPointer(buffer))
        body.wireOffset += Int64(count)
        let writable = body.announced.map { Int(max(0, min(Int64(count), $0 - body.written))) } ?? count
        if writable > 0 {
            // A cancel from another thread since this step began: write nothing more.
            if isCancelledNow() {
                return finish(.failure(error(.cancelled, "the transfer was cancelled", url: request.url.string)))
            }
            do {
                try sink.write(UnsafeRawBufferPointer(rebasing: buffer[0..<writable]), at: body.sinkBase + body.written)
            } catch {
                return finish(.failure(writeFailure(error)))
            }
            body.written += Int64(writable)
            if bandwidth.isLimited {
                let wait = bandwidth.charge(writable)
                body.heldUntil = wait > .zero ? now.advanced(by: min(wait, BandwidthLimiter.recheckInterval)) : nil
            }
        }
        if writable < count {
            let failure = lengthMismatch(body, detail: "more bytes than the \(body.announced ?? 0) announced")
            guard writable > 0 else { return finish(.failure(failure)) }
            phase = .completing(.failure(failure))
        } else {
            phase = .receiving(body)
        }
        handler(.progress(TransferProgress(receivedBytes: body.written, expectedBytes: body.announced)))
        if case .completing = phase { return .next(now) }
        return schedule(nextChunkTime(body))
    }

    private func endOfBody(_ body: Body) -> Outcome {
        let complete = body.announced.map { body.written == $0 } ?? true
        if complete {
            return finish(
                .success(TransferSummary(head: body.head, receivedBytes: body.written, redirectCount: redirectCount)))
        }
        if body.plan.closesConnection {
            return finish(
                .failure(
                    lengthMismatch(
                        body, detail: "the server closed the connection after \(body.written) bytes",
                        code: .connectionClosed)))
        }
        // The server sent less than it announced and keeps the connection open: wait for more.
        phase = .stalled
        slowDeadline = request.timeouts.lowSpeed.map { now.advanced(by: $0.duration) }
        return schedule(nil)
    }

    private func finish(_ result: Result<TransferSummary, TransportError>) -> Outcome {
        var result = result
        if case .success = result {
            do { try sink.flush() } catch { result = .failure(writeFailure(error)) }
        }
        phase = .finished
        handler(.completed(result))
        return .finished
    }

    private func tooSlow() -> Outcome {
        let rule = request.timeouts.lowSpeed
        let text = rule.map { "fewer than \($0.bytesPerSecond) bytes/s for \($0.duration)" } ?? "too slow"
        return finish(.failure(error(.tooSlow, "\(text) from \(request.url)", url: request.url.string)))
    }

    // MARK: Helpers

    /// The outcome for a step at `time` (nil: none), unless the too-slow rule fires first.
    private func schedule(_ time: MockInstant?) -> Outcome {
        if let deadline = slowDeadline, time.map({ $0 > deadline }) ?? true {
            postponedStep = .some(time)
            return .next(deadline)
        }
        return time.map(Outcome.next) ?? .waiting
    }

    /// When the next chunk has arrived: now plus its transmission time at the body's rate, or
    /// later when the bandwidth limiters hold it back.
    private func nextChunkTime(_ body: Body) -> MockInstant {
        let remaining = body.plan.wireLength - body.wireOffset
        let held = body.heldUntil.map { max($0, now) } ?? now
        guard let rate = body.bytesPerSecond, remaining > 0 else { return held }
        let count = min(Int64(chunkSize), remaining)
        return max(held, now.advanced(by: .seconds(1) * count / rate))
    }

    private func lengthMismatch(
        _ body: Body, detail: String, code: TransportError.Code = .lengthMismatch
    ) -> TransportError {
        error(
            code,
            "\(detail): received \(body.written) of \(body.announced.map(String.init) ?? "unknown") bytes from \(body.head.effectiveURL)",
            url: body.head.effectiveURL)
    }

    private func writeFailure(_ failure: any Error) -> TransportError {
        let code = (failure as? SinkWriteError)?.errno
        return error(
            .writeFailed, "the sink could not store the body: \(failure)", url: request.url.string, errno: code)
    }

    private func error(
        _ code: TransportError.Code, _ message: String, httpStatus: Int? = nil, url: String?, errno: Int32? = nil
    ) -> TransportError {
        TransportError(code, message, httpStatus: httpStatus, url: url, errno: errno)
    }
}
