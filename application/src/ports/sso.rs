//! Single sign-on with an OpenID provider: the provider (discovery, the authorization URL, the code exchange and
//! the ID token's checks, over the `openidconnect` crate in `adapters/oidc`), and where the sign-ins on their way
//! and the accounts members sign in with are kept. What crosses the port is plain text: this crate never names an
//! OpenID type.

use crate::RepoError;
use crate::ports::people::{Member, NewMember};
use async_trait::async_trait;
use trove_domain::Timestamp;

/// Where to send the browser, and the secrets the server keeps until it comes back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorization {
    /// The provider's authorization URL with the client, the redirect URI, the scopes, `state`, `nonce` and the
    /// PKCE challenge (S256).
    pub url: String,
    /// The random `state` the provider sends back with the code.
    pub state: String,
    /// The random nonce the ID token must carry.
    pub nonce: String,
    /// The PKCE code verifier the challenge was made from.
    pub verifier: String,
}

/// Who the provider says signed in: its ID token's checked claims.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The ID token's `iss`.
    pub issuer: String,
    /// The ID token's `sub`: with the issuer, who the person is.
    pub subject: String,
    /// `preferred_username`, `name` and `email`, when the provider gives them (for naming a new member only).
    pub username: Option<String>,
    pub name: Option<String>,
    pub email: Option<String>,
    /// The groups claim (`TROVE_OIDC_GROUPS_CLAIM`), empty when it is not set or not in the token.
    pub groups: Vec<String>,
}

/// Why single sign-on did not work.
#[derive(Debug, thiserror::Error)]
pub enum SsoError {
    /// The provider refused the code (unknown, used, for another client), or its answer failed a check (the
    /// ID token's signature, issuer, audience, expiry, nonce): the message says which.
    #[error("{0}")]
    Refused(String),
    /// The provider cannot be reached or its discovery document is unusable.
    #[error("{0}")]
    Unavailable(String),
}

/// The OpenID provider, as the relying party sees it.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait OpenIdProvider: Send + Sync {
    /// What the sign-in page's button says: "Sign in with NAME".
    fn display_name(&self) -> String;

    /// A new sign-in: the authorization URL, with a new `state`, nonce and PKCE verifier.
    ///
    /// # Errors
    /// MUST return `Unavailable` when the provider cannot be reached.
    async fn authorization(&self) -> Result<Authorization, SsoError>;

    /// Exchanges `code` with the `verifier` and checks the ID token (signature, issuer, audience, expiry and
    /// `nonce`): who signed in.
    ///
    /// # Errors
    /// MUST return `Refused` when the provider refuses the code or a check fails; `Unavailable` when it cannot
    /// be reached.
    async fn identify(&self, code: &str, verifier: &str, nonce: &str) -> Result<Identity, SsoError>;
}

/// A sign-in sent to the provider and not yet back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSignIn {
    pub nonce: String,
    pub verifier: String,
    /// The hash of the invitation's code, when the sign-in joins a household from one.
    pub invitation: Option<String>,
    pub expires_at: Timestamp,
}

/// The sign-ins on their way and the provider accounts of members.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait SsoRepo: Send + Sync {
    /// Keeps a sign-in under the hash of its `state`, and removes those that expired before `now`.
    ///
    /// # Errors
    /// `Conflict(AlreadyStored)` when the hash is already stored; `Unexpected` otherwise.
    async fn add_sign_in(&self, state_hash: &str, pending: PendingSignIn, now: Timestamp) -> Result<(), RepoError>;

    /// Takes the sign-in with this state hash: it is removed, so a sign-in comes back at most once, even to two
    /// concurrent requests. An expired one is removed and answered `None`.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn take_sign_in(&self, state_hash: &str, now: Timestamp) -> Result<Option<PendingSignIn>, RepoError>;

    /// The member who signs in as `subject` at `issuer`, and whether a mapped group brought them in (not an
    /// invitation), recording the use at `at`.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn member_by_identity(
        &self,
        issuer: &str,
        subject: &str,
        at: Timestamp,
    ) -> Result<Option<(Member, bool)>, RepoError>;

    /// Adds `member` signing in as `subject` at `issuer`, in one transaction with its history event; with
    /// `invitation` (a code's hash), by accepting it (else a mapped group brought them in), judged as
    /// [`InvitationRepo::redeem`](crate::ports::InvitationRepo::redeem) does.
    ///
    /// # Errors
    /// MUST return `Conflict(NameTaken)` when the name is taken, `Conflict(AlreadyStored)` when the account is
    /// already a member's, `Conflict(Invitation(reason))` when the rule refuses the invitation (nothing is
    /// written); `Unexpected` otherwise.
    async fn add_member_with_identity(
        &self,
        invitation: Option<String>,
        member: NewMember,
        issuer: &str,
        subject: &str,
    ) -> Result<Member, RepoError>;
}
