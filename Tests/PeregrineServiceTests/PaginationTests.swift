import PeregrineService
import TestSupport
import Testing

/// `tellWaiting`/`tellStopped` paging, against aria2's rules (the same cases pass against
/// `aria2c` in Tests/RPC/aria2p_compat.py).
@Suite struct PaginationTests {
    @Test func positiveOffsetsCountFromTheFront() {
        let items = Array(0..<5)
        #expect(Pagination.page(items, offset: 0, num: 2) == [0, 1])
        #expect(Pagination.page(items, offset: 3, num: 10) == [3, 4])
        #expect(Pagination.page(items, offset: 5, num: 1) == [])
        #expect(Pagination.page(items, offset: 0, num: 0) == [])
    }

    @Test func negativeOffsetsCountFromTheEndAndGoBackwards() {
        let items = Array(0..<5)
        #expect(Pagination.page(items, offset: -1, num: 2) == [4, 3])
        #expect(Pagination.page(items, offset: -2, num: 100) == [3, 2, 1, 0])
        #expect(Pagination.page(items, offset: -5, num: 1) == [0])
        #expect(Pagination.page(items, offset: -6, num: 3) == [])
        #expect(Pagination.page([Int](), offset: -1, num: 3) == [])
    }

    /// Every offset and count on lists of every length up to 8, against a direct model of the
    /// rule: from the front, up to num items; from the end, up to num items going back.
    @Test func everySmallCaseFollowsTheRule() {
        for count in 0...8 {
            let items = Array(0..<count)
            for offset in -10...10 {
                for num in 0...10 {
                    var expected: [Int] = []
                    if offset >= 0 {
                        var index = offset
                        while index < count, expected.count < num {
                            expected.append(index)
                            index += 1
                        }
                    } else {
                        var index = count + offset
                        while index >= 0, index < count, expected.count < num {
                            expected.append(index)
                            index -= 1
                        }
                    }
                    #expect(Pagination.page(items, offset: offset, num: num) == expected, "\(count) \(offset) \(num)")
                }
            }
        }
    }
}
