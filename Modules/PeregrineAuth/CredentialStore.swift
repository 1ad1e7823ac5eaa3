import PeregrineCore
import Synchronization

/// Credentials by protection space, given up front and looked up when a server challenges.
///
/// A credential stored for a space with a realm answers only that realm of that origin; one
/// stored for a space without a realm (``ProtectionSpace/anyRealm``) answers any realm of the
/// origin that has no credential of its own. Proxy spaces are separate from origin spaces.
///
/// ```swift
/// let store = CredentialStore()
/// store.set(Credential(user: "alice", password: "s3cret"),
///           for: ProtectionSpace(scheme: "https", host: "files.example", port: 443, realm: "Downloads"))
/// ```
///
/// Thread safety: every method may be called from any thread; lookups and changes are atomic.
public final class CredentialStore: Sendable {
    private let entries: Locked<[ProtectionSpace: Credential]>

    /// Creates a store holding `credentials`.
    public init(_ credentials: [ProtectionSpace: Credential] = [:]) {
        entries = Locked(credentials)
    }

    /// Stores `credential` for `space`, replacing what was there.
    public func set(_ credential: Credential, for space: ProtectionSpace) {
        entries.withLock { $0[space] = credential }
    }

    /// Removes the credential stored for exactly `space`.
    public func remove(for space: ProtectionSpace) {
        _ = entries.withLock { $0.removeValue(forKey: space) }
    }

    /// Removes every credential.
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// The credential for `space`: the one stored for its realm, else the one stored for its
    /// origin without a realm, else nil.
    public func credential(for space: ProtectionSpace) -> Credential? {
        entries.withLock { entries in
            entries[space] ?? (space.realm == nil ? nil : entries[space.anyRealm])
        }
    }

    /// The credential stored for exactly `space`, without the any-realm fallback.
    public func exactCredential(for space: ProtectionSpace) -> Credential? {
        entries.withLock { $0[space] }
    }

    /// The spaces that have a credential.
    public var spaces: [ProtectionSpace] {
        entries.withLock { Array($0.keys) }
    }
}
