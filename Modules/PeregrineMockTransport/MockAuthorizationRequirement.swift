/// A route's demand for credentials: a 401 with challenges unless the request carries the
/// expected `Authorization` value.
public struct MockAuthorizationRequirement: Sendable, Hashable {
    /// The `Authorization` value accepted, compared byte for byte (e.g. `Basic dXNlcjpwYXNz`).
    public var expectedAuthorization: String
    /// The `WWW-Authenticate` values of the 401, each sent as its own header line, in order.
    public var challenges: [String]

    /// Creates a requirement.
    public init(expectedAuthorization: String, challenges: [String] = ["Basic realm=\"mock\""]) {
        self.expectedAuthorization = expectedAuthorization
        self.challenges = challenges
    }
}
