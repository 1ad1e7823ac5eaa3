import PeregrineCore
import PeregrineTransport
import Testing

/// `RedirectPolicy.resolve(location:against:)` against the examples of RFC 3986 §5.4.
@Suite("RedirectPolicy.resolve(location:against:)")
struct RedirectLocationResolutionTests {
    static let base = "http://a/b/c/d;p?q"

    /// RFC 3986 §5.4.1 (normal) and §5.4.2 (abnormal) examples, as reference → target.
    static let examples: [(String, String)] = [
        ("g", "http://a/b/c/g"),
        ("./g", "http://a/b/c/g"),
        ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"),
        ("//g", "http://g"),
        ("?y", "http://a/b/c/d;p?y"),
        ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"),
        ("g#s", "http://a/b/c/g#s"),
        ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"),
        ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"),
        ("..", "http://a/b/"),
        ("../", "http://a/b/"),
        ("../g", "http://a/b/g"),
        ("../..", "http://a/"),
        ("../../", "http://a/"),
        ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"),
        ("../../../../g", "http://a/g"),
        ("/./g", "http://a/g"),
        ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."),
        (".g", "http://a/b/c/.g"),
        ("g..", "http://a/b/c/g.."),
        ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"),
        ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"),
        ("g/../h", "http://a/b/c/h"),
        ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"),
    ]

    @Test(arguments: examples)
    func relativeLocationResolvesAsRFC3986Says(_ reference: String, _ target: String) throws {
        let base = try DownloadURL(Self.base)
        #expect(RedirectPolicy.resolve(location: reference, against: base) == target)
    }

    @Test func absoluteLocationIsKept() throws {
        let base = try DownloadURL(Self.base)
        #expect(
            RedirectPolicy.resolve(location: "https://other.example:8443/x?y#z", against: base)
                == "https://other.example:8443/x?y#z")
    }

    @Test func surroundingWhiteSpaceOfTheLocationIsIgnored() throws {
        let base = try DownloadURL("https://a.example/dir/file")
        #expect(RedirectPolicy.resolve(location: " \t/other ", against: base) == "https://a.example/other")
    }

    @Test func schemeRelativeLocationKeepsTheSchemeOfTheBase() throws {
        let base = try DownloadURL("https://a.example/dir/file")
        #expect(RedirectPolicy.resolve(location: "//cdn.example/f", against: base) == "https://cdn.example/f")
    }

    @Test func resolvedRelativeLocationIsFollowed() throws {
        let base = try DownloadURL("https://a.example:8443/dir/file")
        let target = RedirectPolicy.resolve(location: "../moved/file?v=2", against: base)
        let decision = RedirectPolicy().decide(from: base, to: target, status: 301, hopsSoFar: 0)
        #expect(decision == .follow(try DownloadURL("https://a.example:8443/moved/file?v=2")))
    }
}
