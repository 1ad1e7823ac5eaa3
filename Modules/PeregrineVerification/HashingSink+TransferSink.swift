import PeregrineTransport

extension HashingSink: TransferSink {}

extension HashingSink {
    /// Creates a hashing sink in front of `sink`: every write and flush goes on to it, and the
    /// digest is computed on the hashing sink's own queue.
    ///
    /// - Throws: ``VerificationError`` when OpenSSL lacks the algorithm.
    public convenience init(
        _ algorithm: DigestAlgorithm,
        wrapping sink: any TransferSink,
        options: Options = Options()
    ) throws(VerificationError) {
        let downstream = Downstream(write: { try sink.write($0, at: $1) }, flush: { try sink.flush() })
        try self.init(algorithm, downstream: downstream, options: options)
    }
}
