import Dispatch
import PeregrineCore
import PeregrineTransport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How many connections one task may use, and the smallest piece worth a connection of its own.
public struct Segmentation: Sendable, Hashable {
    /// The most connections a task opens at once; 1 downloads over one connection.
    public var maxConnectionsPerTask: Int
    /// No segment is made smaller than this many bytes (aria2's `--min-split-size`).
    public var minimumSegmentSize: Int64

    /// The connection counts accepted.
    public static let connectionRange = 1...64
    /// The smallest accepted minimum segment size: 64 KiB.
    public static let smallestSegmentSize: Int64 = 64 << 10

    /// Creates a policy; out-of-range values are clamped (callers that take them from users
    /// validate them first, see ``connectionRange``).
    public init(maxConnectionsPerTask: Int = 1, minimumSegmentSize: Int64 = 1 << 20) {
        self.maxConnectionsPerTask = min(
            max(maxConnectionsPerTask, Self.connectionRange.lowerBound), Self.connectionRange.upperBound)
        self.minimumSegmentSize = max(minimumSegmentSize, Self.smallestSegmentSize)
    }

    /// Whether a task may use more than one connection.
    public var splits: Bool { maxConnectionsPerTask > 1 }
}

/// One attempt's transfer over several connections to the same URL, presented to the engine
/// as a single transfer: one head (the first response's), one running byte count, one
/// completion once every piece has ended.
///
/// A fresh download's first request asks for the file's first bytes only (``probe``), learning
/// its length; a resumed one's asks for everything from the attempt's start, as a
/// single-connection transfer would. When the head shows a validator, range support and a
/// length, the rest of the file is cut into pieces for further connections (each a closed
/// range with `If-Range`), and the first connection ends at the end of its own piece. Splitting is dynamic: a
/// connection that finished its piece takes the upper half of the largest piece still running
/// (never leaving a piece smaller than the minimum), so every connection stays busy to the end.
///
/// Each piece writes through its own ``TemporaryFileSink`` on the same file, at its own
/// offsets, opened without truncation (the engine prepared the file before the launch). What
/// is durable is the union of the pieces' synced bytes: ``synchronize()`` returns the contiguous
/// prefix, and ``durableRanges`` the synced ranges past it, which the resume record keeps so
/// that a restart continues every piece where it was.
///
/// A verified download is hashed in order while its pieces arrive (issue 15): the remaining
/// holes are cut into chunks of ``hashingChunkSize`` taken in file order, so the pieces' front
/// advances steadily; the verifier's hashing sink gets the front piece's bytes as they are
/// written, and what other pieces wrote before the front reached them is read back from the
/// file (the page cache) when it does. Only what arrives last is left to hash at the end.
///
/// Locks: `state` (pieces' bookkeeping) and each piece's `fileLock` are never held while
/// calling the engine; `delivery` serializes the events handed to the engine (which may call
/// ``synchronize()`` from inside, taking the file locks, or ``cancel()``, taking `state`);
/// `hashing` is taken before a piece's `fileLock` or `state`, never after.
final class SegmentedTransfer: @unchecked Sendable {
    /// Thrown by a piece's sink when the piece reached its (possibly lowered) end.
    struct PieceComplete: Error {}

    final class Piece: @unchecked Sendable {
        let index: Int
        let start: Int64
        /// The index of the source (the request's URL, then the mirrors) it is fetched from.
        let source: Int
        let file: TemporaryFileSink
        let fileLock = Locked(())
        // Guarded by the transfer's `state` lock.
        var position: Int64
        var end: Int64
        var id: TransferID?
        var isRunning = true
        var redirects = 0
        /// Why its response was refused (a mirror's head that does not fit): it writes nothing
        /// more, and its range goes to another source.
        var rejection: TransportError?
        /// Set (under `fileLock`) once the piece ended complete and its file was closed: the
        /// end of its bytes. A closed piece holds no buffers and no descriptor, so a long
        /// download cut into hundreds of pieces costs only the running ones.
        var closedEnd: Int64?
        /// When (on the transfer's clock) its connection was asked for: with its bytes since,
        /// the piece's pace.
        var launchedAt: Duration = .zero
        /// When its first byte came: its pace is measured from then, not from the request (which
        /// may wait for a connection), so that a piece just started is not taken for a slow one.
        var firstByteAt: Duration?

        init(index: Int, start: Int64, end: Int64, path: String, source: Int = 0) {
            self.index = index
            self.start = start
            self.source = source
            self.position = start
            self.end = end
            self.file = TemporaryFileSink(path: path, startOffset: start, truncates: false)
            // The pieces share one file, locked by the attempt before the first piece starts.
            self.file.isLockedAlready = true
        }
    }

    /// A server the pieces are fetched from: the request's URL (index 0), then the mirrors.
    struct Source {
        let url: DownloadURL
        /// A mirror's own validator, from its first response (its file's version); the first
        /// source's is the transfer's ``State/validator``.
        var validator: ResumeValidator?
        /// Why it is no longer used for this transfer, once it failed or did not fit.
        var dropped: FailureReason?
        /// Whether it sent bytes of the file.
        var served = false
    }

