//! PKCE (RFC 7636, method `S256` only) and the `state` parameter: random values from the
//! OS, encoded base64url without padding.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};

use super::AuthError;

/// Random bytes behind a code verifier: 32 bytes give the 43-character verifier RFC 7636
/// §4.1 recommends (it allows 43 to 128).
pub const VERIFIER_BYTES: usize = 32;

/// Random bytes behind a `state` value.
pub const STATE_BYTES: usize = 16;

/// One authorization attempt's secrets. `Debug` shows neither.
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
    pub state: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pkce { .. }")
    }
}

impl Pkce {
    /// A fresh verifier, its challenge and a `state`; fails only when the system gives no
    /// random numbers.
    pub fn new() -> Result<Pkce, AuthError> {
        let verifier = random_b64(VERIFIER_BYTES)?;
        let challenge = challenge_for(&verifier);
        Ok(Pkce {
            verifier,
            challenge,
            state: random_b64(STATE_BYTES)?,
        })
    }

    /// Whether the `state` of an authorization response is the one sent (constant time).
    pub fn state_matches(&self, got: Option<&str>) -> bool {
        got.is_some_and(|got| same_secret(&self.state, got))
    }
}

/// Whether two secrets are equal, in a time that does not depend on where they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `BASE64URL(SHA256(verifier))`.
pub fn challenge_for(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn random_b64(n: usize) -> Result<String, AuthError> {
    let mut buf = vec![0u8; n];
    getrandom::fill(&mut buf)
        .map_err(|e| AuthError::Internal(format!("the system gave no random numbers: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_example() {
        assert_eq!(
            challenge_for("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifier_length_charset_and_freshness() {
        let a = Pkce::new().unwrap();
        let b = Pkce::new().unwrap();
        assert_eq!(a.verifier.len(), 43);
        assert!(a
            .verifier
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        assert_ne!(a.verifier, b.verifier);
        assert_ne!(a.state, b.state);
        assert_eq!(a.challenge, challenge_for(&a.verifier));
        assert!(a.state_matches(Some(&a.state.clone())));
        assert!(!a.state_matches(Some(&b.state)));
        assert!(!a.state_matches(None));
        assert_eq!(format!("{a:?}"), "Pkce { .. }");
    }
}
