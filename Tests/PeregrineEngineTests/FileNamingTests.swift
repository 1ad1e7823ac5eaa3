import PeregrineCore
import PeregrineEngine
import Testing

/// Content-Disposition parsing (RFC 6266 / RFC 8187) and name sanitizing.
@Suite("File naming")
struct FileNamingTests {
    @Test(arguments: [
        ("attachment; filename=\"report.pdf\"", "report.pdf"),
        ("attachment; filename=report.pdf", "report.pdf"),
        ("inline; FILENAME=\"a b.txt\"", "a b.txt"),
        ("attachment; filename=\"quo\\\"ted.txt\"", "quo\"ted.txt"),
        ("attachment; filename*=UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"),
        ("attachment; filename*=utf-8'en'%C3%A9t%C3%A9.txt", "été.txt"),
        ("attachment; filename*=ISO-8859-1'de'M%FCller.txt", "Müller.txt"),
        ("attachment; filename=\"fallback.txt\"; filename*=UTF-8''%E2%82%AC.txt", "€.txt"),
        ("attachment; filename*=UTF-8''%E2%82%AC.txt; filename=\"fallback.txt\"", "€.txt"),
        ("attachment; filename*=KOI8-R''%C1.txt; filename=\"plain.txt\"", "plain.txt"),
        ("attachment; filename*=UTF-8''%FF%FE.txt; filename=\"plain.txt\"", "plain.txt"),
        ("attachment; filename=\"semi;colon.txt\"; size=3", "semi;colon.txt"),
        ("filename=lenient.bin", "lenient.bin"),
    ])
    func contentDispositionNames(_ header: String, _ name: String) throws {
        let disposition = try #require(ContentDisposition(headerValue: header))
        #expect(disposition.preferredFileName == name)
    }

