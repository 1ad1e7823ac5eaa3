import PeregrineAuth
import Testing

@Suite("Challenge parser (RFC 9110 §11)")
struct ChallengeParserTests {
    let parser = AuthenticationChallengeParser()

    @Test func basicChallengeWithRealmAndCharset() throws {
        let challenges = try parser.parse(#"Basic realm="foo", charset="UTF-8""#)
        #expect(
            challenges == [
                AuthenticationChallenge(
                    scheme: "Basic",
                    parameters: [.init(name: "realm", value: "foo"), .init(name: "charset", value: "UTF-8")])
            ])
        #expect(challenges[0].realm == "foo")
    }

    @Test func severalChallengesInOneValueAreSeparated() throws {
        // RFC 9110 §11.6.1's example, a challenge with a token68 included.
        let value =
            #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple", Other abc==, Last"#
        let challenges = try parser.parse(value)
        #expect(challenges.map(\.scheme) == ["Newauth", "Basic", "Other", "Last"])
        #expect(challenges[0][parameter: "type"] == "1")
        #expect(challenges[0][parameter: "title"] == #"Login to "apps""#)
        #expect(challenges[1].realm == "simple")
        #expect(challenges[2].token68 == "abc==")
        #expect(challenges[3].parameters.isEmpty && challenges[3].token68 == nil)
    }

    @Test func rfc7616ExampleChallengesParse() throws {
        let fields = [
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
        ]
        let result = parser.parse(fields: fields)
        #expect(result.errors.isEmpty)
        #expect(result.challenges.count == 2)
        #expect(result.challenges[0][parameter: "ALGORITHM"] == "SHA-256")
        #expect(result.challenges[1][parameter: "qop"] == "auth, auth-int")
        #expect(result.challenges[1][parameter: "algorithm"] == "MD5")
    }

