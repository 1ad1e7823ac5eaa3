import PeregrineJSONStorage
import PeregrineJournal
import PeregrineStorage

/// The text a row keeps of a task, a list's settings, the configuration or a thumbnail: the JSON
/// store's record of the change that puts it, so property-list values come back exactly (a
/// date stays a date, `1.0` a real) and a row reads well in `psql`.
enum PostgresRecordCoding {
    private static let format = JSONRecordFormat()

    /// The record text of a change.
    static func text(_ change: StoreChange) -> String {
        var bytes: [UInt8] = []
        format.encode(StoreRecordCoding.node(change), into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The change a record text holds.
    static func change(_ text: String) throws(StoreFormatError) -> StoreChange {
        var text = text
        let result = text.withUTF8 { utf8 -> Result<StoreChange, StoreFormatError> in
            do throws(StoreFormatError) {
                return .success(try StoreRecordCoding.change(try format.decode(UnsafeRawBufferPointer(utf8))))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The list's settings without its URLs: the sections are kept as empty arrays (so their
    /// number is kept), the URLs are rows of their own (``ListOrder``).
    static func settingsText(_ list: StoredList) -> String {
        var settings = list
        settings.sections = Array(repeating: [], count: list.sections.count)
        settings.trash = []
        return text(.putList(settings))
    }

    /// The name of a task's state, for the `state` column (what a query over tasks filters on).
    static func stateName(_ state: DownloadState) -> String {
        switch state {
        case .notInList: "notInList"
        case .pending: "pending"
        case .downloading: "downloading"
        case .paused: "paused"
        case .stopped: "stopped"
        case .finished: "finished"
        case .failed: "failed"
        }
    }
}
