import PeregrineCore
import Testing

@Suite("ResumeValidator(entityTag:lastModified:)")
struct ResumeValidatorTests {
    static let date = "Wed, 21 Oct 2015 07:28:00 GMT"

    @Test func strongEntityTagIsPreferredOverTheDate() {
        let validator = ResumeValidator(entityTag: "\"abc\"", lastModified: Self.date)
        #expect(validator == .entityTag("\"abc\""))
        #expect(validator?.headerValue == "\"abc\"")
    }

    @Test func strongEntityTagAloneIsUsed() {
        #expect(ResumeValidator(entityTag: "\"v1\"", lastModified: nil) == .entityTag("\"v1\""))
    }

    @Test func weakEntityTagFallsBackToLastModified() {
        let validator = ResumeValidator(entityTag: "W/\"x\"", lastModified: Self.date)
        #expect(validator == .lastModified(Self.date))
        #expect(validator?.headerValue == Self.date)
    }

    @Test func weakEntityTagWithoutADateGivesNoValidator() {
        #expect(ResumeValidator(entityTag: "W/\"x\"", lastModified: nil) == nil)
        #expect(ResumeValidator(entityTag: "W/\"x\"", lastModified: "") == nil)
    }

    @Test func lastModifiedAloneIsUsed() {
        #expect(ResumeValidator(entityTag: nil, lastModified: Self.date) == .lastModified(Self.date))
    }

    @Test func neitherValidatorGivesNil() {
        #expect(ResumeValidator(entityTag: nil, lastModified: nil) == nil)
        #expect(ResumeValidator(entityTag: "", lastModified: "") == nil)
        #expect(ResumeValidator(entityTag: "  ", lastModified: "\t") == nil)
    }

    @Test func blankEntityTagFallsBackToLastModified() {
        #expect(ResumeValidator(entityTag: " \t ", lastModified: Self.date) == .lastModified(Self.date))
    }

    @Test func surroundingWhiteSpaceIsTrimmed() {
        #expect(ResumeValidator(entityTag: " \t\"abc\"  ", lastModified: nil) == .entityTag("\"abc\""))
        #expect(ResumeValidator(entityTag: nil, lastModified: "  \(Self.date)\t") == .lastModified(Self.date))
    }

    @Test func headerValueIsTheValidatorVerbatim() {
        #expect(ResumeValidator.entityTag("\"a b\"").headerValue == "\"a b\"")
        #expect(ResumeValidator.lastModified(Self.date).headerValue == Self.date)
    }
}