    private struct State {
        var pieces: [Piece] = []
        var sources: [Source] = []
        /// The source whose failure ended the transfer, if one did.
        var failingSource: Int?
        /// Ranges still to fetch that no connection has taken yet.
        var queued: [Range<Int64>] = []
        var completeLength: Int64?
        var validator: ResumeValidator?
        var primaryHead: ResponseHead?
        var splitDecided = false
        var command = TransferAttempt.Command.run
        var lastSequence: UInt64 = 0
        /// Ranges on disk past the start that no piece fetches again (dropped when the
        /// transfer falls back to one connection, which rewrites them).
        var kept: [Range<Int64>] = []
        var failure: TransportError?
        var completed = false
        /// The first request asks for the first piece only (see ``SegmentedTransfer/probe``)
        /// until its head is in.
        var probing = false
        /// The first piece's answer cannot start a split (no validator, or a 416 for an empty
        /// file): once that request ended, the first connection asks for the whole file.
        var probeFailed = false
    }

    let transport: any Transport
    let request: TransferRequest
    let path: String
    /// The attempt's first byte: the durable prefix of the file ends here.
    let startOffset: Int64
    let segmentation: Segmentation
    private let handler: @Sendable (TransferEvent) -> Void
    private let state = Locked(State())
    private let delivery = Locked(())
    private let durable = Locked<[Range<Int64>]>([])
    /// The verifier's sink that hashes the file from ``startOffset`` in order; nil when the
    /// task is not verified.
    let hasher: (any TransferSink)?
    private let hashing: Locked<HashProgress>

    /// How far the bytes were handed to ``hasher``.
    private struct HashProgress {
        /// The end of the bytes hashed (from ``startOffset``).
        var end: Int64
        /// A read or a hashing write failed: the verifier reads the whole file instead.
        var broken = false
        /// The bytes read back from the file by ``finishHashing(length:)``, at the end.
        var readAtEnd: Int64 = 0
        /// A catch-up runs on ``hashQueue``: it alone feeds the hasher until it ends.
        var catchingUp = false
    }
    /// Where catch-ups read the file back, off the transport's threads.
    private let hashQueue = DispatchQueue(label: "peregrine.segmented-hashing")

    /// The size of the chunks a verified download is cut into, at least the minimum segment.
    var hashingChunkSize: Int64 { max(segmentation.minimumSegmentSize, 4 << 20) }

    /// The piece of the first request; the engine sees its file as the attempt's sink.
    let primary: Piece
    /// A fresh download's first request: a closed range of twice the minimum piece
    /// (``Segmentation/minimumSegmentSize``; a whole 200 accepted), so that the server sends no more than that before the
    /// head tells the length and the pieces are cut; nil when it asks for everything from the
    /// start. An open-ended first request runs on past its piece until its connection is cut:
    /// on a fast link, socket buffers' worth (several MiB) sent for nothing.
    let probe: TransferRequest?
    /// The time, for pieces' paces (the engine's clock, virtual in tests).
    private let now: @Sendable () -> Duration

    /// A running piece is split only when its connection, at its pace so far, would need at
    /// least this long for the rest: the piece's request then runs past the new end until its
    /// connection is cut (a socket buffer's worth of bytes sent for nothing), which pays only
    /// when the time saved is worth it. Connections of one pace end together and split nothing.
    static let splitWorthwhile: Duration = .seconds(2)

    init(
        transport: any Transport, request: TransferRequest, path: String, startOffset: Int64,
        resumeRecord: ResumeRecord?, segmentation: Segmentation, hasher: (any TransferSink)? = nil,
        mirrors: [DownloadURL] = [], now: @escaping @Sendable () -> Duration = SegmentedTransfer.monotonicNow,
        handler: @escaping @Sendable (TransferEvent) -> Void
    ) {
        self.hasher = hasher
        self.now = now
        hashing = Locked(HashProgress(end: startOffset))
        self.transport = transport
        self.request = request
        self.path = path
        self.startOffset = startOffset
        self.segmentation = segmentation
        self.handler = handler
        let ranges = (resumeRecord?.completedRanges ?? []).filter { $0.lowerBound > startOffset }
        durable.withLock { $0 = ranges }
        // Until the head tells the length, the first connection may run to the end, or to the
        // first range already on disk.
        primary = Piece(index: 0, start: startOffset, end: ranges.first?.lowerBound ?? .max, path: path)
        primary.launchedAt = now()
        if segmentation.splits, startOffset == 0, ranges.isEmpty, request.range == nil, request.method == .get {
            var first = request
            // Two minimum pieces: a file smaller than that is not split anyway.
            first.range = ByteRange(start: 0, end: 2 * segmentation.minimumSegmentSize - 1)
            first.acceptsWholeBody = true
            probe = first
        } else {
            probe = nil
        }
        let probing = probe != nil
        state.withLock {
            $0.probing = probing
            $0.pieces = [primary]
            $0.sources = [Source(url: request.url)] + mirrors.map { Source(url: $0) }
            $0.kept = ranges
            $0.completeLength = resumeRecord?.expectedLength
            $0.validator = resumeRecord?.validator
        }
    }

