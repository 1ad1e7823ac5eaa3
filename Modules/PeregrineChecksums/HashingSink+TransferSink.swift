import PeregrineTransport

extension HashingSink: TransferSink {}

extension HashingSink {
    /// Creates a hashing sink in front of `sink`: every write and flush goes on to it, and the
    /// digest, computed by `digests`, on the hashing sink's own queue.
    ///
    /// - Throws: ``VerificationError`` when `digests` lacks the algorithm.
    public convenience init(
        _ algorithm: DigestAlgorithm,
        wrapping sink: any TransferSink,
        options: Options = Options(),
        digests: any DigestProvider
    ) throws(VerificationError) {
        let downstream = Downstream(write: { try sink.write($0, at: $1) }, flush: { try sink.flush() })
        try self.init(algorithm, downstream: downstream, options: options, digests: digests)
    }
}
