//! People: the members of households, invitations, browser sessions and API tokens, and the two things the
//! use cases cannot do themselves: hashing passwords and drawing secrets. Secrets (session and API tokens,
//! invitation codes) reach the stores as hashes only.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::history::Recording;
use trove_domain::people::{
    InvitationId, InvitationState, Maker, MemberId, MemberName, Role, Scope, SessionId, TokenId,
};
use trove_domain::{HouseholdId, Timestamp};

/// A member of a household.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub id: MemberId,
    pub household: HouseholdId,
    pub name: MemberName,
    pub role: Role,
    pub created_at: Timestamp,
}

/// A household as `me` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Household {
    pub id: HouseholdId,
    pub name: String,
}

/// A member to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMember {
    pub household: HouseholdId,
    pub name: MemberName,
    pub role: Role,
    /// The Argon2id hash of the password (PHC string); `None` for a member made by the command line, who signs
    /// in with tokens only.
    pub password_hash: Option<String>,
    pub created_at: Timestamp,
}

/// Members of households.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait MemberRepo: Send + Sync {
    /// The household `id`.
    ///
    /// # Errors
    /// MUST return `NotFound` when there is no such household; `Unexpected` otherwise.
    async fn household(&self, id: HouseholdId) -> Result<Household, RepoError>;

    /// Adds a member.
    ///
    /// # Errors
    /// MUST return `Conflict(NameTaken)` when a member of any household already has the name, ignoring case
    /// ([`MemberName::key`]); `Unexpected` otherwise.
    async fn add_member(&self, new: NewMember) -> Result<Member, RepoError>;

    /// The member called `name` (compared by its key, across the instance) and their password hash, if any.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn member_by_name(&self, name: &MemberName) -> Result<Option<(Member, Option<String>)>, RepoError>;

    /// The member `id` of `household`.
    ///
    /// # Errors
    /// MUST return `NotFound` when there is no such member in this household; `Unexpected` otherwise.
    async fn member(&self, household: HouseholdId, id: MemberId) -> Result<Member, RepoError>;

    /// Every member of `household`, oldest first.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn members(&self, household: HouseholdId) -> Result<Vec<Member>, RepoError>;

    /// Gives the member `id` the role `role`, in one transaction that keeps at least one owner.
    ///
    /// Its events are written in the same transaction, made by `trove_domain::history::Recording` from the rows
    /// as written: the member's fields before and after (`rec.object` of
    /// `crate::recorder::member_fields`).
    ///
    /// # Errors
    /// MUST return `NotFound` when there is no such member in this household, `Conflict(LastOwner)` when the
    /// change would leave the household without an owner (nothing is written); `Unexpected` otherwise.
    async fn set_role(
        &self,
        household: HouseholdId,
        id: MemberId,
        role: Role,
        rec: &Recording,
    ) -> Result<Member, RepoError>;

    /// Removes the member `id` with their sessions and tokens, in one transaction that keeps at least one owner.
    ///
    /// Its events are written in the same transaction, made by `trove_domain::history::Recording` from the rows
    /// as written: the member's fields before.
    ///
    /// # Errors
    /// MUST return `NotFound` when there is no such member in this household, `Conflict(LastOwner)` when they
    /// are the last owner (nothing is written); `Unexpected` otherwise.
    async fn remove_member(&self, household: HouseholdId, id: MemberId, rec: &Recording) -> Result<(), RepoError>;

    /// The household's first owner (the oldest), if it has one.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn first_owner(&self, household: HouseholdId) -> Result<Option<Member>, RepoError>;
}

/// An invitation, with what the rules judge it by: what became of it and its maker as they are now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    pub id: InvitationId,
    pub household: HouseholdId,
    /// The role the person who accepts it gets.
    pub role: Role,
    pub created_at: Timestamp,
    /// Whether it was accepted already (invitations are one-time).
    pub used: bool,
    /// Whether an owner revoked it.
    pub revoked: bool,
    /// The member who made it; `None` when it was made from the command line.
    pub created_by: Option<MemberId>,
    /// That member as they are now, `None` when they are no longer in the household (or there is none).
    pub maker: Option<Member>,
}

impl Invitation {
    /// The invitation as [`check_invitation`](trove_domain::people::check_invitation) judges it.
    pub fn state(&self) -> InvitationState {
        let maker = match (self.created_by, &self.maker) {
            (None, _) => Maker::Instance,
            (Some(_), Some(m)) => Maker::Member(m.role),
            (Some(_), None) => Maker::Removed,
        };
        InvitationState {
            grants: self.role,
            created_at: self.created_at,
            used: self.used,
            revoked: self.revoked,
            maker,
        }
    }
}

