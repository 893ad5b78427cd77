//! Where tokens and client registrations are kept: the OS keychain (Secret Service on
//! Linux), else a file readable only by the user.

/// Tokens by server (canonical resource URL) and client registrations by issuer.
pub struct CredentialStore {}

impl CredentialStore {
    /// Kept in memory only (tests, the conformance client).
    pub fn memory() -> CredentialStore {
        CredentialStore {}
    }
}
