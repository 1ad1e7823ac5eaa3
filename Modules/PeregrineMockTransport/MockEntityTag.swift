/// The `ETag` a mock route sends.
public enum MockEntityTag: Sendable, Hashable {
    /// No `ETag` header.
    case none
    /// This tag on every response, quotes included (`"\"v1\""`, or a weak `"W/\"v1\""`).
    case fixed(String)
    /// A new strong tag on every request the route answers: `"1"`, `"2"`, … (the route's
    /// request number), so an `If-Range` carrying an earlier tag never matches.
    case changesOnEveryRequest

    /// The tag sent with the route's `requestNumber`-th response (counted from 1), or nil.
    public func value(forRequestNumber requestNumber: Int) -> String? {
        switch self {
        case .none: nil
        case .fixed(let tag): tag
        case .changesOnEveryRequest: "\"\(requestNumber)\""
        }
    }
}
