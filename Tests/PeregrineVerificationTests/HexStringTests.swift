import PeregrineVerification
import Testing

@Suite("hexString")
struct HexStringTests {
    @Test func hexStringWritesTwoLowerCaseDigitsPerByte() {
        #expect([0x00, 0x01, 0x0f, 0x10, 0xab, 0xff].hexString == "00010f10abff")
    }

    @Test func hexStringOfNothingIsEmpty() {
        #expect([UInt8]().hexString == "")
    }

    @Test func hexStringCoversEveryByteValue() {
        let digits = Array("0123456789abcdef")
        let expected = String((0...255).flatMap { [digits[$0 / 16], digits[$0 % 16]] })
        #expect((0...255).map { UInt8($0) }.hexString == expected)
    }

    @Test func hexStringWorksOnAnySequence() {
        #expect((UInt8(250)...UInt8(255)).hexString == "fafbfcfdfeff")
        #expect([UInt8](repeating: 0xAB, count: 3).lazy.map { $0 ^ 0xFF }.hexString == "545454")
    }
}
