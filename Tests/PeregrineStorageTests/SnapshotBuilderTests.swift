import PeregrineJournal
import PeregrineStorage
import PeregrineStorageTestKit
import TestSupport
import Testing

/// `SnapshotBuilder` finds tasks through its own open-addressing index (`TaskIndex`): these
/// tests hold it against a plain model under random puts and removals.
@Suite struct SnapshotBuilderTests {
    /// Replay one seed with `PEREGRINE_SNAPSHOT_BUILDER_SEED=SEED`.
    @Test(arguments: SeededRandom.seeds(from: "PEREGRINE_SNAPSHOT_BUILDER_SEED", defaults: [1, 2, 3, 4]))
    func putsAndRemovalsGiveWhatAPlainModelGives(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var builder = SnapshotBuilder()
        var model: [StoredTask] = []
        // A small pool of URLs, so that tasks are replaced, removed and added again often, and
        // enough changes that the index grows and is rebuilt many times.
        let pool = Int.random(in: 50...3_000, using: &random)
        for step in 0..<20_000 {
            let index = Int.random(in: 0..<pool, using: &random)
            let url = StoreFixtures.task(index).urlString
            if Int.random(in: 0..<10, using: &random) < 3 {
                builder.apply(.removeTask(urlString: url))
                model.removeAll { $0.urlString == url }
            } else {
                let task = StoreFixtures.task(index, received: Int64(step))
                builder.apply(.putTask(task))
                if let position = model.firstIndex(where: { $0.urlString == url }) {
                    model[position] = task
                } else {
                    model.append(task)
                }
            }
            if step % 997 == 0 {
                #expect(builder.taskCount == model.count, "seed \(seed), step \(step)")
                #expect(builder.contains(task: url) == model.contains { $0.urlString == url })
            }
        }
        #expect(builder.taskCount == model.count)
        #expect(builder.snapshot(repairs: []).tasks == model, "seed \(seed)")
        for index in 0..<pool {
            let url = StoreFixtures.task(index).urlString
            #expect(builder.contains(task: url) == model.contains { $0.urlString == url })
        }
        #expect(!builder.contains(task: "https://example.com/never-added"))
    }
}
