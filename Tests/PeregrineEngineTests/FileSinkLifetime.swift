import PeregrineEngine
import PeregrineTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs `body` with a new sink, then keeps the sink alive until no background job holds it, so
/// that its last release (and its `deinit`) happens on this thread.
///
/// A workaround for tests whose background writes fail part-way: `FileSink.deinit` calls
/// `queue.sync {}`, which traps when the deinit runs on that queue, as it does when a finishing
/// background job drops the last reference (see
/// `FileSinkCloseTests.releasingASinkWithABackgroundWriteInFlightDoesNotCrash`). Without this,
/// one such test could bring down the whole test process.
func withDrainedFileSink<Result>(
    path: String,
    options: FileSink.Options = FileSink.Options(),
    _ body: (FileSink) throws -> Result
) throws -> Result {
    var sink = try FileSink(path: path, options: options)
    defer {
        let deadline = ContinuousClock.now + .seconds(60)
        while !isKnownUniquelyReferenced(&sink), ContinuousClock.now < deadline { sched_yield() }
    }
    return try body(sink)
}
