//! The password hasher (Argon2id, the `argon2` crate's recommended parameters) and the source of secrets (the
//! operating system's random bytes), as the people use cases' ports.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use trove_application::ports::{PasswordHasher, SecretSource};

/// Argon2id with the crate's default parameters (19 MiB, 2 passes, 1 lane), a fresh 128-bit salt per hash.
#[derive(Debug, Clone, Copy, Default)]
pub struct Argon2Hasher;

impl PasswordHasher for Argon2Hasher {
    fn hash(&self, password: &str) -> anyhow::Result<String> {
        let mut salt = [0u8; 16];
        getrandom::fill(&mut salt).map_err(|e| anyhow::anyhow!("no random bytes for a salt: {e}"))?;
        let salt = SaltString::encode_b64(&salt).map_err(|e| anyhow::anyhow!("encoding a salt: {e}"))?;
        let hash = Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map_err(|e| anyhow::anyhow!("hashing a password: {e}"))?;
        Ok(hash.to_string())
    }

    fn verify(&self, password: &str, hash: &str) -> bool {
        PasswordHash::new(hash).is_ok_and(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
    }
}

/// Secrets of 256 bits from the operating system, hex-encoded.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsSecrets;

impl SecretSource for OsSecrets {
    fn new_secret(&self) -> anyhow::Result<String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no random bytes from the operating system: {e}"))?;
        Ok(hex::encode(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_checks_against_its_own_hash_only() {
        let h = Argon2Hasher;
        let hash = h.hash("correct horse battery").unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(h.verify("correct horse battery", &hash));
        assert!(!h.verify("correct horse battery!", &hash));
        assert!(!h.verify("correct horse battery", "not a hash"));
        // A fresh salt each time: the same password never hashes alike.
        assert_ne!(h.hash("correct horse battery").unwrap(), hash);
        let (a, b) = (OsSecrets.new_secret().unwrap(), OsSecrets.new_secret().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