    /// Time since the process's first transfer, for transfers without a clock of their own.
    static let monotonicNow: @Sendable () -> Duration = {
        let epoch = ContinuousClock.now
        return { epoch.duration(to: .now) }
    }()

    /// Bytes already on disk that no piece fetches again.
    private static func keptBytes(_ state: State) -> Int64 { state.kept.reduce(0) { $0 + Int64($1.count) } }

    // MARK: Control

    /// Starts the first connection.
    func start() {
        launch(primary, request: probe ?? request)
    }

    /// Applies the engine's command to every running connection; a command with a sequence
    /// older than one applied is ignored, and nothing follows a cancel.
    func apply(_ command: TransferAttempt.Command, sequence: UInt64) {
        let ids: [TransferID] = state.withLock { state in
            guard state.command != .cancel, sequence >= state.lastSequence else { return [] }
            state.lastSequence = sequence
            state.command = command
            return state.pieces.filter(\.isRunning).compactMap(\.id)
        }
        for id in ids {
            switch command {
            case .run: transport.resume(id)
            case .suspend: transport.pause(id)
            case .cancel: transport.cancel(id)
            }
        }
        if command == .run { fillConnections() }
    }

    private func launch(_ piece: Piece, request: TransferRequest) {
        let sink = PieceSink(transfer: self, piece: piece)
        let id = transport.start(request, sink: sink) { [self] event in
            handle(event, of: piece)
        }
        let command: TransferAttempt.Command? = state.withLock { state in
            piece.id = id
            if piece.rejection != nil { return .cancel }
            return piece.isRunning ? state.command : nil
        }
        switch command {
        case .suspend?: transport.pause(id)
        case .cancel?: transport.cancel(id)
        case .run?, nil: break
        }
    }

    // MARK: Writing

    /// Reserves room for `count` bytes at `offset` in `piece`: how many may be written.
    fileprivate func reserve(_ piece: Piece, offset: Int64, count: Int) throws -> Int {
        try state.withLock { state in
            if let rejection = piece.rejection {
                throw SinkWriteError(errno: 125, message: "refused: \(rejection.message)")  // ECANCELED
            }
            guard offset == piece.position else {
                throw SinkWriteError(
                    errno: 22, message: "piece at \(piece.start) written at \(offset), expected \(piece.position)")
            }
            let allowed = Int(min(Int64(count), max(0, piece.end - piece.position)))
            if allowed > 0, piece.firstByteAt == nil { piece.firstByteAt = now() }
            piece.position += Int64(allowed)
            if allowed > 0, !state.sources[piece.source].served { state.sources[piece.source].served = true }
            return allowed
        }
    }

    // MARK: Events

    private func handle(_ event: TransferEvent, of piece: Piece) {
        switch event {
        case .redirected:
            state.withLock { _ in piece.redirects += 1 }
            if piece === primary { deliver(event) }
        case .head(let head):
            if piece === primary {
                primaryHead(head)
            } else {
                checkPieceHead(head, of: piece)
            }
        case .progress:
            deliver(.progress(TransferProgress(receivedBytes: receivedBytes(), expectedBytes: expectedBytes())))
            // A piece's pace is known only as its bytes come: a free connection may take over
            // the rest of a slow one now.
            if segmentation.splits { fillConnections() }
        case .completed(let result):
            if piece === primary, askWholeFileAfterProbe() { return }
            pieceEnded(piece, result)
        }
    }

    /// After a first-piece request whose answer could not start a split: the first connection
    /// asks for the whole file from the start, as without the probe (its bytes are written
    /// again). True when it did.
    private func askWholeFileAfterProbe() -> Bool {
        let again = state.withLock { state -> Bool in
            guard state.probeFailed, state.failure == nil, state.command != .cancel else { return false }
            state.probeFailed = false
            state.probing = false
            state.splitDecided = false
            state.primaryHead = nil
            primary.position = startOffset
            primary.end = .max
            primary.isRunning = true
            return true
        }
        if again { launch(primary, request: request) }
        return again
    }

    private func receivedBytes() -> Int64 {
        state.withLock { state in
            state.pieces.reduce(Self.keptBytes(state)) { $0 + ($1.position - $1.start) }
        }
    }

    private func expectedBytes() -> Int64? {
        state.withLock { state in state.completeLength.map { $0 - startOffset } }
    }

