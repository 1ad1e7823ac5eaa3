/// The add-time sections of ``ListSortType/addTime`` when ``ListSectioning/addTime`` is on.
///
/// Cases are declared oldest first, the order of an ascending list; ``AddTimeGrouping`` says
/// which calendar days each one covers.
public enum AddTimeGroup: Int, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// Before the 30th day before today.
    case older
    /// From the 30th to the 8th day before today.
    case last30Days
    /// From the 7th to the 2nd day before today.
    case last7Days
    /// The day before today.
    case yesterday
    /// Today.
    case today
    /// After today (a clock that was set back, or an imported task).
    case future

    /// The section title: "Older", "Last 30 Days", "Last 7 Days", "Yesterday", "Today", "Future".
    public var title: String {
        switch self {
        case .older: "Older"
        case .last30Days: "Last 30 Days"
        case .last7Days: "Last 7 Days"
        case .yesterday: "Yesterday"
        case .today: "Today"
        case .future: "Future"
        }
    }

    /// Oldest first. Complexity: O(1).
    public static func < (lhs: AddTimeGroup, rhs: AddTimeGroup) -> Bool { lhs.rawValue < rhs.rawValue }
}
