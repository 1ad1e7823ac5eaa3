import PeregrineCore
import PeregrineTransport
import Testing

@Suite("TransportError.failureReason")
struct TransportErrorTests {
    /// A transport error and the failure code the engine must see.
    struct Mapping: Sendable, CustomTestStringConvertible {
        var error: TransportError
        var expected: FailureReason.Code
        var testDescription: String {
            "\(error.code)\(error.httpStatus.map { " \($0)" } ?? "")\(error.errno.map { " errno \($0)" } ?? "") → \(expected)"
        }
    }

    static let mappings: [Mapping] = [
        Mapping(error: TransportError(.dns, "x"), expected: .dns),
        Mapping(error: TransportError(.connect, "x"), expected: .network),
        Mapping(error: TransportError(.network, "x"), expected: .network),
        Mapping(error: TransportError(.tls, "x"), expected: .tls),
        Mapping(error: TransportError(.timeout, "x"), expected: .timeout),
        Mapping(error: TransportError(.tooSlow, "x"), expected: .tooSlow),
        Mapping(error: TransportError(.httpStatus, "x", httpStatus: 401), expected: .authentication),
        Mapping(error: TransportError(.httpStatus, "x", httpStatus: 407), expected: .authentication),
        Mapping(error: TransportError(.httpStatus, "x", httpStatus: 403), expected: .httpStatus),
        Mapping(error: TransportError(.httpStatus, "x", httpStatus: 404), expected: .httpStatus),
        Mapping(error: TransportError(.httpStatus, "x", httpStatus: 500), expected: .httpStatus),
        Mapping(error: TransportError(.rangeNotHonoured, "x", httpStatus: 200), expected: .cannotResume),
        Mapping(error: TransportError(.writeFailed, "x", errno: 28), expected: .diskFull),
        Mapping(error: TransportError(.writeFailed, "x", errno: 5), expected: .fileSystem),
        Mapping(error: TransportError(.writeFailed, "x", errno: 13), expected: .fileSystem),
        Mapping(error: TransportError(.writeFailed, "x"), expected: .fileSystem),
        Mapping(error: TransportError(.lengthMismatch, "x"), expected: .protocolViolation),
        Mapping(error: TransportError(.connectionClosed, "x"), expected: .network),
        Mapping(error: TransportError(.protocolViolation, "x"), expected: .protocolViolation),
        Mapping(error: TransportError(.invalidRedirect, "x"), expected: .redirectRefused),
        Mapping(error: TransportError(.tooManyRedirects, "x"), expected: .redirectRefused),
        Mapping(error: TransportError(.insecureRedirect, "x"), expected: .redirectRefused),
        Mapping(error: TransportError(.cancelled, "x"), expected: .unknown),
        Mapping(error: TransportError(.invalidRequest, "x"), expected: .unknown),
    ]

    @Test(arguments: mappings)
    func transportErrorMapsToTheEnginesFailureCode(_ mapping: Mapping) {
        #expect(mapping.error.failureReason.code == mapping.expected)
    }

    @Test func failureReasonKeepsTheStatusAndTheDescription() {
        let error = TransportError(.httpStatus, "server said 401", httpStatus: 401, url: "https://a.example/")
        let reason = error.failureReason
        #expect(reason.httpStatus == 401)
        #expect(reason.message == "HTTP error status: server said 401")
        #expect(reason.message == error.description)
    }

    @Test func diskFullReasonCarriesNoStatus() {
        let reason = TransportError(.writeFailed, "write failed", errno: 28).failureReason
        #expect(reason.code == .diskFull)
        #expect(reason.httpStatus == nil)
    }

    @Test func messageIsCutTo500Characters() {
        let error = TransportError(.network, String(repeating: "n", count: 800))
        #expect(error.message == String(repeating: "n", count: 500) + "…")
        #expect(TransportError(.network, String(repeating: "n", count: 500)).message.count == 500)
    }

    @Test func failureReasonMessageStaysBounded() {
        let reason = TransportError(.network, String(repeating: "n", count: 800)).failureReason
        #expect(reason.message.count <= 501)
    }

    @Test func initKeepsEveryField() {
        let error = TransportError(.writeFailed, "m", httpStatus: 206, url: "https://a.example/", errno: 28)
        #expect(error.code == .writeFailed)
        #expect(error.message == "m")
        #expect(error.httpStatus == 206)
        #expect(error.url == "https://a.example/")
        #expect(error.errno == 28)
        #expect(error.description == "write failed: m")
    }
}
