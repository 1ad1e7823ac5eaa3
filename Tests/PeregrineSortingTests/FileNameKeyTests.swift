import PeregrineSorting
import Testing

@Suite struct FileNameKeyTests {
    func sorted(_ names: [String]) -> [String] {
        names.sorted { FileNameKey($0) < FileNameKey($1) }
    }

    @Test func numbersCompareByValue() {
        #expect(
            sorted(["file10", "file2", "file1", "file100", "file20"]) == [
                "file1", "file2", "file10", "file20", "file100",
            ])
        #expect(FileNameKey("track 9 of 12") < FileNameKey("track 10 of 12"))
        #expect(FileNameKey("v1.10.0") > FileNameKey("v1.9.3"))
    }

    @Test func leadingZerosDoNotChangeTheValue() {
        #expect(FileNameKey("file01") == FileNameKey("file1"))
        #expect(FileNameKey("file007") < FileNameKey("file10"))
        #expect(FileNameKey("0") == FileNameKey("000"))
    }

    @Test func lettersCompareCaseInsensitively() {
        #expect(FileNameKey("Report.PDF") == FileNameKey("report.pdf"))
        #expect(sorted(["banana", "Apple", "cherry", "apricot"]) == ["Apple", "apricot", "banana", "cherry"])
    }

    @Test func latinDiacriticsCompareAsTheirBaseLetter() {
        #expect(FileNameKey("Éclair") == FileNameKey("eclair"))
        #expect(FileNameKey("e\u{301}clair") == FileNameKey("\u{E9}clair"))
        #expect(
            sorted(["zebra", "Ørsted", "ostrich", "Łódź", "lemon"]) == ["lemon", "Łódź", "Ørsted", "ostrich", "zebra"])
        #expect(FileNameKey("Straße") == FileNameKey("strasse"))
        #expect(FileNameKey("Æther") == FileNameKey("aether"))
    }

    @Test func punctuationSortsBeforeNumbersAndNumbersBeforeLetters() {
        #expect(sorted(["a", "1", "_x", " space", "Z"]) == [" space", "1", "_x", "a", "Z"])
        #expect(FileNameKey(" space") < FileNameKey("1"))
        #expect(FileNameKey("1") < FileNameKey("a"))
        #expect(FileNameKey("a") < FileNameKey("Z"))
    }

    @Test func shorterNameSortsFirstWhenItIsAPrefix() {
        #expect(FileNameKey("abc") < FileNameKey("abcd"))
        #expect(FileNameKey("") < FileNameKey("a"))
        #expect(FileNameKey("file") < FileNameKey("file1"))
    }

    @Test func longNamesCompareBeyondThePackedPrefix() {
        #expect(FileNameKey("abcdefgh1") < FileNameKey("abcdefgh2"))
        #expect(FileNameKey("abcdefgh1") == FileNameKey("ABCDEFGH01"))
        #expect(FileNameKey("xyz 2 b") < FileNameKey("xyz 10 a"))
    }

    @Test func indexTitleIsTheFirstLatinLetterOrHash() {
        #expect(FileNameKey("apple").indexTitle == "A")
        #expect(FileNameKey("Zoo").indexTitle == "Z")
        #expect(FileNameKey("Éclair").indexTitle == "E")
        #expect(FileNameKey("ßtraße").indexTitle == "S")
        #expect(FileNameKey("007").indexTitle == "#")
        #expect(FileNameKey("_hidden").indexTitle == "#")
        #expect(FileNameKey("").indexTitle == "#")
        #expect(FileNameKey("Привет").indexTitle == "#")
        #expect(FileNameKey("東京").indexTitle == "#")
        #expect(FileNameKey("αβγ").indexTitle == "#")
    }

    @Test func nonLatinScriptsCompareCaseInsensitivelyByScalar() {
        #expect(FileNameKey("ПРИВЕТ") == FileNameKey("привет"))
        #expect(FileNameKey("zebra") < FileNameKey("ωmega"))
        #expect(FileNameKey("альфа 2") < FileNameKey("альфа 10"))
    }
}
