import Foundation
import PeregrineService
import TestSupport
import Testing

/// `dir` and `out` stay inside the download root: no `..`, no absolute path outside, no
/// symbolic link out of it.
@Suite struct PathConfinementTests {
    @Test func theRootItselfIsAcceptedAbsoluteOrRelative() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-confine")
        defer { scratch.remove() }
        let confinement = PathConfinement(root: scratch.path)
        #expect(try confinement.directory(scratch.path) == confinement.root)
        #expect(try confinement.directory(scratch.path + "/") == confinement.root)
        #expect(try confinement.directory(".") == confinement.root)
    }

    @Test func parentReferencesAbsolutePathsOutsideAndSymlinkEscapesAreRefused() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-confine")
        defer { scratch.remove() }
        let outside = try TemporaryDirectory(prefix: "peregrine-outside")
        defer { outside.remove() }
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root + "/inner", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/escape", withDestinationPath: outside.path)
        let confinement = PathConfinement(root: root)

        func code(_ dir: String) -> PathConfinementError.Code? {
            do {
                _ = try confinement.directory(dir)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code("..") == .parentReference)
        #expect(code("inner/../../x") == .parentReference)
        #expect(code(root + "/../root") == .parentReference)
        #expect(code("/etc") == .outsideRoot)
        #expect(code(outside.path) == .outsideRoot)
        #expect(code("escape") == .outsideRoot)
        #expect(code("escape/deeper/not-yet") == .outsideRoot)
        #expect(code(root + "x") == .outsideRoot)
        // Folders inside the root, existing or not, are the downloads' subdirectories.
        #expect(code("inner") == nil)
        #expect(try confinement.subdirectory("inner") == "inner")
        #expect(try confinement.subdirectory(root + "/new//directory/") == "new/directory")
        #expect(try confinement.subdirectory(".") == nil)
        #expect(try confinement.subdirectory(root) == nil)
        #expect(try confinement.subdirectory("inner/./deeper") == "inner/deeper")
    }

    @Test func outMustBeOneFileNameAndNotASymlink() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-confine")
        defer { scratch.remove() }
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link.bin"), withDestinationPath: "/etc/passwd")
        let confinement = PathConfinement(root: scratch.path)

        func code(_ out: String) -> PathConfinementError.Code? {
            do {
                _ = try confinement.fileName(out)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code("file.bin") == nil)
        #expect(code("..") == .parentReference)
        #expect(code("../x") == .parentReference)
        #expect(code("/etc/passwd") == .outsideRoot)
        #expect(code("a/b") == .invalidFileName)
        #expect(code("") == .invalidFileName)
        #expect(code(".") == .invalidFileName)
        #expect(code("link.bin") == .outsideRoot)
    }
}
