import PeregrineAuth
import TestSupport
import Testing

/// Property-based fuzzing of the challenge parser, in CI: seeded generators of hostile values
/// (random bytes, grammar-heavy noise, mutated real challenges, extremes), a fixed number of
/// cases per seed so a failure replays from its seed, and a few seconds of work at most.
@Suite("Challenge parser fuzzing")
struct ChallengeParserFuzzTests {
    static let seeds: [UInt64] = [0x5EED_0001, 0x5EED_0002, 0x5EED_0003, 0xDEAD_BEEF]
    static let casesPerSeed = 3_000

    let limits = AuthenticationChallengeParser.Limits()

    @Test("hostile values never crash and yield bounded output or a typed error", arguments: seeds)
    func hostileValuesYieldBoundedOutputOrTypedErrors(seed: UInt64) {
        var generator = SeededRandom(seed: seed)
        let parser = AuthenticationChallengeParser(limits: limits)
        // A guard against a slow machine, not an assertion: the case count bounds the work.
        let deadline = ContinuousClock.now + .seconds(2)
        var failures: [String] = []
        for index in 0..<Self.casesPerSeed where ContinuousClock.now < deadline {
            let value = HostileValues.make(using: &generator)
            if let problem = check(value, parser: parser) {
                failures.append("seed \(seed) case \(index): \(problem)")
                if failures.count >= 5 { break }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test("several hostile fields are read independently", arguments: seeds)
    func hostileFieldListsStayBounded(seed: UInt64) {
        var generator = SeededRandom(seed: seed ^ 0xF1E1D5)
        let parser = AuthenticationChallengeParser(limits: limits)
        let deadline = ContinuousClock.now + .seconds(2)
        for _ in 0..<100 where ContinuousClock.now < deadline {
            let fields = (0..<Int.random(in: 0...24, using: &generator)).map { _ in
                HostileValues.make(using: &generator)
            }
            let result = parser.parse(fields: fields)
            #expect(result.challenges.count <= limits.maximumChallenges)
            #expect(result.errors.count <= fields.count)
            let selection = ChallengeSelection(fields: fields)
            #expect(selection.candidates.count <= limits.maximumChallenges)
            #expect(selection.explanation.count < 2_000)
        }
    }

    @Test("rendered challenges parse back to themselves", arguments: seeds)
    func renderedChallengesRoundTrip(seed: UInt64) throws {
        var generator = SeededRandom(seed: seed ^ 0xA11CE)
        let parser = AuthenticationChallengeParser(limits: limits)
        for _ in 0..<500 {
            let challenges = (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                ValidChallenges.make(using: &generator)
            }
            let value = challenges.map(\.headerValue).joined(separator: ", ")
            let parsed = try parser.parse(value)
            #expect(parsed == challenges, "value: \(value)")
        }
    }

    /// Returns a description of a broken property, or nil.
    private func check(_ value: String, parser: AuthenticationChallengeParser) -> String? {
        do {
            let challenges = try parser.parse(value)
            if challenges.isEmpty { return "success without a challenge" }
            if challenges.count > limits.maximumChallenges { return "\(challenges.count) challenges" }
            var total = 0
            for challenge in challenges {
                if challenge.parameters.count > limits.maximumParameters {
                    return "\(challenge.parameters.count) parameters"
                }
                total += challenge.scheme.utf8.count + (challenge.token68?.utf8.count ?? 0)
                total += challenge.parameters.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
                // Checking a Digest challenge must not trap either.
                if challenge.hasScheme("Digest") {
                    do {
                        _ = try DigestChallenge(challenge)
                    } catch {
                        if error.description.count > 300 {
                            return "a Digest error of \(error.description.count) characters"
                        }
                    }
                }
            }
            // Decoding never grows the text beyond the input (ISO-8859-1 fallback included).
            if total > value.utf8.count * 2 { return "output of \(total) bytes for \(value.utf8.count) of input" }
            return nil
        } catch {
            if error.description.count > 300 { return "an error of \(error.description.count) characters" }
            if error.description.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                return "a control character in the error message"
            }
            if let offset = error.offset, offset < 0 || offset > value.utf8.count {
                return "offset \(offset) out of range"
            }
            return nil
        }
    }
}

/// Generators of hostile header values.
enum HostileValues {
    static let seeds = [
        #"Basic realm="foo", charset="UTF-8""#,
        #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
        #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
        #"Digest realm="a", nonce="n", userhash=true, stale=TRUE, algorithm=MD5-sess"#,
        "Other abc==, Last",
    ]

    static let alphabet: [String] = [
        "\"", "\\", ",", "=", " ", "\t", "a", "Z", "9", "-", "/", "+", "~", "ä", "ø", "€", "\u{0}", "\r", "\n",
        "\u{7F}", "\u{1B}", "realm", "nonce", "Digest", "Basic", "algorithm=", "qop=", "\"auth\"", "==", "\u{FFFD}",
        "🦅",
    ]

    /// Extreme values, built once: many parameters (up to far beyond the limit), huge or deeply
    /// escaped quoted strings (terminated or not), thousands of challenges.
    static let extremes: [String] = {
        var values: [String] = []
        for count in [10, 33, 500, 10_000] {
            values.append("Digest " + (0..<count).map { "p\($0)=\"v\($0)\"" }.joined(separator: ","))
        }
        for length in [100, 16_000, 17_000, 200_000] {
            for filler in ["x", "\\\"", "\\"] {
                let body = String(repeating: filler, count: length / filler.count)
                values.append("Basic realm=\"" + body + "\"")
                values.append("Basic realm=\"" + body)
            }
        }
        values.append(Array(repeating: "A", count: 1_000).joined(separator: ", "))
        values.append(String(repeating: ",", count: 16_000) + "Basic")
        values.append("Basic " + String(repeating: "=", count: 16_000))
        return values
    }()

    static func make(using generator: inout SeededRandom) -> String {
        switch Int.random(in: 0..<8, using: &generator) {
        case 0:
            // Raw bytes, invalid UTF-8 included.
            let bytes = (0..<Int.random(in: 0...200, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            return String(decoding: bytes, as: UTF8.self)
        case 1, 2:
            // Grammar-heavy noise.
            return (0..<Int.random(in: 0...120, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }.joined()
        case 3, 4:
            return mutate(seeds.randomElement(using: &generator)!, using: &generator)
        case 5, 6:
            return extremes.randomElement(using: &generator)!
        default:
            // Many challenges and separators.
            let count = [1, 16, 17, 1_000].randomElement(using: &generator)!
            return (0..<count).map { _ in ["A", "B x=y", ",", "C abc=="].randomElement(using: &generator)! }
                .joined(separator: [",", ", ", " ,, "].randomElement(using: &generator)!)
        }
    }

    static func mutate(_ text: String, using generator: inout SeededRandom) -> String {
        var pieces = text.map { String($0) }
        for _ in 0..<Int.random(in: 1...6, using: &generator) where !pieces.isEmpty {
            let index = Int.random(in: 0..<pieces.count, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: pieces.remove(at: index)
            case 1: pieces.insert(alphabet.randomElement(using: &generator)!, at: index)
            case 2: pieces[index] = alphabet.randomElement(using: &generator)!
            default: pieces = Array(pieces.prefix(index))
            }
        }
        return pieces.joined()
    }
}

/// Generators of well-formed challenges, for the round-trip property.
enum ValidChallenges {
    static let tokenCharacters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~")
    static let token68Characters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/")
    static let textCharacters = Array("abc XYZ 019 ,=;:\"\\\t/äø€🦅'()<>@?{}[]")

    static func make(using generator: inout SeededRandom) -> AuthenticationChallenge {
        let scheme = token(using: &generator)
        switch Int.random(in: 0..<4, using: &generator) {
        case 0:
            return AuthenticationChallenge(scheme: scheme)
        case 1:
            let body = String(
                (0..<Int.random(in: 1...20, using: &generator)).map { _ in
                    token68Characters.randomElement(using: &generator)!
                })
            return AuthenticationChallenge(
                scheme: scheme, token68: body + String(repeating: "=", count: Int.random(in: 0...2, using: &generator)))
        default:
            var names: [String] = []
            while names.count < Int.random(in: 1...10, using: &generator) {
                let name = token(using: &generator)
                if !names.contains(where: { $0.lowercased() == name.lowercased() }) { names.append(name) }
            }
            let parameters = names.map { name -> AuthenticationChallenge.Parameter in
                if Bool.random(using: &generator) {
                    return .init(name: name, value: token(using: &generator), isQuoted: false)
                }
                let value = String(
                    (0..<Int.random(in: 0...30, using: &generator)).map { _ in
                        textCharacters.randomElement(using: &generator)!
                    })
                return .init(name: name, value: value, isQuoted: true)
            }
            return AuthenticationChallenge(scheme: scheme, parameters: parameters)
        }
    }

    static func token(using generator: inout SeededRandom) -> String {
        String(
            (0..<Int.random(in: 1...12, using: &generator)).map { _ in tokenCharacters.randomElement(using: &generator)!
            })
    }
}
