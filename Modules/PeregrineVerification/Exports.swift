// The checksum value types, checksum files, `HashingSink` and `FileVerifier` live in
// `PeregrineChecksums`, which needs no hashing library; this target adds OpenSSL's digests and
// the conveniences that use them, and brings the rest along.
@_exported import PeregrineChecksums
