import PeregrineChecksums
import PeregrineEngine
import PeregrineStorage
import PeregrineTransport

extension StoredTask {
    /// The stored form of an engine record, with what a facade keeps beside it.
    ///
    /// - Parameters:
    ///   - record: the engine's record of the task.
    ///   - displayName: the name shown instead of the file name.
    ///   - metaInfo: the application's property-list meta info.
    ///   - kind: the file's kind, when the caller classified it.
    public init(
        _ record: DownloadTaskRecord, displayName: String? = nil, metaInfo: [String: PropertyListValue] = [:],
        kind: FileKind? = nil
    ) {
        let received = record.resumeRecord?.offset ?? (record.state == .finished ? record.expectedLength ?? 0 : 0)
        self.init(
            urlString: record.urlString, list: record.list.rawValue, displayName: displayName,
            fileName: record.fileName, temporaryFileName: record.temporaryFileName,
            preferredFileName: record.preferredFileName, kind: kind, mimeType: record.mimeType,
            expectedLength: record.expectedLength, receivedLength: received, state: record.state,
            resumeRecord: record.resumeRecord, addedAt: record.addedAt, finishedAt: record.finishedAt,
            metaInfo: metaInfo, checksum: record.checksum, verification: StoredVerification(record.verification),
            checksumURL: record.checksumURL,
            verificationRetry: record.verificationRetry.map {
                StoredVerificationRetry(maxAttempts: $0.maxAttempts, mismatchedFile: $0.mismatchedFile.rawValue)
            }, maxConnections: record.maxConnections, speedLimit: record.speedLimit?.bytesPerSecond,
            mirrors: record.mirrors, subdirectory: record.subdirectory)
    }

    /// The engine record of the stored task, for `DownloadEngine.restore(_:)`. A task stored
    /// without a temporary file name gets a fresh one; an unreadable verification result is
    /// unverified, an unknown mismatched-file policy keeps the file aside.
    public var engineRecord: DownloadTaskRecord {
        DownloadTaskRecord(
            urlString: urlString, list: DownloadListKey(list), state: state, resumeRecord: resumeRecord,
            fileName: fileName, temporaryFileName: temporaryFileName ?? DownloadDirectory.temporaryName(),
            expectedLength: expectedLength, mimeType: mimeType, preferredFileName: preferredFileName,
            checksum: checksum, addedAt: addedAt, finishedAt: finishedAt,
            verification: verification?.result ?? .unverified, checksumURL: checksumURL,
            verificationRetry: verificationRetry.map {
                VerificationRetryPolicy(
                    maxAttempts: $0.maxAttempts,
                    mismatchedFile: MismatchedFilePolicy(rawValue: $0.mismatchedFile) ?? .keepAside)
            }, maxConnections: maxConnections,
            // A stored rate that is no longer a valid limit reads as none rather than failing the load.
            speedLimit: speedLimit.flatMap { try? SpeedLimit(bytesPerSecond: $0) }, mirrors: mirrors,
            subdirectory: subdirectory)
    }
}

extension StoredVerification {
    /// A verification result as a store keeps it; nil for `VerificationResult.unverified`.
    public init?(_ result: VerificationResult) {
        switch result {
        case .unverified: return nil
        case .verified: self.init(status: "verified")
        case .mismatch(let expected, let actual):
            self.init(status: "mismatch", expected: expected.description, actual: actual.description)
        }
    }

    /// The verification result; unverified when unreadable.
    public var result: VerificationResult {
        switch status {
        case "verified": return .verified
        case "mismatch":
            guard let expected = expected.flatMap({ try? Checksum(parsing: $0) }),
                let actual = actual.flatMap({ try? Checksum(parsing: $0) })
            else { return .unverified }
            return .mismatch(expected: expected, actual: actual)
        default: return .unverified
        }
    }
}