    private func primaryHead(_ head: ResponseHead) {
        enum Decision { case single, split, changed, refused(String), probeFailed }
        let decision: Decision = state.withLock { state in
            if state.probing {
                state.probing = false
                // A 206 cannot be split without a validator (nor continued without one: the
                // next request might get another version) or without the file's length; a 416
                // is an empty file's answer.
                if head.status == 416
                    || (head.status == 206 && (head.resumeValidator == nil || head.completeLength == nil))
                {
                    state.probeFailed = true
                    return .probeFailed
                }
            }
            state.primaryHead = head
            state.splitDecided = true
            if head.isSuccess, let refusal = request.rangeRefusal(of: head) {
                // The transport ends the primary for it too; no piece may start meanwhile.
                return .refused(refusal)
            }
            let validator = head.resumeValidator
            let rangesHonoured =
                head.status == 206
                || head.headers.values(for: "Accept-Ranges").contains { $0.lowercased().contains("bytes") }
            if !state.kept.isEmpty, head.isSuccess, let known = state.validator, validator != known {
                // The pieces on disk are of another version of the file.
                return .changed
            }
            guard head.isSuccess, let length = head.completeLength, let validator, rangesHonoured else {
                // One connection to the end: whatever was on disk past the start is rewritten.
                primary.end = .max
                state.kept = []
                durable.withLock { $0 = [] }
                return .single
            }
            state.validator = validator
            state.completeLength = length
            // The holes: [start, length) less the ranges already on disk.
            var holes: [Range<Int64>] = []
            var cursor = startOffset
            for range in state.kept where range.lowerBound >= cursor {
                if range.lowerBound > cursor { holes.append(cursor..<min(range.lowerBound, length)) }
                cursor = max(cursor, range.upperBound)
            }
            if cursor < length { holes.append(cursor..<length) }
            holes.removeAll { $0.isEmpty }
            // Chunks only help when several connections share the holes out; one connection
            // (a single mirror taking over, say) keeps one request per hole.
            var pieceSize: Int64?
            if hasher != nil, segmentation.splits {
                pieceSize = min(hashingChunkSize, evenPieceSize(of: holes))
            } else if segmentation.splits, request.maxReceiveBytesPerSecond == nil {
                // Every connection asks for its final range at once. Halving running pieces
                // instead (the way a piece is taken over later) leaves each halved request
                // running past its new end until the connection is cut: at 16 connections, a
                // quarter of the file more from the server.
                pieceSize = evenPieceSize(of: holes)
            }
            if let probeEnd = probe?.range?.end.map({ $0 + 1 }), head.status == 206 {
                // The first request asked for the file's first bytes only (a fresh download:
                // one hole from byte 0). It keeps them as its piece when they are at least a
                // piece; otherwise its connection takes the rest of its piece once they are in:
                // last, after every other connection got a piece of its own, unless the
                // download is hashed in file order.
                let firstEnd = min(probeEnd, length)
                primary.end = firstEnd
                let pieceEnd = pieceSize.map { min($0, length) } ?? length
                if firstEnd >= pieceEnd {
                    let rest = firstEnd < length ? [firstEnd..<length] : []
                    state.queued = pieceSize.map { Self.chunked(rest, size: $0) } ?? rest
                } else {
                    let rest = pieceEnd < length ? [pieceEnd..<length] : []
                    state.queued = pieceSize.map { Self.chunked(rest, size: $0) } ?? rest
                    if hasher != nil {
                        state.queued.insert(firstEnd..<pieceEnd, at: 0)
                    } else {
                        state.queued.append(firstEnd..<pieceEnd)
                    }
                }
                return .split
            }
            if let size = pieceSize { holes = Self.chunked(holes, size: size) }
            if let first = holes.first, first.lowerBound == startOffset {
                primary.end = first.upperBound
                state.queued = Array(holes.dropFirst())
            } else {
                primary.end = startOffset
                state.queued = holes
            }
            return .split
        }
        if case .probeFailed = decision {
            // Its body is of no use: end it now (a 416 ends by itself).
            if let id = state.withLock({ _ in primary.id }), head.status != 416 { transport.cancel(id) }
            return
        }
        deliver(.head(head))
        switch decision {
        case .probeFailed: break
        case .single: break
        case .split: fillConnections()
        case .changed:
            fail(
                TransportError(
                    .rangeNotHonoured, "the file changed since its segments were downloaded (validator differs)",
                    httpStatus: head.status, url: request.url.string))
        case .refused(let refusal):
            fail(
                TransportError(
                    .rangeNotHonoured, "the server answered the resumed request with \(refusal)",
                    httpStatus: head.status, url: request.url.string))
        }
    }

