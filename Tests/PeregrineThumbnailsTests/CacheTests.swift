import Foundation
import Testing

@testable import PeregrineThumbnails

@Suite struct CacheTests {
    static func thumbnail(height: Int, bytes: Int = 100) -> Thumbnail {
        var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        data.append(Data(repeating: UInt8(height % 256), count: max(0, bytes - 8)))
        return Thumbnail(uncheckedWidth: height, height: height, pixelFormat: .rgb8, format: .png, data: data)
    }

    static func key(_ task: String, _ height: Int = 64, processor: String = "p") -> ThumbnailCacheKey {
        ThumbnailCacheKey(taskKey: task, processorIdentifier: processor, targetHeight: height)
    }

    @Test func memoryEvictsLeastRecentlyUsedPastTheCountLimit() {
        let storage = ThumbnailMemoryStorage(config: .init(totalCostLimit: 1 << 30, countLimit: 3))
        for task in ["a", "b", "c"] { storage.store(Self.thumbnail(height: 64), forKey: Self.key(task)) }
        _ = storage.value(forKey: Self.key("a"))  // a is now the most recent
        storage.store(Self.thumbnail(height: 64), forKey: Self.key("d"))
        #expect(storage.count == 3)
        #expect(storage.contains(Self.key("a")))
        #expect(!storage.contains(Self.key("b")))
        #expect(storage.contains(Self.key("c")) && storage.contains(Self.key("d")))
    }

    @Test func memoryEvictsPastTheCostLimit() {
        let one = Self.thumbnail(height: 10, bytes: 1000)
        let storage = ThumbnailMemoryStorage(config: .init(totalCostLimit: one.cost * 2, countLimit: 300))
        storage.store(one, forKey: Self.key("a"))
        storage.store(one, forKey: Self.key("b"))
        storage.store(one, forKey: Self.key("c"))
        #expect(storage.count == 2)
        #expect(storage.totalCost == one.cost * 2)
        #expect(!storage.contains(Self.key("a")))
        // Larger than the whole budget: not kept.
        storage.store(Self.thumbnail(height: 10, bytes: 5000), forKey: Self.key("huge"))
        #expect(!storage.contains(Self.key("huge")))
    }

    @Test func defaultMemoryLimitIsAboutThreeHundredEntries() {
        let storage = ThumbnailMemoryStorage()
        #expect(storage.config.countLimit == 300)
        for index in 0..<320 { storage.store(Self.thumbnail(height: 8), forKey: Self.key("t\(index)")) }
        #expect(storage.count == 300)
        #expect(!storage.contains(Self.key("t0")) && storage.contains(Self.key("t319")))
    }

    @Test func memoryRemovesByTask() {
        let storage = ThumbnailMemoryStorage()
        storage.store(Self.thumbnail(height: 64), forKey: Self.key("a", 64))
        storage.store(Self.thumbnail(height: 32), forKey: Self.key("a", 32))
        storage.store(Self.thumbnail(height: 64), forKey: Self.key("b", 64))
        storage.removeAll(forTask: "a")
        #expect(storage.count == 1 && storage.contains(Self.key("b", 64)))
    }

    @Test func keysIncludeProcessorAndHeight() {
        let cache = ThumbnailCache()
        try? cache.store(Self.thumbnail(height: 128), forKey: Self.key("a", 128, processor: "png"))
        #expect(cache.memoryValue(forKey: Self.key("a", 128, processor: "jpeg")) == nil)
        #expect(cache.memoryValue(forKey: Self.key("a", 128, processor: "png")) != nil)
        #expect(Self.key("a", 128, processor: "png").fileName != Self.key("a", 128, processor: "jpeg").fileName)
        #expect(Self.key("a", 128).fileName != Self.key("a", 64).fileName)
    }

    @Test func nearHeightsAreServedAndFarOnesAreNot() {
        let cache = ThumbnailCache()
        try? cache.store(Self.thumbnail(height: 128), forKey: Self.key("a", 128))
        #expect(cache.memoryValue(forKey: Self.key("a", 126), heightTolerance: 2)?.height == 128)
        #expect(cache.memoryValue(forKey: Self.key("a", 130), heightTolerance: 2)?.height == 128)
        #expect(cache.memoryValue(forKey: Self.key("a", 131), heightTolerance: 2) == nil)
        #expect(cache.memoryValue(forKey: Self.key("a", 127), heightTolerance: 0) == nil)
    }

