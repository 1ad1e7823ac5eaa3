import PeregrineAuth
import Testing

@Suite("Choosing among challenges")
struct ChallengeSelectionTests {
    static let fields = [
        #"Basic realm="files""#,
        #"Digest realm="files", nonce="a", algorithm=MD5, qop="auth""#,
        #"Digest realm="files", nonce="b", algorithm=SHA-512-256, qop="auth""#,
        #"Negotiate"#,
        #"Digest realm="files", nonce="c", algorithm=SHA-256-sess, qop="auth""#,
    ]

    @Test func strongestDigestComesFirstAndBasicLast() {
        let selection = ChallengeSelection(fields: Self.fields)
        #expect(selection.candidates.map(\.digest?.algorithm) == [.sha512_256, .sha256Session, .md5, nil])
        #expect(selection.candidates.last?.scheme == .basic)
        #expect(selection.skipped.contains { $0.contains("Negotiate") })
    }

    @Test func restrictionToBasicLeavesOnlyBasic() {
        let selection = ChallengeSelection(fields: Self.fields, allowed: [.basic])
        #expect(selection.candidates.map(\.scheme) == [.basic])
    }

    @Test func restrictionToDigestDropsBasic() {
        let selection = ChallengeSelection(fields: Self.fields, allowed: [.digest])
        #expect(selection.candidates.allSatisfy { $0.scheme == .digest })
        #expect(selection.candidates.count == 3)
    }

    @Test func unusableChallengesAreExplained() {
        let selection = ChallengeSelection(fields: [
            #"Digest realm="r", algorithm=SHA-3"#, #"Basic charset="UTF-8""#, #"Digest realm="x"#,
        ])
        #expect(selection.candidates.isEmpty)
        #expect(selection.explanation.contains("missing nonce") || selection.explanation.contains("unsupported"))
        #expect(selection.explanation.contains("missing realm"))
        #expect(selection.explanation.contains("unterminated"))
    }

    @Test func schemeNamesParseLikeTheCommandLine() {
        #expect(AuthenticationScheme.schemes(named: "basic") == [.basic])
        #expect(AuthenticationScheme.schemes(named: "Digest") == [.digest])
        #expect(AuthenticationScheme.schemes(named: "any") == [.basic, .digest])
        #expect(AuthenticationScheme.schemes(named: "ntlm") == nil)
    }
}
