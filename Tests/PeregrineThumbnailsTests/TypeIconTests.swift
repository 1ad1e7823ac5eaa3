import Foundation
import Testing

@testable import PeregrineThumbnails

@Suite struct TypeIconTests {
    @Test(arguments: TypeIcon.allCases)
    func builtInIconExistsAndDecodesAtFullSize(icon: TypeIcon) throws {
        let data = try TypeIconLibrary.builtInData(icon)
        let image = try RasterImage(decoding: Data(data))
        #expect(image.width == 512)
        #expect(image.height == 512)
        #expect(image.pixelFormat == .rgba8)
        // Drawn, not empty: some opaque pixels and a transparent corner.
        #expect(TestImages.pixel(image, 0, 0)[3] == 0)
        #expect(TestImages.pixel(image, 256, 300)[3] == 255)
    }

    @Test(arguments: [16, 44, 64, 128, 300])
    func iconsScaleToTheRequestedHeight(height: Int) throws {
        let library = TypeIconLibrary()
        let icon = library.icon(.video, height: height)
        #expect(icon.height == height)
        #expect(icon.width == height)
        #expect(icon.format == .png)
        let decoded = try icon.decoded()
        #expect(decoded.height == height)
        #expect(decoded.pixelFormat == .rgba8)
        // The same request again is served from the scaled-icon cache.
        #expect(library.icon(.video, height: height) == icon)
    }

    @Test func scaledIconsKeepTheirColours() throws {
        // The video glyph's orange block survives area averaging (no dark fringes from alpha).
        let icon = try TypeIconLibrary().icon(.video, height: 64).decoded()
        let center = TestImages.pixel(icon, 22, 28)
        #expect(TestImages.close(center, [232, 89, 12, 255], tolerance: 30), "\(center)")
    }

    @Test(arguments: [
        ("photo.jpg", FileKind.image, TypeIcon.image),
        ("song.mp3", .audio, .music),
        ("voice.vox", .audio, .music),
        ("sound.wav", .audio, .music),
        ("track.wma", .audio, .music),
        ("book.flac", .audio, .audio),
        ("film.mkv", .video, .video),
        ("notes.txt", .document, .document),
        ("paper.pdf", .document, .pdf),
        ("bundle.rar", .other, .rar),
        ("bundle.ZIP", .other, .zip),
        ("blob.bin", .other, .other),
    ])
    func iconChoiceFollowsKindAndExtension(fileName: String, kind: FileKind, expected: TypeIcon) {
        let library = TypeIconLibrary()
        #expect(TypeIcon(kind: kind, fileExtension: FileTypeClassifier.fileExtension(of: fileName)) == expected)
        #expect(library.icon(forFileNamed: fileName, kind: kind, height: 32) == library.icon(expected, height: 32))
    }

    @Test func userDirectoryOverridesAndAddsExtensions() throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let square = try RasterImage(
            width: 40, height: 40, pixelFormat: .rgb8, pixels: [UInt8](repeating: 0, count: 40 * 40 * 3))
        TestImages.write(try square.pngData(), to: directory + "/PSD.png")
        TestImages.write(try square.pngData(), to: directory + "/PDF.png")
        TestImages.write(Data("not a png".utf8), to: directory + "/DOC.png")
        let library = TypeIconLibrary(customIconDirectory: directory)
        #expect(library.customIconExtensions == ["PSD", "PDF", "DOC"])

        let psd = try library.icon(forFileNamed: "art.psd", kind: .image, height: 20).decoded()
        #expect(psd.height == 20)
        #expect(TestImages.pixel(psd, 10, 10) == [0, 0, 0])
        let pdf = try library.icon(forFileNamed: "a.PDF", kind: .document, height: 20).decoded()
        #expect(TestImages.pixel(pdf, 10, 10) == [0, 0, 0])
        // A broken user icon falls back to the built-in one.
        #expect(library.icon(forFileNamed: "a.doc", kind: .document, height: 20) == library.icon(.document, height: 20))
        // Other extensions are untouched.
        #expect(library.icon(forFileNamed: "a.png", kind: .image, height: 20) == library.icon(.image, height: 20))

        try FileManager.default.removeItem(atPath: directory + "/PSD.png")
        library.reloadCustomIcons()
        #expect(library.icon(forFileNamed: "art.psd", kind: .image, height: 20) == library.icon(.image, height: 20))
    }

    @Test func absurdHeightsAreClamped() {
        let library = TypeIconLibrary(maximumHeight: 256)
        #expect(library.icon(.other, height: 100_000).height == 256)
        #expect(library.icon(.other, height: -5).height == 1)
    }
}