    @Test func diskStoresAcrossInstancesAndEvictsLeastRecentlyUsed() throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let one = Self.thumbnail(height: 50, bytes: 1000)
        let fileSize = ThumbnailFileContainer.encode(one, key: Self.key("a"), signature: .none).count
        let config = ThumbnailDiskStorage.Config(directory: directory, sizeLimit: fileSize * 3 + 10)
        let storage = ThumbnailDiskStorage(config: config)
        try storage.store(one, forKey: Self.key("a"))
        try storage.store(one, forKey: Self.key("b"))
        try storage.store(one, forKey: Self.key("c"))
        #expect(storage.value(forKey: Self.key("a")) == one)  // a becomes the most recent
        try storage.store(one, forKey: Self.key("d"))
        #expect(storage.count == 3)
        #expect(storage.value(forKey: Self.key("b")) == nil)
        #expect(storage.totalSize <= config.sizeLimit)

        // A new instance (a restart) sees the same files, and keeps the order of use.
        let reopened = ThumbnailDiskStorage(config: config)
        #expect(reopened.count == 3)
        #expect(reopened.value(forKey: Self.key("c")) == one)
        #expect(reopened.value(forKey: Self.key("a")) == one)
        try reopened.store(one, forKey: Self.key("e"))
        #expect(reopened.value(forKey: Self.key("d")) == nil)
        #expect(reopened.value(forKey: Self.key("c")) == one)

        reopened.removeAll(forTask: "c")
        #expect(reopened.value(forKey: Self.key("c")) == nil)
        reopened.removeAll()
        #expect(reopened.count == 0)
        #expect((try FileManager.default.contentsOfDirectory(atPath: directory)).isEmpty)
    }

    @Test func diskChecksKeyAndSourceSignature() throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let storage = ThumbnailDiskStorage(config: .init(directory: directory))
        let signature = SourceSignature(size: 10, modificationTime: 99)
        try storage.store(Self.thumbnail(height: 64), forKey: Self.key("a"), signature: signature)
        #expect(storage.value(forKey: Self.key("a"), signature: signature) != nil)
        #expect(storage.value(forKey: Self.key("a"), signature: SourceSignature(size: 11, modificationTime: 99)) == nil)
        // A damaged file is a miss and is deleted.
        let path = directory + "/" + Self.key("a").fileName
        TestImages.write(Data("garbage".utf8), to: path)
        let fresh = ThumbnailDiskStorage(config: .init(directory: directory))
        #expect(fresh.value(forKey: Self.key("a")) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func hybridCachePromotesDiskHitsToMemory() throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let first = ThumbnailCache(disk: .init(directory: directory))
        try first.store(Self.thumbnail(height: 64), forKey: Self.key("a"))
        let second = ThumbnailCache(disk: .init(directory: directory))
        #expect(second.memoryValue(forKey: Self.key("a")) == nil)
        #expect(second.value(forKey: Self.key("a", 65), heightTolerance: 2)?.height == 64)
        #expect(second.memoryValue(forKey: Self.key("a")) != nil)
        // memoryOnly never writes files.
        try second.store(Self.thumbnail(height: 64), forKey: Self.key("m"), policy: .memoryOnly)
        #expect(second.diskStorage?.value(forKey: Self.key("m")) == nil)
        second.removeAll()
        #expect(second.value(forKey: Self.key("a")) == nil)
    }

    @Test func leastRecentlyUsedListKeepsOrder() {
        var list = LeastRecentlyUsedList<Int, String>()
        for index in 0..<5 { list.set("\(index)", for: index, cost: index) }
        #expect(list.keysByRecency == [4, 3, 2, 1, 0])
        _ = list.value(for: 1)
        list.remove(3)
        #expect(list.keysByRecency == [1, 4, 2, 0])
        #expect(list.totalCost == 7)
        #expect(list.removeLeastRecentlyUsed()?.key == 0)
        list.set("x", for: 9, cost: 1)
        #expect(list.keysByRecency == [9, 1, 4, 2])
    }
}