    /// A further connection's head must be the same file's piece: 206, from the piece's start,
    /// with the first response's validator. A mirror's must announce the same length and keep
    /// its own first validator; a mirror that does not fit is dropped for this transfer and the
    /// piece's range goes to another source.
    private func checkPieceHead(_ head: ResponseHead, of piece: Piece) {
        let (problem, dropsMirror): (TransportError?, Bool) = state.withLock { state in
            let source = state.sources[piece.source]
            let isMirror = piece.source != 0
            let who = isMirror ? "mirror \(source.url)" : "a segment"
            guard head.status == 206, head.contentRange?.first == piece.start else {
                // A mirror that ignores ranges is a misfit of the mirror, not a changed file.
                return (
                    TransportError(
                        isMirror ? .protocolViolation : .rangeNotHonoured,
                        "\(who) from byte \(piece.start) was answered with \(head.status)",
                        httpStatus: head.status, url: source.url.string), isMirror
                )
            }
            if isMirror {
                guard let length = state.completeLength, head.completeLength == length else {
                    let announced = head.completeLength.map(String.init) ?? "an unknown number of"
                    let first = state.completeLength.map(String.init) ?? "an unknown number of"
                    return (
                        TransportError(
                            .protocolViolation,
                            "\(who) announced \(announced) bytes, \(request.url) \(first): not the same file",
                            httpStatus: head.status, url: source.url.string), true
                    )
                }
                guard let validator = head.resumeValidator else {
                    return (
                        TransportError(
                            .protocolViolation,
                            "\(who) answered without ETag or Last-Modified: its file's version cannot be checked",
                            httpStatus: head.status, url: source.url.string), true
                    )
                }
                if let known = source.validator, known != validator {
                    return (
                        TransportError(
                            .protocolViolation, "\(who) changed its file while downloading (validator differs)",
                            httpStatus: head.status, url: source.url.string), true
                    )
                }
                state.sources[piece.source].validator = validator
                return (nil, false)
            }
            if let validator = state.validator, head.resumeValidator != validator {
                return (
                    TransportError(
                        .rangeNotHonoured, "the file changed while downloading it in segments (validator differs)",
                        httpStatus: head.status, url: request.url.string), false
                )
            }
            if let length = state.completeLength, let announced = head.completeLength, announced != length {
                return (
                    TransportError(
                        .rangeNotHonoured,
                        "a segment announced \(announced) bytes in all, the first response \(length)",
                        httpStatus: head.status, url: request.url.string), false
                )
            }
            return (nil, false)
        }
        guard let problem else { return }
        if dropsMirror {
            reject(piece, problem)
        } else {
            fail(problem, source: piece.source)
        }
    }

    /// Refuses a mirror piece's response: it writes nothing, the mirror is dropped for this
    /// transfer, and the piece's range goes back to the queue when its connection ended.
    private func reject(_ piece: Piece, _ problem: TransportError) {
        let id: TransferID? = state.withLock { state in
            piece.rejection = problem
            if state.sources[piece.source].dropped == nil {
                state.sources[piece.source].dropped = problem.failureReason
            }
            return piece.id
        }
        if let id { transport.cancel(id) }
    }

    private func pieceEnded(_ piece: Piece, _ result: Result<TransferSummary, TransportError>) {
        var outcome: TransportError? = state.withLock { state in
            piece.isRunning = false
            if piece.position >= piece.end, piece.rejection == nil { return nil }
            var error: TransportError
            switch result {
            case .success where piece === primary && piece.end == .max:
                // One connection ran to the end of the body.
                piece.end = piece.position
                return nil
            case .success:
                error = TransportError(
                    .protocolViolation,
                    "a segment ended at byte \(piece.position), before its end at \(piece.end)",
                    url: state.sources[piece.source].url.string)
            case .failure(let failure):
                error = failure
            }
            if let rejection = piece.rejection { error = rejection }
            guard Self.failsOver(piece, error, state) else { return error }
            // The source is dropped for this transfer; the rest of the range goes to another.
            if state.sources[piece.source].dropped == nil {
                state.sources[piece.source].dropped = error.failureReason
            }
            if piece.end > piece.position {
                let rest = piece.position..<piece.end
                let slot = state.queued.firstIndex { $0.lowerBound > rest.lowerBound } ?? state.queued.endIndex
                state.queued.insert(rest, at: slot)
            }
            piece.end = piece.position
            return nil
        }
        if outcome == nil, piece !== primary {
            // Complete (up to its end, lowered if it failed over): its bytes go to the file
            // (the page cache) now, and its buffers and descriptor go; the next synchronize()
            // syncs the file for it.
            outcome = piece.fileLock.withLock { _ -> TransportError? in
                do throws(SinkWriteError) {
                    try piece.file.close()
                    piece.closedEnd = piece.file.writtenEnd
                    return nil
                } catch {
                    return TransportError(.writeFailed, error.message, url: request.url.string, errno: error.errno)
                }
            }
        }
        if let outcome, state.withLock({ $0.command != .cancel }) {
            fail(outcome, source: piece.source)
        }
        fillConnections()
        finishIfDone()
    }

    /// Whether a piece that ended short with `error` leaves its range to another source: its
    /// source failed (not the file system, not a cancel of ours) or was refused, and another
    /// source is still in use. A connection to the end of a body of unknown length cannot.
    private static func failsOver(_ piece: Piece, _ error: TransportError, _ state: State) -> Bool {
        guard state.command != .cancel, state.failure == nil, state.splitDecided, piece.end != .max else {
            return false
        }
        guard piece.rejection != nil || (error.code != .writeFailed && error.code != .cancelled) else { return false }
        return state.sources.indices.contains { $0 != piece.source && state.sources[$0].dropped == nil }
    }

