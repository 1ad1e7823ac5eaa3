import PeregrineCore
import Testing

@Suite("FailureReason")
struct FailureReasonTests {
    @Test func messageUpTo500CharactersIsKeptWhole() {
        let message = String(repeating: "x", count: 500)
        #expect(FailureReason(.network, message: message).message == message)
        #expect(FailureReason(.network, message: "short").message == "short")
    }

    @Test func messageOver500CharactersIsCutWithAnEllipsis() {
        let message = String(repeating: "a", count: 499) + "bcdefgh"
        let reason = FailureReason(.network, message: message)
        #expect(reason.message == String(repeating: "a", count: 499) + "b…")
        #expect(reason.message.count == 501)
    }

    @Test func messageBoundCountsCharactersNotBytes() {
        // "é" as e + combining acute: one Character, three UTF-8 bytes.
        let message = String(repeating: "e\u{301}", count: 600)
        let reason = FailureReason(.fileSystem, message: message)
        #expect(reason.message.count == 501)
        #expect(reason.message == String(repeating: "e\u{301}", count: 500) + "…")
    }

    @Test func descriptionFallsBackToTheCodeForAnEmptyMessage() {
        #expect(FailureReason(.diskFull, message: "").description == "diskFull")
        #expect(FailureReason(.diskFull, message: "no space left").description == "no space left")
    }

    @Test func initKeepsCodeAndStatus() {
        let reason = FailureReason(.authentication, httpStatus: 401, message: "denied")
        #expect(reason.code == .authentication)
        #expect(reason.httpStatus == 401)
        #expect(FailureReason(.dns, message: "").httpStatus == nil)
    }

    @Test func codesHaveDistinctStableNames() {
        let codes: [FailureReason.Code] = [
            .httpStatus, .network, .dns, .tls, .timeout, .tooSlow, .diskFull, .fileSystem, .verification,
            .cannotResume, .authentication, .protocolViolation, .unknown,
        ]
        #expect(Set(codes.map(\.rawValue)).count == codes.count)
        #expect(FailureReason.Code.diskFull.rawValue == "diskFull")
        #expect(FailureReason.Code(rawValue: "diskFull") == .diskFull)
        #expect(FailureReason.Code.cannotResume.description == "cannotResume")
    }
}
