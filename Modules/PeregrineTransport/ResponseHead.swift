import PeregrineCore

/// The head of the final response of a transfer (after redirects).
public struct ResponseHead: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The response headers, in order.
    public var headers: HTTPHeaders {
        didSet { parsedContentLength = Self.contentLength(in: headers) }
    }
    /// `Content-Length`, parsed once per change of the headers: engines read it many times.
    private var parsedContentLength: Int64?
    /// The URL that answered, after redirects.
    public var effectiveURL: String
    /// The HTTP version, e.g. "1.1" or "2".
    public var httpVersion: String

    /// Creates a head.
    public init(status: Int, headers: HTTPHeaders, effectiveURL: String, httpVersion: String = "1.1") {
        self.status = status
        self.headers = headers
        parsedContentLength = Self.contentLength(in: headers)
        self.effectiveURL = effectiveURL
        self.httpVersion = httpVersion
    }

    /// `Content-Length`, when present and valid; for a 206, the length of the range.
    public var contentLength: Int64? { parsedContentLength }

    private static func contentLength(in headers: HTTPHeaders) -> Int64? {
        headers["Content-Length"].flatMap { Int64(decimalDigits: $0.trimmed) }
    }

    /// The `ETag`, quotes included.
    public var entityTag: String? { headers["ETag"]?.trimmed }

    /// The `Last-Modified` date as sent.
    public var lastModified: String? { headers["Last-Modified"]?.trimmed }

    /// The parsed `Content-Range`, for a 206 or 416.
    public var contentRange: ContentRange? { headers["Content-Range"].flatMap(ContentRange.init(headerValue:)) }

    /// The `Content-Type` without parameters, lower-cased.
    public var mimeType: String? {
        headers["Content-Type"].map { $0.split(separator: ";").first.map { String($0).trimmed.lowercased() } ?? "" }
    }

    /// The validator to resume this response's representation with.
    public var resumeValidator: ResumeValidator? { ResumeValidator(entityTag: entityTag, lastModified: lastModified) }

    /// The length of the whole representation: from `Content-Range` for a 206, else `Content-Length`.
    public var completeLength: Int64? {
        if status == 206 { return contentRange?.completeLength }
        return contentLength
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }
}