    /// Ends the whole transfer with `error`: every other connection is cancelled.
    private func fail(_ error: TransportError, source: Int? = nil) {
        let ids: [TransferID] = state.withLock { state in
            if state.failure == nil {
                state.failure = error
                state.failingSource = source
            }
            let wasCancelled = state.command == .cancel
            state.command = .cancel
            return wasCancelled ? [] : state.pieces.filter(\.isRunning).compactMap(\.id)
        }
        for id in ids { transport.cancel(id) }
    }

    /// Starts connections for queued ranges, then splits the largest running piece, while
    /// there is room for another connection. Each new piece goes to the source (the request's
    /// URL or a mirror still in use) with the fewest running pieces.
    private func fillConnections() {
        while let (piece, pieceRequest) = nextPiece() {
            launch(piece, request: pieceRequest)
        }
    }

    private func nextPiece() -> (Piece, TransferRequest)? {
        state.withLock { state -> (Piece, TransferRequest)? in
            guard state.splitDecided, state.command == .run, state.failure == nil else { return nil }
            let running = state.pieces.filter(\.isRunning)
            // A download with a rate cap of its own keeps to one connection at a time: the cap
            // is per download, and one connection can reach it.
            let most = request.maxReceiveBytesPerSecond == nil ? segmentation.maxConnectionsPerTask : 1
            guard running.count < most else { return nil }
            var load = [Int](repeating: 0, count: state.sources.count)
            for piece in running { load[piece.source] += 1 }
            guard
                let source = state.sources.indices.filter({ state.sources[$0].dropped == nil }).min(by: {
                    (load[$0], $0) < (load[$1], $1)
                })
            else { return nil }
            let range: Range<Int64>
            if !state.queued.isEmpty {
                range = state.queued.removeFirst()
            } else {
                let minimum = segmentation.minimumSegmentSize
                let time = now()
                guard
                    let victim = running.filter({ $0.end != .max }).max(by: {
                        ($0.end - $0.position) < ($1.end - $1.position)
                    }), victim.end - victim.position >= 2 * minimum,
                    Self.isWorthSplitting(victim, at: time)
                else { return nil }
                // Cut at a 64 KiB boundary so that two pieces never share a page of the file.
                var cut = victim.position + (victim.end - victim.position) / 2
                cut -= cut % (64 << 10)
                guard cut - victim.position >= minimum, victim.end - cut >= minimum else { return nil }
                range = cut..<victim.end
                victim.end = cut
            }
            let piece = Piece(
                index: state.pieces.count, start: range.lowerBound, end: range.upperBound, path: path, source: source)
            piece.launchedAt = now()
            piece.file.expectedByteCount = Int64(range.count)
            state.pieces.append(piece)
            var pieceRequest = request
            pieceRequest.url = state.sources[source].url
            pieceRequest.range = ByteRange(start: range.lowerBound, end: range.upperBound - 1)
            // A mirror's first request has no validator of its own to send yet: its head is
            // checked instead (see checkPieceHead).
            pieceRequest.ifRange = source == 0 ? state.validator : state.sources[source].validator
            pieceRequest.rangeCompleteLength = state.completeLength
            return (piece, pieceRequest)
        }
    }

    private func finishIfDone() {
        let result: Result<TransferSummary, TransportError>? = state.withLock { state in
            guard !state.completed, !state.pieces.contains(where: \.isRunning) else { return nil }
            // Queued pieces with nothing running: nothing can start them unless the engine
            // resumes a suspended transfer; a cancel or a failure ends here.
            if state.failure == nil, state.command != .cancel, !state.queued.isEmpty { return nil }
            state.completed = true
            if let failure = state.failure { return .failure(failure) }
            if state.command == .cancel {
                return .failure(TransportError(.cancelled, "the transfer was cancelled", url: request.url.string))
            }
            guard let head = state.primaryHead else {
                return .failure(TransportError(.protocolViolation, "no response head", url: request.url.string))
            }
            let received = state.pieces.reduce(Self.keptBytes(state)) { $0 + ($1.position - $1.start) }
            return .success(TransferSummary(head: head, receivedBytes: received, redirectCount: primary.redirects))
        }
        if let result { deliver(.completed(result)) }
    }

    private func deliver(_ event: TransferEvent) {
        delivery.withLock { _ in handler(event) }
    }

    // MARK: The file

    /// Whether any piece wrote a byte.
    var isOpened: Bool {
        state.withLock { state in state.pieces.contains { $0.file.isOpened } || !state.kept.isEmpty }
    }

