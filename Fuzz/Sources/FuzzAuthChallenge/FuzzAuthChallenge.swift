// Fuzzes `WWW-Authenticate` parsing (`AuthenticationChallengeParser`), Digest challenge
// interpretation (`DigestChallenge`) and the `Authorization` values built from them.
//
// Input: one field value per line. Checked beyond "no crash":
// - a parsed challenge's `headerValue` parses back to the same scheme, token68 and parameters;
// - a Digest `Authorization` value built for a parsed challenge parses as one challenge whose
//   realm, nonce, uri and opaque are the challenge's.

import FuzzSupport
import PeregrineAuth

private let parser = AuthenticationChallengeParser()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAuthChallenge(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    plantedControlBug(bytes)

    let text = String(decoding: bytes, as: UTF8.self)
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let result = parser.parse(fields: fields)
    fuzzRequire(
        result.challenges.count <= parser.limits.maximumChallenges,
        "\(result.challenges.count) challenges, beyond the limit")
    for challenge in result.challenges {
        fuzzRequire(
            challenge.parameters.count <= parser.limits.maximumParameters,
            "\(challenge.parameters.count) parameters, beyond the limit")
        checkRoundTrip(challenge)
        _ = challenge.description
        _ = challenge.realm
        if challenge.hasScheme("Digest"), let digest = try? DigestChallenge(challenge) {
            checkAuthorization(digest, user: fields.last ?? "")
        }
    }
    if let first = fields.first {
        _ = try? parser.parseParameters(first)
    }
    return 0
}

/// `headerValue` renders a challenge that parses back to itself.
private func checkRoundTrip(_ challenge: AuthenticationChallenge) {
    let rendered = challenge.headerValue
    let reparsed: [AuthenticationChallenge]
    do {
        reparsed = try parser.parse(rendered)
    } catch {
        fuzzFailure("headerValue does not parse back (\(error)): \(debugText(rendered))")
    }
    fuzzRequire(reparsed.count == 1, "headerValue parses back to \(reparsed.count) challenges: \(debugText(rendered))")
    let again = reparsed[0]
    fuzzRequire(
        again.scheme == challenge.scheme && again.token68 == challenge.token68
            && again.parameters.map(\.name) == challenge.parameters.map(\.name)
            && again.parameters.map(\.value) == challenge.parameters.map(\.value),
        "headerValue does not round-trip: \(debugText(rendered)) parses to \(debugText(again.headerValue))")
}

/// The `Authorization` value for a Digest challenge carries its values back intact.
private func checkAuthorization(_ digest: DigestChallenge, user: String) {
    _ = digest.preferredQualityOfProtection
    let authorization = DigestAuthorization(
        challenge: digest, credential: Credential(user: user, password: "secret"), method: "GET",
        uri: "/files/a b\"c.iso", clientNonce: "0a4f113b")
    guard let value = try? authorization.headerValue() else { return }
    let reparsed: [AuthenticationChallenge]
    do {
        reparsed = try AuthenticationChallengeParser(limits: .init(maximumFieldLength: 1 << 20)).parse(value)
    } catch {
        fuzzFailure("the Authorization value does not parse (\(error)): \(debugText(value))")
    }
    fuzzRequire(reparsed.count == 1, "the Authorization value parses to \(reparsed.count) items: \(debugText(value))")
    let answer = reparsed[0]
    fuzzRequire(
        answer[parameter: "realm"] == digest.realm && answer[parameter: "nonce"] == digest.nonce
            && answer[parameter: "uri"] == "/files/a b\"c.iso" && answer[parameter: "opaque"] == digest.opaque,
        "the Authorization value does not carry the challenge's values: \(debugText(value))")
}