/// One-time invitations into a household.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait InvitationRepo: Send + Sync {
    /// Stores a new invitation by the hash of its code.
    ///
    /// # Errors
    /// `Conflict(AlreadyStored)` when the hash is already stored; `Unexpected` otherwise.
    async fn add_invitation(
        &self,
        household: HouseholdId,
        code_hash: &str,
        role: Role,
        created_by: Option<MemberId>,
        at: Timestamp,
    ) -> Result<(), RepoError>;

    /// The invitation with this code hash, used or not, with its maker as they are now.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn invitation(&self, code_hash: &str) -> Result<Option<Invitation>, RepoError>;

    /// The invitations of `household` neither used nor revoked and made after `made_after`, with their makers
    /// as they are now; oldest first. (The use case keeps those the rules still accept.)
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn open_invitations(
        &self,
        household: HouseholdId,
        made_after: Timestamp,
    ) -> Result<Vec<Invitation>, RepoError>;

    /// Revokes the invitation `id` of `household` at `at`: it can no longer be accepted. Revoking one revoked
    /// already changes nothing.
    ///
    /// # Errors
    /// MUST return `NotFound` when `household` has no such invitation, `Conflict(Invitation(Used))` when it was
    /// accepted already (nothing is written); `Unexpected` otherwise.
    async fn revoke_invitation(&self, household: HouseholdId, id: InvitationId, at: Timestamp)
    -> Result<(), RepoError>;

    /// Accepts the invitation: in one transaction, judges it by
    /// [`check_invitation`](trove_domain::people::check_invitation) at `new.created_at` with the facts as they
    /// are in that transaction (its maker's row read there, and locked against a concurrent change of role or
    /// removal where the database allows it), marks it used, and adds the member it invited: all or nothing,
    /// with the new member's `join` event (by themself, at `new.created_at`: [`crate::recorder::joined`]).
    ///
    /// # Errors
    /// MUST return `Conflict(Invitation(reason))` when the rule refuses it (used meanwhile, revoked, expired,
    /// its maker removed or demoted), `Conflict(NameTaken)` when the name is taken (nothing is written in
    /// either case); `Unexpected` otherwise.
    async fn redeem(&self, code_hash: &str, new: NewMember) -> Result<Member, RepoError>;
}

/// A session found by its secret's hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: SessionId,
    pub member: Member,
    /// When it was last used (as written: see [`trove_domain::people::TOUCH_EVERY`]); it expires
    /// [`trove_domain::people::SESSION_IDLE`] after.
    pub last_seen: Timestamp,
}

/// Browser sessions, by the hash of the cookie's secret.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait SessionRepo: Send + Sync {
    /// Stores a new session of `member`.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn add_session(&self, member: MemberId, hash: &str, at: Timestamp) -> Result<SessionId, RepoError>;

    /// The session with this hash and its member, `None` when unknown or ended.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn session(&self, hash: &str) -> Result<Option<Session>, RepoError>;

    /// Records a use of the session (which slides its expiry).
    ///
    /// # Errors
    /// `Unexpected` only; an ended session is no error.
    async fn touch_session(&self, id: SessionId, at: Timestamp) -> Result<(), RepoError>;

    /// Ends one session.
    ///
    /// # Errors
    /// `Unexpected` only; an ended session is no error.
    async fn end_session(&self, id: SessionId) -> Result<(), RepoError>;

    /// Ends every session of `member`; answers how many there were.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn end_sessions(&self, member: MemberId) -> Result<u64, RepoError>;
}

/// A personal API token, as listed (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiToken {
    pub id: TokenId,
    pub member: MemberId,
    pub name: String,
    pub scope: Scope,
    pub created_at: Timestamp,
    pub expires_at: Option<Timestamp>,
    pub last_used_at: Option<Timestamp>,
}

/// A token to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToken {
    pub member: MemberId,
    pub household: HouseholdId,
    pub hash: String,
    pub name: String,
    pub scope: Scope,
    pub created_at: Timestamp,
    pub expires_at: Option<Timestamp>,
}

/// Personal API tokens, by the hash of the token.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait TokenRepo: Send + Sync {
    /// Stores a new token.
    ///
    /// # Errors
    /// `Conflict(AlreadyStored)` when the hash is already stored (a token was reused); `Unexpected` otherwise.
    async fn add_token(&self, new: NewToken) -> Result<ApiToken, RepoError>;

    /// The token with this hash and its member, `None` when unknown or revoked (expired ones are answered: the
    /// use case decides).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn token(&self, hash: &str) -> Result<Option<(ApiToken, Member)>, RepoError>;

    /// The tokens of `household`, of one member when `member` is given; oldest first.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn tokens(&self, household: HouseholdId, member: Option<MemberId>) -> Result<Vec<ApiToken>, RepoError>;

    /// Revokes the token `id` of `household` (of `member` only, when given) at once.
    ///
    /// # Errors
    /// MUST return `NotFound` when there is no such token (of that member) in the household; `Unexpected`
    /// otherwise.
    async fn revoke_token(
        &self,
        household: HouseholdId,
        id: TokenId,
        member: Option<MemberId>,
    ) -> Result<(), RepoError>;

    /// Records a use of the token.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn touch_token(&self, id: TokenId, at: Timestamp) -> Result<(), RepoError>;
}

/// Hashing and checking passwords (Argon2id in the running app). CPU work: the use cases call it on a
/// blocking thread.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait PasswordHasher: Send + Sync {
    /// The hash to store (a PHC string with its salt).
    ///
    /// # Errors
    /// When the hasher fails (no random salt).
    fn hash(&self, password: &str) -> anyhow::Result<String>;

    /// Whether `password` is the one `hash` was made from. A malformed hash is `false`.
    fn verify(&self, password: &str, hash: &str) -> bool;
}

/// A source of secrets: session and API tokens, invitation codes.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait SecretSource: Send + Sync {
    /// A new secret of at least 256 random bits, URL-safe.
    ///
    /// # Errors
    /// When the operating system gives no random bytes.
    fn new_secret(&self) -> anyhow::Result<String>;
}
