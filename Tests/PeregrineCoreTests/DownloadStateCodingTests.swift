import Foundation
import PeregrineCore
import Testing

@Suite("DownloadState Codable")
struct DownloadStateCodingTests {
    static let states: [DownloadState] = [
        .notInList,
        .pending,
        .downloading,
        .paused,
        .stopped,
        .finished,
        .failed(FailureReason(.diskFull, message: "write /tmp/x failed: No space left on device")),
        .failed(FailureReason(.httpStatus, httpStatus: 404, message: "HTTP error status: 404")),
        .failed(FailureReason(.authentication, httpStatus: 401, message: "")),
        .failed(FailureReason(FailureReason.Code(rawValue: "aCodeFromAFutureVersion"), message: "ünïcödé ✓")),
    ]

    @Test(arguments: states)
    func downloadStateSurvivesAJSONRoundTrip(_ state: DownloadState) throws {
        let data = try JSONEncoder().encode(state)
        let decoded = try JSONDecoder().decode(DownloadState.self, from: data)
        #expect(decoded == state)
    }

    @Test(arguments: states)
    func downloadStateSurvivesAPropertyListRoundTrip(_ state: DownloadState) throws {
        let data = try PropertyListEncoder().encode([state])
        let decoded = try PropertyListDecoder().decode([DownloadState].self, from: data)
        #expect(decoded == [state])
    }

    @Test func failureReasonKeepsEveryFieldThroughJSON() throws {
        let reason = FailureReason(.httpStatus, httpStatus: 503, message: "busy")
        let data = try JSONEncoder().encode(DownloadState.failed(reason))
        let decoded = try JSONDecoder().decode(DownloadState.self, from: data)
        guard case .failed(let back) = decoded else {
            Issue.record("decoded \(decoded) instead of a failure")
            return
        }
        #expect(back.code == .httpStatus)
        #expect(back.httpStatus == 503)
        #expect(back.message == "busy")
    }

    @Test func distinctStatesEncodeDifferently() throws {
        let encoded = try Self.states.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        #expect(Set(encoded).count == Self.states.count)
    }

    @Test func resumeRecordSurvivesAJSONRoundTrip() throws {
        let records = [
            ResumeRecord(offset: 12345, validator: .entityTag("\"abc\""), expectedLength: 1 << 33),
            ResumeRecord(offset: 0, validator: .lastModified("Wed, 21 Oct 2015 07:28:00 GMT"), expectedLength: nil),
            ResumeRecord(offset: 7, validator: nil, expectedLength: 8),
        ]
        let data = try JSONEncoder().encode(records)
        #expect(try JSONDecoder().decode([ResumeRecord].self, from: data) == records)
    }
}