    /// Syncs every piece; returns the end of the durable prefix from the start of the file, and
    /// records the synced ranges past it in ``durableRanges``.
    func synchronize() throws(SinkWriteError) -> Int64 {
        let (pieces, kept) = state.withLock { ($0.pieces, $0.kept) }
        var ranges = kept
        var closedAny = false
        for piece in pieces {
            let end = try piece.fileLock.withLock { _ throws(SinkWriteError) -> Int64 in
                if let closed = piece.closedEnd {
                    closedAny = true
                    return closed
                }
                return try piece.file.synchronize()
            }
            if end > piece.start { ranges.append(piece.start..<end) }
        }
        // Closed pieces' bytes were written before their end was read: one fsync of the file
        // (of its inode, whatever the descriptor) makes them durable.
        if closedAny { try Self.syncFile(at: path) }
        let (prefix, rest) = Self.merge(ranges, from: startOffset)
        durable.withLock { $0 = rest }
        return prefix
    }

    /// The mirrors dropped during this transfer, with why (a source that failed or did not fit).
    var droppedSources: [(url: DownloadURL, reason: FailureReason)] {
        state.withLock { state in
            state.sources.compactMap { source in source.dropped.map { (source.url, $0) } }
        }
    }

    /// The sources that sent bytes of the file.
    var servingSources: [DownloadURL] { state.withLock { $0.sources.filter(\.served).map(\.url) } }

    /// The source whose failure ended the transfer, if one did.
    var failingSource: DownloadURL? { state.withLock { state in state.failingSource.map { state.sources[$0].url } } }

    /// Synced ranges past the durable prefix, as of the last ``synchronize()``.
    var durableRanges: [Range<Int64>] { durable.withLock { $0 } }

