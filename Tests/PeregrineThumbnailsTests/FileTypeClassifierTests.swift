import Testing

@testable import PeregrineThumbnails

/// The tables exactly as SEED-BEHAVIOUR.md lists them, in order.
private let specTables: [(FileKind, String)] = [
    (.image, "jpg jpeg tiff tif gif bmp png mng apng svg psd"),
    (.video, "3gp m4p ogg rm webm"),
    (
        .audio,
        "aa aac aax act aiff amr ape au awb dct dss dvf flac gsm iklax ivs m4a m4b mmf mp3 mpc msv oga mogg opus ra raw sln tta vox wav wma wv"
    ),
    (
        .video,
        "mkv flv vob ogv drc gifv avi mov qt wmv yuv rmvb asf amv mp4 m4v mpg mp2 mpeg mpe mpv m2v svi 3g2 mxf roq nsv f4v f4p f4a f4b"
    ),
    (
        .document,
        "pdf txt text srt ass rtf pages key numbers doc docx ppt pptx xls xlsm xlsb wpd wp wp7 fb2 odt sxw epub md"
    ),
]

@Suite struct FileTypeClassifierTests {
    let classifier = FileTypeClassifier.standard

    @Test(arguments: specTables.flatMap { kind, list in list.split(separator: " ").map { (kind, String($0)) } })
    func everyTableRowClassifies(kind: FileKind, fileExtension: String) {
        #expect(classifier.fileType(ofFileNamed: "file.\(fileExtension)") == kind)
        #expect(classifier.fileType(ofFileNamed: "/downloads/FILE.\(fileExtension.uppercased())") == kind)
    }

    @Test func tablesMatchTheSpecInOrder() {
        #expect(classifier.tables.map { $0.kind } == specTables.map { $0.0 })
        #expect(classifier.tables.map { $0.extensions.joined(separator: " ") } == specTables.map { $0.1 })
    }

    @Test func oggIsAnEarlyVideoAndOgaIsAudio() {
        #expect(classifier.fileType(ofFileNamed: "a.ogg") == .video)
        #expect(classifier.fileType(ofFileNamed: "a.oga") == .audio)
    }

    @Test func unknownOrMissingExtensionIsOther() {
        for name in ["archive.zip", "README", ".profile", "name.", "a.tar.gz", "x.rar", "", "dir.mp4/file"] {
            #expect(classifier.fileType(ofFileNamed: name) == .other, "\(name)")
        }
    }

    @Test func extensionIsTheLastComponentsLastDot() {
        #expect(FileTypeClassifier.fileExtension(of: "a/b.c/d.MP3") == "mp3")
        #expect(FileTypeClassifier.fileExtension(of: ".bashrc") == "")
        #expect(FileTypeClassifier.fileExtension(of: "x.tar.GZ") == "gz")
    }

    @Test(arguments: [
        // (file name, MIME, expected) — refinement applies to audio, video and other only.
        ("song.mp3", "application/pdf", FileKind.document),
        ("song.mp3", "application/octet-stream", .other),
        ("clip.mp4", "audio/mpeg", .audio),
        ("clip.mp4", "image/png", .image),
        ("noext", "video/mp4", .video),
        ("noext", "text/plain", .other),
        ("noext", "text/md", .document),
        ("noext", "text/srt; charset=utf-8", .document),
        ("noext", " TEXT/RTF ", .document),
        ("noext", "text/html", .other),
        ("a.ogg", "audio/ogg", .audio),
        ("a.bin", "image/jpeg", .image),
        ("a.bin", "application/zip", .other),
        ("a.bin", "application/PDF", .document),
        // Unlisted MIME types and malformed ones keep the extension's answer.
        ("clip.mp4", "font/woff2", .video),
        ("clip.mp4", "multipart/byteranges", .video),
        ("clip.mp4", "garbage", .video),
        ("clip.mp4", "", .video),
        // Image and document extensions are never refined.
        ("photo.jpg", "video/mp4", .image),
        ("photo.jpg", "application/pdf", .image),
        ("notes.txt", "audio/mpeg", .document),
        ("paper.pdf", "application/octet-stream", .document),
    ])
    func mimeRefinement(fileName: String, mimeType: String, expected: FileKind) {
        #expect(classifier.fileType(ofFileNamed: fileName, mimeType: mimeType) == expected)
    }

    @Test func noMimeKeepsTheExtension() {
        #expect(classifier.fileType(ofFileNamed: "x.flac", mimeType: nil) == .audio)
    }

    @Test func closureHasTheEngineShape() {
        let classify: @Sendable (String, String?) -> FileKind = classifier.classify
        #expect(classify("a.epub", nil) == .document)
        #expect(classify("a", "video/webm") == .video)
    }

    @Test func customTablesAreConsultedInOrder() {
        let custom = FileTypeClassifier(tables: [(.document, ["heic"]), (.image, ["heic", "webp"])])
        #expect(custom.fileType(ofFileNamed: "a.heic") == .document)
        #expect(custom.fileType(ofFileNamed: "a.webp") == .image)
        #expect(custom.fileType(ofFileNamed: "a.jpg") == .other)
    }

    @Test func thumbnailerAnswersKindsOfSources() {
        let thumbnailer = Thumbnailer()
        #expect(thumbnailer.fileType(ofFileNamed: "a.mkv") == .video)
        let source = ThumbnailSource(taskKey: "https://example.com/files/report.pdf?x=1", filePath: nil)
        #expect(source.fileName == "report.pdf")
        #expect(thumbnailer.fileType(of: source) == .document)
        let decided = ThumbnailSource(taskKey: "k", filePath: nil, fileName: "a.pdf", kind: .image)
        #expect(thumbnailer.fileType(of: decided) == .image)
    }
}
