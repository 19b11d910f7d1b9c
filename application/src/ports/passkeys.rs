//! Passkeys (WebAuthn): the ceremonies a browser and the server go through to make a passkey and to sign in
//! with one, and where the passkeys and the ceremonies in progress are kept.
//!
//! The WebAuthn work itself (challenges, attestation and assertion checks) is the [`PasskeyCeremonies`] port,
//! implemented over the `webauthn-rs` crate in `adapters/passkeys`. What crosses the port is text: the options
//! a browser passes to `navigator.credentials.create()` / `.get()` as JSON, the credential the browser answers
//! as JSON, and the server's half of a ceremony and the passkey itself as opaque serialised text that only the
//! adapter reads. So this crate never names a WebAuthn type.

use crate::RepoError;
use crate::ports::people::{Member, NewMember};
use async_trait::async_trait;
use trove_domain::ids::PasskeyId;
use trove_domain::people::MemberId;
use trove_domain::{HouseholdId, Timestamp};

/// The WebAuthn user handle of a member: 16 random bytes written as 32 hex digits, the same for all of a
/// member's passkeys. It names no one (no name, no id), as the WebAuthn specification asks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserHandle(pub String);

/// A credential id, base64url without padding, as the browser and the specification write it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CredentialId(pub String);

/// The server's half of a ceremony, serialised by the adapter: it holds the challenge, so it stays on the
/// server (in the store), never in the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CeremonyState(pub String);

/// A passkey the adapter made or updated: its credential id and the serialised key (public key, counter,
/// flags) the adapter reads back to check a sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasskeyKey {
    pub credential: CredentialId,
    pub serialised: String,
}

/// What starting a ceremony answers: the options for the browser (JSON text) and the state to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// The `PublicKeyCredentialCreationOptions` or `...RequestOptions`, wrapped in `{"publicKey": ...}` as
    /// JSON, with binary values in base64url.
    pub options: String,
    pub state: CeremonyState,
}

/// Why a ceremony's credential was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum PasskeyError {
    /// The credential is not the JSON of a WebAuthn credential; the message says what is wrong.
    #[error("the credential is not a WebAuthn credential: {0}")]
    Malformed(String),
    /// The credential is well formed but fails the checks (challenge, origin, relying party, signature, user
    /// verification, or a credential this ceremony did not allow).
    #[error("{0}")]
    Rejected(String),
    /// Passkeys cannot work with this configuration (the message says why, e.g. an IP address as the public
    /// URL's host).
    #[error("{0}")]
    Unavailable(String),
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// The WebAuthn relying party (the relying party id is the host of `TROVE_PUBLIC_URL`, the origin is its
/// origin). Pure computation, no I/O.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait PasskeyCeremonies: Send + Sync {
    /// Starts making a passkey for `user` (called `name` on the authenticator), refusing the authenticators
    /// that already hold one of `exclude`.
    ///
    /// # Errors
    /// MUST return `Unavailable` when passkeys cannot work with the configuration; `Unexpected` otherwise.
    fn start_registration(
        &self,
        user: &UserHandle,
        name: &str,
        exclude: &[CredentialId],
    ) -> Result<Started, PasskeyError>;

    /// Checks the browser's answer (`credential`, JSON) against the ceremony's `state`: the new passkey.
    ///
    /// # Errors
    /// MUST return `Malformed` when `credential` is not a registration credential's JSON and `Rejected` when it
    /// fails a check; `Unavailable`, `Unexpected` otherwise.
    fn finish_registration(&self, state: &CeremonyState, credential: &str) -> Result<PasskeyKey, PasskeyError>;

    /// Starts a sign-in with one of `passkeys` (a member's). With none (an unknown name, or a member without
    /// passkeys) the options name credential ids made up from `name`, the same each time, so the answer does
    /// not tell whether the name exists; such a ceremony never succeeds.
    ///
    /// # Errors
    /// MUST return `Unavailable` when passkeys cannot work with the configuration; `Unexpected` otherwise.
    fn start_authentication(&self, name: &str, passkeys: &[PasskeyKey]) -> Result<Started, PasskeyError>;

    /// The credential id of the browser's answer (`credential`, JSON) to a sign-in, before it is checked.
    ///
    /// # Errors
    /// MUST return `Malformed` when `credential` is not a sign-in credential's JSON.
    fn credential_of(&self, credential: &str) -> Result<CredentialId, PasskeyError>;

    /// Checks the browser's answer against the ceremony's `state` and the signing `passkey`: the passkey with
    /// its counter updated.
    ///
    /// # Errors
    /// MUST return `Malformed` for bad JSON and `Rejected` when a check fails; `Unavailable`, `Unexpected`
    /// otherwise.
    fn finish_authentication(
        &self,
        state: &CeremonyState,
        credential: &str,
        passkey: &PasskeyKey,
    ) -> Result<PasskeyKey, PasskeyError>;
}

