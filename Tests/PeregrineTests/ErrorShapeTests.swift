import Peregrine
import PeregrineAuth
import Testing

/// Every error of the package with a code and a message has one shape, `PeregrineError`: a code
/// from an open set whose name reads well, and `"code: message"` unless the error says more.
@Suite struct ErrorShapeTests {
    /// The error types with the shape (and the service's `PathConfinementError`): this list
    /// compiles only while each of them conforms.
    static let types: [any PeregrineError.Type] = [
        URLValidationError.self, TransportError.self, VerificationError.self, EngineError.self,
        TaskOperationError.self, StoreError.self, DownloadListError.self, ThumbnailError.self,
        DownloadManagerError.self, ChallengeError.self, CredentialError.self, TrustConfigurationError.self,
    ]

    @Test func everyTypeIsListedOnce() {
        #expect(Set(Self.types.map { "\($0)" }).count == Self.types.count)
    }

    @Test func theDescriptionIsTheCodeAndTheMessage() {
        func check(_ error: some PeregrineError, _ expected: String) {
            #expect(error.description == expected)
            #expect(!error.code.name.isEmpty)
            #expect(error.code.description == error.code.name)
        }
        check(EngineError(.directoryUnavailable, "/nowhere"), "download directory unavailable: /nowhere")
        check(DownloadManagerError(.storeFailed, "disk gone"), "\(DownloadManagerError.Code.storeFailed): disk gone")
        check(StoreError(.corrupt, "bad snapshot"), "\(StoreError.Code.corrupt): bad snapshot")
    }

    @Test func errorsWithMoreToSayKeepTheirOwnDescription() throws {
        let error = try #require(throws: URLValidationError.self) { try DownloadURL("ftp://example.com/a") }
        #expect(error.description.contains("only http and https"))
        #expect(error.message == error.description)
    }
}
