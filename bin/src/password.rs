//! The password hasher (Argon2id, the `argon2` crate's recommended parameters) and the source of secrets (the
//! operating system's random bytes), as the people use cases' ports.

use argon2::password_hash::{Output, PasswordHash, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use std::sync::{Arc, Mutex, PoisonError};
use trove_application::ports::{PasswordHasher, SecretSource};

/// Argon2id with the crate's default parameters (19 MiB, 2 passes, 1 lane), a fresh 128-bit salt per hash.
///
/// Each hash works in a block of memory taken from a small pool and given back, instead of a fresh allocation:
/// the allocator would keep a freed 19 MiB block in the arena of whichever thread hashed last (glibc raises its
/// mmap threshold after the first such free), so hashes on many threads grew the resident memory by 19 MiB an
/// arena. With the pool, the memory of hashing is the pool's: one block per hash running at once.
#[derive(Debug, Clone, Default)]
pub struct Argon2Hasher {
    memory: Arc<Mutex<Vec<Vec<Block>>>>,
}

impl Argon2Hasher {
    /// Runs `work` in a block of `blocks` Argon2 blocks from the pool, and gives it back.
    fn with_memory<T>(&self, blocks: usize, work: impl FnOnce(&mut [Block]) -> T) -> T {
        let pooled = self.memory.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let mut memory = pooled.filter(|m| m.len() == blocks).unwrap_or_else(|| vec![Block::default(); blocks]);
        let answer = work(&mut memory);
        // Only blocks of the default size are kept: a stored hash with other parameters is rare.
        if blocks == Params::DEFAULT.block_count() {
            self.memory.lock().unwrap_or_else(PoisonError::into_inner).push(memory);
        }
        answer
    }

    /// The Argon2 output of `password` with `salt` under `argon2` and `params`, `len` bytes long.
    fn output(&self, argon2: &Argon2<'_>, params: &Params, password: &str, salt: &[u8], len: usize) -> Option<Vec<u8>> {
        let mut out = vec![0u8; len];
        self.with_memory(params.block_count(), |memory| {
            argon2.hash_password_into_with_memory(password.as_bytes(), salt, &mut out, memory)
        })
        .ok()?;
        Some(out)
    }
}

impl PasswordHasher for Argon2Hasher {
    fn hash(&self, password: &str) -> anyhow::Result<String> {
        let mut salt = [0u8; 16];
        getrandom::fill(&mut salt).map_err(|e| anyhow::anyhow!("no random bytes for a salt: {e}"))?;
        let salt_string = SaltString::encode_b64(&salt).map_err(|e| anyhow::anyhow!("encoding a salt: {e}"))?;
        let params = Params::DEFAULT;
        let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
        let out = self
            .output(&argon2, &params, password, &salt, Params::DEFAULT_OUTPUT_LEN)
            .ok_or_else(|| anyhow::anyhow!("hashing a password failed"))?;
        let hash = PasswordHash {
            algorithm: Algorithm::Argon2id.ident(),
            version: Some(Version::V0x13.into()),
            params: (&params).try_into().map_err(|e| anyhow::anyhow!("the hash's parameters: {e}"))?,
            salt: Some(salt_string.as_salt()),
            hash: Some(Output::new(&out).map_err(|e| anyhow::anyhow!("the hash's output: {e}"))?),
        };
        Ok(hash.to_string())
    }

    fn verify(&self, password: &str, hash: &str) -> bool {
        let Ok(stored) = PasswordHash::new(hash) else { return false };
        let (Some(salt), Some(expected)) = (stored.salt, stored.hash) else { return false };
        let Ok(algorithm) = Algorithm::try_from(stored.algorithm) else { return false };
        let Ok(version) = stored.version.map_or(Ok(Version::default()), Version::try_from) else { return false };
        let Ok(params) = Params::try_from(&stored) else { return false };
        let mut salt_bytes = [0u8; 64];
        let Ok(salt) = salt.decode_b64(&mut salt_bytes) else { return false };
        let argon2 = Argon2::new(algorithm, version, params.clone());
        // `Output`'s equality is constant-time.
        self.output(&argon2, &params, password, salt, expected.len())
            .and_then(|out| Output::new(&out).ok())
            .is_some_and(|out| out == expected)
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
        let h = Argon2Hasher::default();
        let hash = h.hash("correct horse battery").unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(h.verify("correct horse battery", &hash));
        assert!(!h.verify("correct horse battery!", &hash));
        assert!(!h.verify("correct horse battery", "not a hash"));
        // A fresh salt each time: the same password never hashes alike.
        assert_ne!(h.hash("correct horse battery").unwrap(), hash);
        // A hash made by the argon2 crate's own hasher (as every stored hash so far) checks alike.
        use argon2::password_hash::PasswordHasher as _;
        let salt = SaltString::encode_b64(b"sixteen byte sal").unwrap();
        let theirs = Argon2::default().hash_password(b"correct horse battery", &salt).unwrap().to_string();
        assert!(h.verify("correct horse battery", &theirs));
        assert!(!h.verify("wrong horse battery", &theirs));
        // Ours checks with theirs too, and the pool kept one block for the next hash.
        use argon2::password_hash::PasswordVerifier as _;
        let parsed = PasswordHash::new(&hash).unwrap();
        assert!(Argon2::default().verify_password(b"correct horse battery", &parsed).is_ok());
        assert_eq!(h.memory.lock().unwrap().len(), 1);
        let (a, b) = (OsSecrets.new_secret().unwrap(), OsSecrets.new_secret().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