/// A passkey of a member, as listed (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passkey {
    pub id: PasskeyId,
    pub member: MemberId,
    /// What the member calls it ("phone", "laptop").
    pub name: String,
    pub created_at: Timestamp,
    pub last_used_at: Option<Timestamp>,
}

/// A passkey with its key, to check a sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPasskey {
    pub passkey: Passkey,
    pub user: UserHandle,
    pub key: PasskeyKey,
}

/// A passkey to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPasskey {
    pub name: String,
    pub user: UserHandle,
    pub key: PasskeyKey,
    pub created_at: Timestamp,
}

/// What a ceremony in progress is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// Signing up from the invitation whose code has this hash, with this name.
    SignUp { invitation: String, name: String },
    /// Signing in as the member with this name (`member` is `None` for a name no member has).
    SignIn { name: String, member: Option<MemberId> },
    /// A signed-in member adding a passkey called `name`.
    Add { member: MemberId, name: String },
}

/// A ceremony in progress, kept on the server between its start and its finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ceremony {
    pub purpose: Purpose,
    /// The user handle of the passkey being made (sign-up, add); for a sign-in, the member's (if any).
    pub user: Option<UserHandle>,
    pub state: CeremonyState,
    pub expires_at: Timestamp,
}

/// Passkeys and the ceremonies in progress. Ceremonies are kept in the store (not in memory), so several
/// processes behind one database finish each other's ceremonies.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait PasskeyRepo: Send + Sync {
    /// Keeps a ceremony under the hash of its id, and removes the ceremonies that expired before `now`.
    ///
    /// # Errors
    /// `Conflict(AlreadyStored)` when the hash is already stored; `Unexpected` otherwise.
    async fn add_ceremony(&self, id_hash: &str, ceremony: Ceremony, now: Timestamp) -> Result<(), RepoError>;

    /// Takes the ceremony with this id hash: it is removed, so a ceremony is finished at most once, even by
    /// two concurrent requests. An expired one (`expires_at` before `now`) is removed and answered `None`.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn take_ceremony(&self, id_hash: &str, now: Timestamp) -> Result<Option<Ceremony>, RepoError>;

    /// Accepts the invitation with this code hash by adding the member it invited with their first passkey, in
    /// one transaction, which judges the invitation as [`InvitationRepo::redeem`](crate::ports::InvitationRepo::redeem)
    /// does: all or nothing.
    ///
    /// # Errors
    /// MUST return `Conflict(Invitation(reason))` when the rule refuses the invitation (used meanwhile, revoked,
    /// expired, its maker removed or demoted), `Conflict(NameTaken)` when the name is taken,
    /// `Conflict(CredentialRegistered)` when the credential is already registered (nothing is written);
    /// `Unexpected` otherwise.
    async fn redeem_with_passkey(
        &self,
        code_hash: &str,
        member: NewMember,
        passkey: NewPasskey,
    ) -> Result<Member, RepoError>;

    /// Adds a passkey to `member`.
    ///
    /// # Errors
    /// MUST return `Conflict(CredentialRegistered)` when the credential is already registered (to anyone);
    /// `Unexpected` otherwise.
    async fn add_passkey(&self, member: MemberId, passkey: NewPasskey) -> Result<Passkey, RepoError>;

    /// The passkeys of `member` with their keys, oldest first.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn passkeys(&self, member: MemberId) -> Result<Vec<StoredPasskey>, RepoError>;

    /// The user handle of `member`'s passkeys, `None` when they have none.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn user_handle(&self, member: MemberId) -> Result<Option<UserHandle>, RepoError>;

    /// Records a sign-in with the passkey `id`: its updated key and when.
    ///
    /// # Errors
    /// `Unexpected` only; a removed passkey is no error.
    async fn used_passkey(&self, id: PasskeyId, key: PasskeyKey, at: Timestamp) -> Result<(), RepoError>;

    /// Removes the passkey `id` of `member` of `household`, in one transaction that keeps the member a way to
    /// sign in.
    ///
    /// # Errors
    /// MUST return `NotFound` when the member has no such passkey, `Conflict(LastWayIn)` when it is their last passkey
    /// and they have no password (nothing is written); `Unexpected` otherwise.
    async fn remove_passkey(&self, household: HouseholdId, member: MemberId, id: PasskeyId) -> Result<(), RepoError>;
}