    @Test func contentDispositionParts() throws {
        let disposition = try #require(
            ContentDisposition(headerValue: "Attachment; filename=\"a.txt\"; filename*=UTF-8'en-GB'b.txt"))
        #expect(disposition.type == "attachment")
        #expect(disposition.fileName == "a.txt")
        #expect(disposition.extendedFileName == "b.txt")
        #expect(disposition.language == "en-GB")
        #expect(ContentDisposition(headerValue: "  ") == nil)
        #expect(ContentDisposition(headerValue: "inline")?.preferredFileName == nil)
    }

    @Test(arguments: [
        ("../../etc/passwd", "passwd"),
        ("/abs", "abs"),
        ("/etc/", "etc"),
        ("..\\..\\windows\\system32\\evil.dll", "evil.dll"),
        ("a\u{0}b.txt", "ab.txt"),
        ("nul\u{0}", "nul"),
        ("tab\tand\nnewline.txt", "tabandnewline.txt"),
        (".bashrc", "bashrc"),
        ("...hidden", "hidden"),
        ("  spaced.txt  ", "spaced.txt"),
        ("txt\u{202E}exe.doc", "txtexe.doc"),
        ("del\u{7F}\u{85}.bin", "del.bin"),
        ("ok.tar.gz", "ok.tar.gz"),
    ])
    func hostileNamesBecomeSafe(_ name: String, _ safe: String) {
        #expect(FileNameSanitizer.sanitize(name) == safe)
    }

    @Test(arguments: ["", ".", "..", "/", "../..", "\u{0}", " . ", "\u{202E}"])
    func nothingUsableFallsBack(_ name: String) {
        #expect(FileNameSanitizer.clean(name) == nil)
        #expect(FileNameSanitizer.sanitize(name, fallback: "example.org") == "example.org")
        #expect(FileNameSanitizer.sanitize(name, fallback: "..") == "download")
    }

    /// A name the user chose keeps its leading dots, unless it would pass for a temporary file.
    @Test(arguments: [
        (".hidden", ".hidden"), ("..two", "..two"), ("plain.bin", "plain.bin"),
        (".peregrine-0123.part", "peregrine-0123.part"),
        ("a/.b", "b"), (".\u{301}x", "x"), (". spaced", ".spaced"),
    ])
    func aChosenNameKeepsItsLeadingDot(_ name: String, _ expected: String) {
        #expect(FileNameSanitizer.cleanChosen(name) == expected)
    }

    @Test(arguments: [".", "..", "...", "./", "\u{0}"])
    func aChosenNameOfOnlyDotsIsNone(_ name: String) {
        #expect(FileNameSanitizer.cleanChosen(name) == nil)
    }

    @Test func longNamesAreCutAtACharacterBoundaryKeepingTheExtension() {
        let long = String(repeating: "a", count: 300) + ".pdf"
        let cut = FileNameSanitizer.sanitize(long)
        #expect(cut.utf8.count == 255)
        #expect(cut.hasSuffix(".pdf"))
        // Two-byte characters: the cut never splits one.
        let accented = String(repeating: "é", count: 200) + ".txt"
        let cutAccented = FileNameSanitizer.sanitize(accented)
        #expect(cutAccented.utf8.count <= 255)
        #expect(cutAccented.hasSuffix(".txt"))
        #expect(cutAccented.dropLast(4).allSatisfy { $0 == "é" })
        // A four-byte emoji run.
        let emoji = String(repeating: "😀", count: 100)
        let cutEmoji = FileNameSanitizer.sanitize(emoji)
        #expect(cutEmoji.utf8.count == 252)
        #expect(cutEmoji.allSatisfy { $0 == "😀" })
        // An absurd extension is not kept whole.
        let hugeExtension = "a." + String(repeating: "x", count: 300)
        #expect(FileNameSanitizer.sanitize(hugeExtension).utf8.count == 255)
    }

    /// Names the fuzzer found (Fuzz/Corpus/FuzzContentDisposition/fuzz-*): a separator or a dot
    /// followed by a combining mark is one Character that is neither, and a first Character
    /// longer than the byte budget used to leave nothing, or only the extension.
    @Test(
        arguments: [
            ("a/\u{301}b", "b"),
            ("a\\\u{301}b", "b"),
            (".\u{301}bashrc", "bashrc"),
            ("..\u{301}\u{302}/..\u{301}", nil),
        ] as [(String, String?)])
    func separatorsAndDotsHiddenInCharactersStillCount(_ name: String, _ safe: String?) {
        #expect(FileNameSanitizer.clean(name) == safe)
    }

    @Test func aGiantFirstCharacterIsCutBetweenItsScalars() {
        let giant = "a" + String(repeating: "\u{301}", count: 200)
        for name in [giant, giant + ".txt"] {
            let safe = FileNameSanitizer.sanitize(name)
            #expect(!safe.isEmpty)
            #expect(safe.first?.unicodeScalars.first == "a")
            #expect(safe.utf8.count <= FileNameSanitizer.maximumByteCount)
        }
        #expect(FileNameSanitizer.sanitize(giant + ".txt").hasSuffix(".txt"))
    }

    @Test func suggestedNamePrefersDispositionThenPathThenHost() throws {
        let url = try DownloadURL("http://Example.org/files/My%20Report.pdf?x=1")
        #expect(
            SuggestedFileName.make(
                contentDisposition: "attachment; filename=\"server.pdf\"", effectiveURL: nil, url: url) == "server.pdf")
        #expect(SuggestedFileName.make(contentDisposition: nil, effectiveURL: nil, url: url) == "My Report.pdf")
        #expect(
            SuggestedFileName.make(contentDisposition: nil, effectiveURL: "http://cdn.example/real.zip", url: url)
                == "real.zip")
        #expect(
            SuggestedFileName.make(
                contentDisposition: "attachment; filename=\"..\"", effectiveURL: nil, url: url) == "My Report.pdf")
        #expect(SuggestedFileName.make(for: try DownloadURL("https://example.org/")) == "example.org")
        #expect(SuggestedFileName.make(for: try DownloadURL("https://example.org/a%2F..%2Fb.txt")) == "b.txt")
    }

    @Test(arguments: [
        (UInt64(0), ".peregrine-0000000000000000.part"), (0xABC_DEF, ".peregrine-0000000000abcdef.part"),
        (UInt64.max, ".peregrine-ffffffffffffffff.part"), (0x0123_4567_89AB_CDEF, ".peregrine-0123456789abcdef.part"),
    ])
    func temporaryNamesAreSixteenLowerCaseHexDigits(_ value: UInt64, _ name: String) {
        #expect(DownloadDirectory.temporaryName(value) == name)
        let random = DownloadDirectory.temporaryName()
        #expect(random.utf8.count == name.utf8.count)
        #expect(random.hasPrefix(".peregrine-") && random.hasSuffix(".part"))
    }

    @Test func locationsAreTheDirectoryAndSafeRelativePaths() throws {
        let directory = try DownloadDirectory(path: "/tmp")
        #expect(directory.location(of: "a.bin") == "/tmp/a.bin")
        #expect(directory.location(of: ".peregrine-0000000000000000.part") == "/tmp/.peregrine-0000000000000000.part")
        #expect(directory.location(of: "bücher ü.pdf") == "/tmp/bücher ü.pdf")
        // A file in a folder (a task's subdirectory).
        #expect(directory.location(of: "a/b") == "/tmp/a/b")
        #expect(directory.location(of: "music/2026/...") == "/tmp/music/2026/...")
        for unsafe in [
            "", ".", "..", "/etc", "a\u{0}b", "a/", "a//b", "a/./b", "a/../b", "../a", "a/..",
            String(repeating: "x", count: 256) + "/b", String(repeating: "abcdefg/", count: 400) + "z",
        ] {
            #expect(directory.location(of: unsafe) == nil, "\(unsafe.prefix(40))")
        }
        #expect(directory.location(of: "...") == "/tmp/...")
    }

    @Test func subdirectoriesAreNormalizedOrRefused() {
        #expect(DownloadDirectory.normalizedSubdirectory("a//b/") == "a/b")
        #expect(DownloadDirectory.normalizedSubdirectory("") == "")
        #expect(DownloadDirectory.normalizedSubdirectory("música ✓") == "música ✓")
        for refused in ["/abs", "a/../b", "..", ".", "a/./b", "a\u{0}", String(repeating: "y", count: 256)] {
            #expect(DownloadDirectory.normalizedSubdirectory(refused) == nil, "\(refused.prefix(40))")
        }
    }
}

/// Decimal byte counts and SDE's detail strings.
@Suite("ByteCountText")
struct ByteCountTextTests {
    @Test(arguments: [
        (Int64(0), "0 bytes"), (1, "1 byte"), (999, "999 bytes"), (1000, "1 KB"), (1499, "1 KB"), (1500, "2 KB"),
        (999_499, "999 KB"), (999_500, "1 MB"), (41_600_000, "41.6 MB"), (402_500_000, "402.5 MB"),
        (2_000_000, "2 MB"), (1_234_567_890, "1.23 GB"), (1_500_000_000, "1.5 GB"), (-1, "Unknown"),
    ])
    func counts(_ bytes: Int64, _ text: String) {
        #expect(ByteCountText.string(bytes) == text)
    }

    @Test func details() {
        #expect(
            ByteCountText.detail(receivedBytes: 41_600_000, expectedBytes: 402_500_000, isFinished: false)
                == "41.6 MB/402.5 MB")
        #expect(
            ByteCountText.detail(receivedBytes: 402_500_000, expectedBytes: 402_500_000, isFinished: true) == "402.5 MB"
        )
        #expect(ByteCountText.detail(receivedBytes: 5_000, expectedBytes: nil, isFinished: false) == "5 KB")
    }
}