    /// Closes every piece's file.
    func close() throws(SinkWriteError) {
        let pieces = state.withLock { $0.pieces }
        var firstError: SinkWriteError?
        for piece in pieces {
            do throws(SinkWriteError) {
                try piece.fileLock.withLock { _ throws(SinkWriteError) in try piece.file.close() }
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
    }

    /// `fsync`s the file at `path` through a descriptor of its own.
    static func syncFile(at path: String) throws(SinkWriteError) {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SinkWriteError(errno: errno, message: "cannot open \(path) to sync it") }
        defer { closeDescriptor(descriptor) }
        guard fsync(descriptor) == 0 else { throw SinkWriteError(errno: errno, message: "fsync \(path)") }
    }

    /// Merges `ranges` with the prefix `0..<start`: the prefix's new end, and the ranges left
    /// past it (sorted, disjoint, not touching).
    static func merge(_ ranges: [Range<Int64>], from start: Int64) -> (prefix: Int64, rest: [Range<Int64>]) {
        var prefix = start
        var rest: [Range<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where !range.isEmpty {
            if range.lowerBound <= prefix, rest.isEmpty {
                prefix = max(prefix, range.upperBound)
            } else if let last = rest.last, range.lowerBound <= last.upperBound {
                rest[rest.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                rest.append(range)
            }
        }
        return (prefix, rest)
    }
}

// MARK: Hashing in order

extension SegmentedTransfer {
    /// `ranges` cut into consecutive chunks of at most `size` bytes, in order.
    /// Whether a running piece is worth splitting at `time`: its connection, at its pace so
    /// far, would need at least ``splitWorthwhile`` for the rest, or it has made no progress for
    /// that long (a connection that has not answered yet is not slow).
    static func isWorthSplitting(_ piece: Piece, at time: Duration) -> Bool {
        let done = piece.position - piece.start
        guard done > 0, let first = piece.firstByteAt else { return time - piece.launchedAt >= splitWorthwhile }
        // Its pace since its first byte; a connection that stalled since counts its stall.
        return (time - first) * (Double(piece.end - piece.position) / Double(done)) >= splitWorthwhile
    }

    /// The size that cuts `holes` into one piece per connection, as many as the connections
    /// allow without a piece smaller than the minimum segment (a file under two minimum
    /// segments stays whole), at a 64 KiB boundary.
    func evenPieceSize(of holes: [Range<Int64>]) -> Int64 {
        let total = holes.reduce(Int64(0)) { $0 + Int64($1.count) }
        let count = max(1, min(Int64(segmentation.maxConnectionsPerTask), total / segmentation.minimumSegmentSize))
        let boundary: Int64 = 64 << 10
        return max(boundary, ((total + count - 1) / count + boundary - 1) / boundary * boundary)
    }

    static func chunked(_ ranges: [Range<Int64>], size: Int64) -> [Range<Int64>] {
        var chunks: [Range<Int64>] = []
        for range in ranges {
            var start = range.lowerBound
            while start < range.upperBound {
                let end = min(start + size, range.upperBound)
                chunks.append(start..<end)
                start = end
            }
        }
        return chunks
    }

    /// A piece wrote `bytes` at `offset`: when they continue the hashed bytes they are hashed
    /// now. When the piece reached its end, a catch-up on ``hashQueue`` reads back what the
    /// pieces after it wrote meanwhile, up to the first piece still writing, whose later writes
    /// are hashed as they come again; the transport's thread never reads the file.
    fileprivate func hashWritten(_ piece: Piece, _ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        guard let hasher else { return }
        let startsCatchUp = hashing.withLock { progress -> Bool in
            let end = offset + Int64(bytes.count)
            // During a catch-up it hashes these bytes from the file.
            guard !progress.broken, !progress.catchingUp, offset <= progress.end, end > progress.end else {
                return false
            }
            let fresh = UnsafeRawBufferPointer(rebasing: bytes[Int(progress.end - offset)...])
            do {
                try hasher.write(fresh, at: progress.end)
                progress.end = end
            } catch {
                progress.broken = true
                return false
            }
            guard end >= state.withLock({ _ in piece.end }) else { return false }
            progress.catchingUp = true
            return true
        }
        if startsCatchUp { hashQueue.async { [self] in catchUp() } }
    }

    /// Reads back and hashes what is on disk from the hashed end (on ``hashQueue``): the kept
    /// ranges and the written bytes of the pieces it meets. It ends, under the lock, at a piece
    /// whose written bytes are all hashed (its next write is hashed inline) or at a hole.
    private func catchUp() {
        guard let hasher else { return }
        let reader = FileReader(path: path)
        while true {
            let step: (from: Int64, to: Int64)? = hashing.withLock { progress in
                let at = progress.end
                let (kept, piece) = state.withLock { state in
                    (state.kept.first { $0.contains(at) }, state.pieces.first { $0.start <= at && at < $0.end })
                }
                var target = kept?.upperBound
                if target == nil, let piece {
                    // Its buffered bytes go to the file first; a write racing this one is in
                    // the file by the next round.
                    target = piece.fileLock.withLock { _ -> Int64? in
                        if let closed = piece.closedEnd { return closed }
                        do {
                            try piece.file.flush()
                        } catch {
                            return nil
                        }
                        return piece.file.writtenEnd
                    }
                    if target == nil { progress.broken = true }
                }
                guard !progress.broken, let target, target > at else {
                    progress.catchingUp = false
                    return nil
                }
                return (at, target)
            }
            guard let step else { return }
            // Only this queue moves the hashed end while catching up.
            let read = reader.feed(hasher, from: step.from, to: step.to)
            hashing.withLock { progress in
                progress.end = step.from + read
                if progress.end < step.to {
                    progress.broken = true
                    progress.catchingUp = false
                }
            }
            if read < step.to - step.from { return }
        }
    }

    /// Hashes what is left once every piece ended and the file is complete: the sink to give
    /// the verifier, or nil when hashing in order failed (the verifier reads the whole file).
    func finishHashing(length: Int64) -> (any TransferSink)? {
        guard let hasher else { return nil }
        hashQueue.sync {}
        return hashing.withLock { progress in
            guard !progress.broken, !progress.catchingUp, progress.end <= length else { return nil }
            let read = FileReader(path: path).feed(hasher, from: progress.end, to: length)
            progress.readAtEnd = read
            progress.end += read
            return progress.end == length ? hasher : nil
        }
    }

    /// The bytes ``finishHashing(length:)`` read back: what was left to hash at the end.
    var bytesHashedAtEnd: Int64 { hashing.withLock { $0.readAtEnd } }
}

/// The sink of one piece: writes up to the piece's end, then stops the connection.
private final class PieceSink: TransferSink, @unchecked Sendable {
    let transfer: SegmentedTransfer
    let piece: SegmentedTransfer.Piece

    init(transfer: SegmentedTransfer, piece: SegmentedTransfer.Piece) {
        self.transfer = transfer
        self.piece = piece
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        let allowed = try transfer.reserve(piece, offset: offset, count: bytes.count)
        if allowed > 0 {
            let part = UnsafeRawBufferPointer(rebasing: bytes[0..<allowed])
            try piece.fileLock.withLock { _ in try piece.file.write(part, at: offset) }
            transfer.hashWritten(piece, part, at: offset)
        }
        if allowed < bytes.count { throw SegmentedTransfer.PieceComplete() }
    }

    func flush() throws {
        try piece.fileLock.withLock { _ in try piece.file.flush() }
    }
}

/// Reads a file back into a hashing sink.
private struct FileReader {
    let path: String

    /// Feeds `hasher` the file's bytes `from..<to`; returns how many it fed (fewer on a failed
    /// read or write).
    func feed(_ hasher: any TransferSink, from: Int64, to: Int64) -> Int64 {
        guard to > from else { return 0 }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return 0 }
        defer { closeDescriptor(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var offset = from
        while offset < to {
            let count = Int(min(Int64(buffer.count), to - offset))
            let read = pread(descriptor, buffer.baseAddress, count, off_t(offset))
            guard read > 0 else { break }
            do {
                try hasher.write(UnsafeRawBufferPointer(rebasing: buffer[0..<read]), at: offset)
            } catch {
                break
            }
            offset += Int64(read)
        }
        return offset - from
    }
}

/// Closes a descriptor (the transfer's own `close()` hides the C function inside it).
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// Where a verified segmented download's hashing sink passes its writes: nowhere, since the
/// pieces wrote the bytes to the file already.
final class DiscardingSink: TransferSink, Sendable {
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {}
    func flush() throws {}
}
