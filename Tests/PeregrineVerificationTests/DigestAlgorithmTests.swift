import PeregrineVerification
import Testing

@Suite("DigestAlgorithm")
struct DigestAlgorithmTests {
    @Test(arguments: DigestAlgorithm.allCases)
    func byteCountIsTheLengthOfTheDigest(_ algorithm: DigestAlgorithm) throws {
        let digest = try StreamingHasher.digest(algorithm, of: Array("abc".utf8))
        #expect(digest.count == algorithm.byteCount)
        #expect(digest.hexString.count == 2 * algorithm.byteCount)
        #expect(try StreamingHasher.digest(algorithm, of: [UInt8]()).count == algorithm.byteCount)
    }

    @Test func byteCountsAreTheStandardOnes() {
        // Keyed by raw value, so that the table covers whatever set of algorithms this build has.
        let expected: [String: Int] = [
            "md5": 16, "sha1": 20, "sha224": 28, "sha256": 32, "sha384": 48, "sha512": 64, "sha512-256": 32,
            "sha3-256": 32, "sha3-512": 64, "blake2b512": 64,
        ]
        for algorithm in DigestAlgorithm.allCases {
            #expect(algorithm.byteCount == expected[algorithm.rawValue], "\(algorithm)")
        }
    }

    @Test func rawValuesAreTheNamesUsersType() {
        #expect(DigestAlgorithm(rawValue: "sha3-256") == .sha3_256)
        #expect(DigestAlgorithm(rawValue: "sha3-512") == .sha3_512)
        #expect(DigestAlgorithm(rawValue: "blake2b512") == .blake2b512)
        #expect(DigestAlgorithm(rawValue: "sha256") == .sha256)
        #expect(DigestAlgorithm(rawValue: "SHA256") == nil)
        #expect(DigestAlgorithm.sha3_256.description == "sha3-256")
    }

    @Test(arguments: DigestAlgorithm.allCases)
    func differentInputsGiveDifferentDigests(_ algorithm: DigestAlgorithm) throws {
        let a = try StreamingHasher.digest(algorithm, of: Array("abc".utf8))
        let b = try StreamingHasher.digest(algorithm, of: Array("abd".utf8))
        #expect(a != b)
    }
}
