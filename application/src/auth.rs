//! Households and bearer tokens: tokens are shown once and stored as SHA-256 hashes only.

use crate::Error;
use crate::ports::HouseholdRepo;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use trove_domain::HouseholdId;

/// The household `trove token new` uses when none is named.
pub const DEFAULT_HOUSEHOLD: &str = "default";

/// The stored form of a token: lower-case hex SHA-256. Tokens are 256 random bits, so a fast hash is enough.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Issuing and checking tokens.
#[derive(Clone)]
pub struct Auth {
    households: Arc<dyn HouseholdRepo>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth").finish_non_exhaustive()
    }
}

impl Auth {
    pub fn new(households: Arc<dyn HouseholdRepo>) -> Self {
        Self { households }
    }

    /// Stores a new token (made by the caller from a secure random source) for a member of the household
    /// called `household` (created on first use) and answers the household.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a blank household name or a token shorter than 32 characters.
    pub async fn issue(&self, household: &str, member: &str, token: &str) -> Result<HouseholdId, Error> {
        let name = household.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(Error::Invalid("household name must be 1 to 100 characters".into()));
        }
        if token.len() < 32 {
            return Err(Error::Invalid("a token must be at least 32 characters".into()));
        }
        let id = self.households.ensure_household(name).await?;
        self.households.add_token(id, &hash_token(token), member).await?;
        Ok(id)
    }

    /// The household a bearer token belongs to, `None` for an unknown token.
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn household(&self, token: &str) -> Result<Option<HouseholdId>, Error> {
        if token.is_empty() {
            return Ok(None);
        }
        Ok(self.households.household_for_token(&hash_token(token)).await?)
    }
}
