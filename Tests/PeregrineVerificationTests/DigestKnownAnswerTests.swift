import PeregrineVerification
import Testing

/// Published test vectors, each checked against `openssl dgst` on the build machine:
/// FIPS 180-4 examples (SHA-1, SHA-2, SHA-512/256), FIPS 202 examples (SHA-3), RFC 1321 §A.5 (MD5),
/// RFC 7693 Appendix A and the BLAKE2 reference vectors (BLAKE2b-512).
@Suite("Digest known answers")
struct DigestKnownAnswerTests {
    /// An algorithm (by its raw value), a message and its published digest.
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var message: String
        var hex: String
        var algorithm: DigestAlgorithm? { DigestAlgorithm(rawValue: name) }
        var testDescription: String {
            "\(name)(\(message.count > 10 ? "\(message.prefix(10))…" : message.debugDescription))"
        }
    }

    static let twoBlockMessage = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"

    static let publishedVectors: [Vector] = [
        // RFC 1321 §A.5
        Vector(name: "md5", message: "", hex: "d41d8cd98f00b204e9800998ecf8427e"),
        Vector(name: "md5", message: "abc", hex: "900150983cd24fb0d6963f7d28e17f72"),
        Vector(name: "md5", message: "message digest", hex: "f96b697d7cb7938d525a2f31aaf161d0"),
        // FIPS 180-4 examples
        Vector(name: "sha1", message: "", hex: "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        Vector(name: "sha1", message: "abc", hex: "a9993e364706816aba3e25717850c26c9cd0d89d"),
        Vector(name: "sha1", message: twoBlockMessage, hex: "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
        Vector(name: "sha224", message: "", hex: "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f"),
        Vector(name: "sha224", message: "abc", hex: "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"),
        Vector(
            name: "sha224", message: twoBlockMessage, hex: "75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525"),
        Vector(
            name: "sha256", message: "", hex: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        Vector(
            name: "sha256", message: "abc", hex: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        Vector(
            name: "sha256", message: twoBlockMessage,
            hex: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        Vector(
            name: "sha384", message: "",
            hex: "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b"),
        Vector(
            name: "sha384", message: "abc",
            hex: "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"),
        Vector(
            name: "sha512", message: "",
            hex:
                "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        ),
        Vector(
            name: "sha512", message: "abc",
            hex:
                "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        ),
        // FIPS 202 examples
        Vector(
            name: "sha3-256", message: "", hex: "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"),
        Vector(
            name: "sha3-256", message: "abc", hex: "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"),
        Vector(
            name: "sha3-256", message: twoBlockMessage,
            hex: "41c0dba2a9d6240849100376a8235e2c82e1b9998a999e21db32dd97496d3376"),
        Vector(
            name: "sha3-512", message: "",
            hex:
                "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a615b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26"
        ),
        Vector(
            name: "sha3-512", message: "abc",
            hex:
                "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0"
        ),
        // RFC 7693 Appendix A ("abc") and the BLAKE2 reference vectors (empty input)
        Vector(
            name: "blake2b512", message: "",
            hex:
                "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce"
        ),
        Vector(
            name: "blake2b512", message: "abc",
            hex:
                "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
        ),
        // FIPS 180-4 SHA-512/256 examples
        Vector(
            name: "sha512-256", message: "", hex: "c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a"),
        Vector(
            name: "sha512-256", message: "abc", hex: "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23"),
    ]

    /// The vectors of the algorithms this build offers.
    static let vectors = publishedVectors.filter { $0.algorithm != nil }

    @Test(arguments: vectors)
    func digestMatchesThePublishedVector(_ vector: Vector) throws {
        let algorithm = try #require(vector.algorithm)
        let digest = try StreamingHasher.digest(algorithm, of: Array(vector.message.utf8))
        #expect(digest.hexString == vector.hex)
    }

    @Test(arguments: vectors)
    func streamingDigestMatchesThePublishedVector(_ vector: Vector) throws {
        var hasher = try StreamingHasher(try #require(vector.algorithm))
        for byte in vector.message.utf8 { hasher.update(CollectionOfOne(byte)) }
        #expect(hasher.finalize().hexString == vector.hex)
    }

    @Test func everyAlgorithmHasAnEmptyAndAnABCVector() {
        for algorithm in DigestAlgorithm.allCases {
            let messages = Set(Self.vectors.filter { $0.algorithm == algorithm }.map(\.message))
            #expect(messages.isSuperset(of: ["", "abc"]), "\(algorithm)")
        }
    }

    /// FIPS 180-4's long example: one million "a".
    @Test func sha256OfAMillionAMatchesTheFIPSExample() throws {
        var hasher = try StreamingHasher(.sha256)
        let block = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(block) }
        #expect(hasher.finalize().hexString == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
