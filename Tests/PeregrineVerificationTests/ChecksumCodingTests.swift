import Foundation
import PeregrineCore
import PeregrineVerification
import Testing

/// Checksums and verification results survive being stored beside a task's state.
@Suite("Checksum and VerificationResult coding")
struct ChecksumCodingTests {
    static let expected = try! ChecksumTestFiles.checksum(.sha256, of: Array("expected".utf8))
    static let actual = try! ChecksumTestFiles.checksum(.sha256, of: Array("actual".utf8))

    @Test func checksumIsStoredAsItsAlgorithmEqualsHexText() throws {
        let data = try JSONEncoder().encode([Self.expected])
        #expect(String(decoding: data, as: UTF8.self) == "[\"sha256=\(Self.expected.hex)\"]")
        #expect(try JSONDecoder().decode([Checksum].self, from: data) == [Self.expected])
    }

    @Test func decodingAMalformedChecksumFails() {
        let data = Data("[\"sha256=nothex\"]".utf8)
        #expect(throws: VerificationError.self) { try JSONDecoder().decode([Checksum].self, from: data) }
    }

    @Test(arguments: [
        VerificationResult.unverified, .verified, .mismatch(expected: expected, actual: actual),
    ])
    func verificationResultRoundTripsThroughJSONAndPropertyLists(_ result: VerificationResult) throws {
        #expect(try JSONDecoder().decode(VerificationResult.self, from: JSONEncoder().encode(result)) == result)
        let plist = try PropertyListEncoder().encode([result])
        #expect(try PropertyListDecoder().decode([VerificationResult].self, from: plist) == [result])
    }

    @Test func mismatchIsStoredWithReadableChecksums() throws {
        let result = VerificationResult.mismatch(expected: Self.expected, actual: Self.actual)
        let json = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
        #expect(json.contains("\"expected\":\"sha256=\(Self.expected.hex)\""))
        #expect(json.contains("\"actual\":\"sha256=\(Self.actual.hex)\""))
    }

    @Test func resultComparesDigestsOfOneAlgorithm() throws {
        #expect(try VerificationResult(expected: Self.expected, actual: Self.expected) == .verified)
        #expect(
            try VerificationResult(expected: Self.expected, actual: Self.actual)
                == .mismatch(expected: Self.expected, actual: Self.actual))
        let md5 = try ChecksumTestFiles.checksum(.md5, of: Array("expected".utf8))
        let error = #expect(throws: VerificationError.self) {
            try VerificationResult(expected: Self.expected, actual: md5)
        }
        #expect(error?.code == .algorithmMismatch)
    }

    @Test func mismatchBecomesAVerificationFailureNamingBothDigests() throws {
        let result = VerificationResult.mismatch(expected: Self.expected, actual: Self.actual)
        #expect(result.description == "sha256 mismatch: expected \(Self.expected.hex), actual \(Self.actual.hex)")
        let reason = try #require(result.failureReason)
        #expect(reason.code == .verification)
        #expect(reason.message == result.description)
        #expect(VerificationResult.verified.failureReason == nil)
        #expect(VerificationResult.unverified.failureReason == nil)
        #expect(VerificationResult.verified.isVerified)
        #expect(!VerificationResult.unverified.isVerified)
        #expect(!result.isVerified)
    }
}