    @Test func namesCompareIgnoringCaseAndValuesKeepTheirCase() throws {
        let challenges = try parser.parse(#"dIgEsT ReAlM="MixedCase", NONCE=AbC"#)
        #expect(challenges[0].hasScheme("Digest"))
        #expect(challenges[0].realm == "MixedCase")
        #expect(challenges[0][parameter: "nonce"] == "AbC")
    }

    @Test func escapesInQuotedStringsAreUnescaped() throws {
        let challenges = try parser.parse(#"Basic realm="a \"quoted\" back\\slash \x""#)
        #expect(challenges[0].realm == #"a "quoted" back\slash x"#)
    }

    @Test func whiteSpaceAroundEqualsAndEmptyListElementsAreAccepted() throws {
        let challenges = try parser.parse(#" , Basic realm = "a" ,, , Digest realm= "b" ,nonce ="n" , "#)
        #expect(challenges.map(\.scheme) == ["Basic", "Digest"])
        #expect(challenges[1][parameter: "nonce"] == "n")
    }

    @Test func nonASCIIInQuotedStringsIsKept() throws {
        let challenges = try parser.parse("Basic realm=\"Bücher für Jäsøn\"")
        #expect(challenges[0].realm == "Bücher für Jäsøn")
    }

    @Test func headerValueRoundTrips() throws {
        let challenge = AuthenticationChallenge(
            scheme: "Digest",
            parameters: [
                .init(name: "realm", value: #"say "hi" \ there"#),
                .init(name: "algorithm", value: "MD5", isQuoted: false),
                .init(name: "empty", value: ""),
            ])
        #expect(try parser.parse(challenge.headerValue) == [challenge])
    }

    @Test func authenticationInfoParametersParse() throws {
        let parameters = try parser.parseParameters(#"nextnonce="abc", qop=auth, rspauth="x""#)
        #expect(parameters.map(\.name) == ["nextnonce", "qop", "rspauth"])
        #expect(parameters[0].value == "abc")
    }

    // MARK: Hostile input

    @Test func unterminatedQuotedStringIsATypedError() {
        #expect(throws: ChallengeError.self) { try parser.parse(#"Basic realm="never closed"#) }
        #expect(errorCode { try parser.parse(#"Basic realm="never closed"#) } == .unterminatedQuotedString)
        #expect(errorCode { try parser.parse(#"Basic realm="ends in \"#) } == .unterminatedQuotedString)
    }

    @Test func tenThousandParametersAreRefusedAtTheLimit() {
        let value = "Digest " + (0..<10_000).map { "p\($0)=v" }.joined(separator: ", ")
        // With the default limits the value is already too long (about 90 KB).
        #expect(errorCode { try parser.parse(value) } == .tooLong)
        // With room for the bytes, the parameter limit stops the parse at parameter 33.
        let roomy = AuthenticationChallengeParser(limits: .init(maximumFieldLength: 1 << 20))
        let error = capture { try roomy.parse(value) }
        #expect(error?.code == .tooManyParameters)
        #expect(error.map { $0.description.count < 300 } == true)
    }

    @Test func hugeValueIsRefusedBeforeParsing() {
        let value = "Basic realm=\"" + String(repeating: "x", count: 1 << 20) + "\""
        let error = capture { try parser.parse(value) }
        #expect(error?.code == .tooLong)
    }

    @Test func tooManyChallengesAreRefused() {
        let value = (0..<100).map { "S\($0)" }.joined(separator: ", ")
        #expect(errorCode { try parser.parse(value) } == .tooManyChallenges)
    }

    @Test func duplicateParameterIsRefused() {
        #expect(errorCode { try parser.parse(#"Digest realm="a", REALM="b""#) } == .duplicateParameter)
    }

    @Test func parameterWithoutValueIsRefused() {
        #expect(errorCode { try parser.parse(#"Digest realm="a", nonce="#) } == .missingParameterValue)
        #expect(errorCode { try parser.parse(#"Digest realm="a", nonce= , qop=auth"#) } == .missingParameterValue)
    }

    @Test func controlCharactersAndNonASCIITokensAreRefused() {
        #expect(errorCode { try parser.parse("Basic realm=\"a\u{0}b\"") } == .invalidCharacter)
        #expect(errorCode { try parser.parse("Basic realm=\"a\u{7F}\"") } == .invalidCharacter)
        #expect(errorCode { try parser.parse("Bäsic realm=\"a\"") } == .invalidCharacter)
        #expect(errorCode { try parser.parse("Basic realm=a\"b\"") } == .invalidCharacter)
        #expect(errorCode { try parser.parse("Basic\"realm\"") } == .invalidCharacter)
    }

    @Test func emptyValueIsRefused() {
        #expect(errorCode { try parser.parse("") } == .empty)
        #expect(errorCode { try parser.parse(" ,, ") } == .empty)
    }

    @Test func brokenFieldDoesNotHideGoodOnes() {
        let result = parser.parse(fields: [#"Digest realm="x"#, #"Basic realm="files""#])
        #expect(result.challenges.map(\.scheme) == ["Basic"])
        #expect(result.errors.map(\.code) == [.unterminatedQuotedString])
    }

    @Test func fieldsBeyondTheLimitAreReportedNotParsed() {
        let parser = AuthenticationChallengeParser(limits: .init(maximumFields: 2))
        let result = parser.parse(fields: Array(repeating: #"Basic realm="a""#, count: 5))
        #expect(result.challenges.count == 2)
        #expect(result.errors.map(\.code) == [.tooManyFields])
    }

    @Test func errorMessagesEscapeHostileText() {
        let error = capture { try parser.parse("Basic\u{1B}[31m realm=\"x\"") }
        #expect(error?.code == .invalidCharacter)
        #expect(error.map { !$0.description.contains("\u{1B}") } == true)
    }

    private func capture(_ body: () throws -> [AuthenticationChallenge]) -> ChallengeError? {
        do {
            _ = try body()
            return nil
        } catch let error as ChallengeError {
            return error
        } catch {
            Issue.record("an untyped error: \(error)")
            return nil
        }
    }

    private func errorCode(_ body: () throws -> [AuthenticationChallenge]) -> ChallengeError.Code? {
        capture(body)?.code
    }
}
