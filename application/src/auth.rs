//! Who is asking: API tokens and browser sessions, signing in with a password (throttled), and the tokens the
//! command line issues. Secrets are shown once and stored as SHA-256 hashes only.

use crate::error::Forbidden;
use crate::ports::people::{Member, NewMember, NewToken};
use crate::ports::{Clock, HouseholdRepo, MemberRepo, PasswordHasher, SecretSource, SessionRepo, TokenRepo};
use crate::{Error, RepoError};
use anyhow::Context as _;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;
use trove_domain::people::{self, MemberId, MemberName, Permission, Role, Scope, SessionId, TokenId};
use trove_domain::{HouseholdId, Timestamp};

/// How long a token's check is reused without asking the store: a revoked or expired token, or a changed role,
/// takes effect within this time.
pub const TOKEN_CACHE_TTL: chrono::Duration = chrono::Duration::seconds(1);
/// The most token checks kept; past it the cache starts again empty (a bound, not an eviction policy).
const TOKEN_CACHE_MAX: usize = 10_000;

/// A token check kept for [`TOKEN_CACHE_TTL`], by the token's hash.
#[derive(Debug, Clone, Copy)]
struct CachedToken {
    caller: Caller,
    checked_at: Timestamp,
    expires_at: Option<Timestamp>,
}

/// Recent token checks, shared by [`Auth`] (which fills it) and [`crate::people::People`] (which forgets a
/// revoked token or a changed member at once, so in this process a change takes effect on the next request;
/// another process sharing the database sees it within [`TOKEN_CACHE_TTL`]).
#[derive(Debug, Default)]
pub struct TokenChecks(Mutex<HashMap<String, CachedToken>>);

impl TokenChecks {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, CachedToken>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Forgets the check of token `id`.
    pub fn forget_token(&self, id: TokenId) {
        self.map().retain(|_, c| !matches!(c.caller.access, Access::Token { id: t, .. } if t == id));
    }

    /// Forgets the checks of every token of `member` (a new role, or removed).
    pub fn forget_member(&self, member: MemberId) {
        self.map().retain(|_, c| c.caller.member != member);
    }
}

/// The household `trove token new` uses when none is named.
pub const DEFAULT_HOUSEHOLD: &str = "default";

/// The stored form of a secret: lower-case hex SHA-256. Secrets are 256 random bits, so a fast hash is enough.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// How a request was authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A browser session (the cookie).
    Session(SessionId),
    /// A personal API token.
    Token { id: TokenId, scope: Scope },
}

/// Who is asking: a member of a household, by session or token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    pub household: HouseholdId,
    pub member: MemberId,
    pub role: Role,
    pub access: Access,
}

impl Caller {
    /// Whether the caller may do `what`: their role allows it, and a read-scope token only reads.
    pub fn may(&self, what: Permission) -> bool {
        self.require(what).is_ok()
    }

    /// Refuses what the caller may not do.
    ///
    /// # Errors
    /// [`Error::Forbidden`] naming what is needed.
    pub fn require(&self, what: Permission) -> Result<(), Error> {
        if !self.role.may(what) {
            return Err(Forbidden::Role(what.needs()).into());
        }
        if what != Permission::Read && matches!(self.access, Access::Token { scope: Scope::Read, .. }) {
            return Err(Forbidden::ReadToken.into());
        }
        Ok(())
    }

    fn of(member: &Member, access: Access) -> Self {
        Self { household: member.household, member: member.id, role: member.role, access }
    }
}

/// A new session: the member and the secret for the cookie (shown once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    pub member: Member,
    pub secret: String,
    pub expires_at: Timestamp,
}

/// The failed sign-ins per name key, kept in memory: a restart forgets them, which costs an attacker a restart.
type Failures = Mutex<HashMap<String, Vec<Timestamp>>>;

/// Authenticating requests, signing in and out, and the command line's tokens.
#[derive(Clone)]
pub struct Auth {
    households: Arc<dyn HouseholdRepo>,
    members: Arc<dyn MemberRepo>,
    sessions: Arc<dyn SessionRepo>,
    tokens: Arc<dyn TokenRepo>,
    hasher: Arc<dyn PasswordHasher>,
    secrets: Arc<dyn SecretSource>,
    clock: Arc<dyn Clock>,
    failures: Arc<Failures>,
    /// Recent token checks, so a script's requests do not each read the store.
    token_checks: Arc<TokenChecks>,
    /// A hash of no one's password, checked when the name is unknown so that a failure takes the same time
    /// whether or not the name exists.
    decoy: Arc<OnceCell<String>>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth").finish_non_exhaustive()
    }
}

/// The ports [`Auth`] and [`crate::people::People`] need.
#[derive(Clone)]
pub struct PeoplePorts {
    pub households: Arc<dyn HouseholdRepo>,
    pub members: Arc<dyn MemberRepo>,
    pub invitations: Arc<dyn crate::ports::InvitationRepo>,
    pub sessions: Arc<dyn SessionRepo>,
    pub tokens: Arc<dyn TokenRepo>,
    pub hasher: Arc<dyn PasswordHasher>,
    pub secrets: Arc<dyn SecretSource>,
    pub clock: Arc<dyn Clock>,
    /// The token checks [`Auth`] keeps and [`crate::people::People`] forgets.
    pub token_checks: Arc<TokenChecks>,
}

impl Auth {
    pub fn new(p: &PeoplePorts) -> Self {
        Self {
            households: p.households.clone(),
            members: p.members.clone(),
            sessions: p.sessions.clone(),
            tokens: p.tokens.clone(),
            hasher: p.hasher.clone(),
            secrets: p.secrets.clone(),
            clock: p.clock.clone(),
            failures: Arc::default(),
            token_checks: p.token_checks.clone(),
            decoy: Arc::default(),
        }
    }

    /// Stores `token` (made by the caller from a secure random source) as a write token named `name` of the
    /// first owner of the household called `household`; the household and its owner are created on first use
    /// (the owner is called "`household` owner", or with a number after it when that name is taken, and has no
    /// password: an invitation makes an owner who signs in). Answers the household.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a blank household or token name or a token shorter than 32 characters.
    pub async fn issue(&self, household: &str, name: &str, token: &str) -> Result<HouseholdId, Error> {
        let household = household_name(household)?;
        let name = people::token_name(name).map_err(|e| Error::Invalid(e.to_string()))?;
        if token.len() < 32 {
            return Err(Error::Invalid("a token must be at least 32 characters".into()));
        }
        let id = self.households.ensure_household(&household).await?;
        let owner = self.first_owner(id, &household).await?;
        let now = self.clock.now();
        self.tokens
            .add_token(NewToken {
                member: owner.id,
                household: id,
                hash: hash_token(token),
                name,
                scope: Scope::Write,
                created_at: now,
                expires_at: None,
            })
            .await?;
        Ok(id)
    }

    /// The household's first owner, made when it has none.
    ///
    /// # Errors
    /// `Unexpected` only.
    pub async fn first_owner(&self, household: HouseholdId, household_name: &str) -> Result<Member, Error> {
        if let Some(owner) = self.members.first_owner(household).await? {
            return Ok(owner);
        }
        for n in 1..=100 {
            let base: String = household_name.chars().take(people::NAME_MAX - 10).collect();
            let raw = if n == 1 { format!("{base} owner") } else { format!("{base} owner {n}") };
            let name = MemberName::new(&raw).map_err(|e| Error::Invalid(e.to_string()))?;
            let new =
                NewMember { household, name, role: Role::Owner, password_hash: None, created_at: self.clock.now() };
            match self.members.add_member(new).await {
                Ok(m) => return Ok(m),
                Err(RepoError::Conflict(_)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(Error::Unexpected(anyhow::anyhow!("no free name for the owner of household {household_name:?}")))
    }

    /// The caller a bearer token stands for; `None` for an unknown, revoked or expired token.
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn by_token(&self, token: &str) -> Result<Option<Caller>, Error> {
        if token.is_empty() {
            return Ok(None);
        }
        let hash = hash_token(token);
        let now = self.clock.now();
        let cached = self.token_checks.map().get(&hash).copied();
        if let Some(c) = cached
            && c.checked_at <= now
            && now - c.checked_at < TOKEN_CACHE_TTL
            && people::alive(c.expires_at, now)
        {
            return Ok(Some(c.caller));
        }
        let Some((t, member)) = self.tokens.token(&hash).await? else {
            self.token_checks.map().remove(&hash);
            return Ok(None);
        };
        if !people::alive(t.expires_at, now) {
            return Ok(None);
        }
        if people::needs_touch(t.last_used_at, now) {
            self.tokens.touch_token(t.id, now).await?;
        }
        let caller = Caller::of(&member, Access::Token { id: t.id, scope: t.scope });
        let mut cache = self.token_checks.map();
        if cache.len() >= TOKEN_CACHE_MAX {
            cache.clear();
        }
        cache.insert(hash, CachedToken { caller, checked_at: now, expires_at: t.expires_at });
        Ok(Some(caller))
    }

    /// The caller a session cookie stands for, its use recorded (which slides its expiry); `None` for an
    /// unknown, ended or expired session.
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn by_session(&self, secret: &str) -> Result<Option<Caller>, Error> {
        if secret.is_empty() {
            return Ok(None);
        }
        let Some(s) = self.sessions.session(&hash_token(secret)).await? else { return Ok(None) };
        let now = self.clock.now();
        if !people::alive(Some(people::session_expiry(s.last_seen)), now) {
            return Ok(None);
        }
        if people::needs_touch(Some(s.last_seen), now) {
            self.sessions.touch_session(s.id, now).await?;
        }
        Ok(Some(Caller::of(&s.member, Access::Session(s.id))))
    }

    /// Signs in with a name and password: a new session. A wrong name and a wrong password fail alike and take
    /// the same time (the password is checked against a decoy hash when the name is unknown). After
    /// [`people::THROTTLE_FAILURES`] failures for one name within [`people::THROTTLE_WINDOW`] that name is
    /// refused, right password or not, until the window passes.
    ///
    /// # Errors
    /// [`Error::Throttled`], [`Error::SignInFailed`].
    pub async fn sign_in(&self, name: &str, password: &str) -> Result<SignedIn, Error> {
        let key = name.trim().to_lowercase();
        let now = self.clock.now();
        if let Some(wait) = self.throttled(&key, now) {
            return Err(Error::Throttled { retry_after_secs: u64::try_from(wait.num_seconds()).unwrap_or(0).max(1) });
        }
        let found = match MemberName::new(name) {
            Ok(n) => self.members.member_by_name(&n).await?,
            Err(_) => None,
        };
        let (member, hash) = match found {
            Some((m, Some(h))) => (Some(m), h),
            _ => (None, self.decoy().await?),
        };
        let hasher = self.hasher.clone();
        let password = password.to_owned();
        let right = tokio::task::spawn_blocking(move || hasher.verify(&password, &hash))
            .await
            .context("checking a password")?;
        match member {
            Some(member) if right => {
                self.forget_failures(&key);
                open_session(&*self.sessions, &*self.secrets, member, self.clock.now()).await
            }
            _ => {
                self.record_failure(&key, now);
                Err(Error::SignInFailed)
            }
        }
    }

    /// Ends the caller's session (a token caller has none: nothing happens).
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn sign_out(&self, caller: &Caller) -> Result<(), Error> {
        if let Access::Session(id) = caller.access {
            self.sessions.end_session(id).await?;
        }
        Ok(())
    }

    /// The throttle's key of a name typed at sign-in, refused while the name is throttled (failed sign-ins
    /// with a password and with a passkey count alike).
    ///
    /// # Errors
    /// [`Error::Throttled`].
    pub(crate) fn unthrottled(&self, name: &str, now: Timestamp) -> Result<String, Error> {
        let key = name.trim().to_lowercase();
        if let Some(wait) = self.throttled(&key, now) {
            return Err(Error::Throttled { retry_after_secs: u64::try_from(wait.num_seconds()).unwrap_or(0).max(1) });
        }
        Ok(key)
    }

    /// Counts a failed sign-in for the throttle's `key` (see [`Auth::unthrottled`]).
    pub(crate) fn sign_in_failed(&self, key: &str, now: Timestamp) {
        self.record_failure(key, now);
    }

    /// Forgets the failures of the throttle's `key` after a sign-in succeeded.
    pub(crate) fn signed_in(&self, key: &str) {
        self.forget_failures(key);
    }

    fn throttled(&self, key: &str, now: Timestamp) -> Option<chrono::Duration> {
        let failures = self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        failures.get(key).and_then(|f| people::throttled(f, now))
    }

    fn record_failure(&self, key: &str, now: Timestamp) {
        let mut failures = self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let list = failures.entry(key.to_owned()).or_default();
        list.retain(|f| *f > now - people::THROTTLE_WINDOW);
        list.push(now);
        // Names nobody tried lately are forgotten, so the map does not grow without bound.
        if failures.len() > 10_000 {
            failures.retain(|_, l| l.iter().any(|f| *f > now - people::THROTTLE_WINDOW));
        }
    }

    fn forget_failures(&self, key: &str) {
        self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(key);
    }

    async fn decoy(&self) -> Result<String, Error> {
        let hasher = self.hasher.clone();
        let secrets = self.secrets.clone();
        let decoy = self
            .decoy
            .get_or_try_init(|| async move {
                let secret = secrets.new_secret()?;
                tokio::task::spawn_blocking(move || hasher.hash(&secret)).await.context("hashing the decoy")?
            })
            .await?;
        Ok(decoy.clone())
    }
}

/// A valid household name: trimmed, 1 to 100 characters.
///
/// # Errors
/// [`Error::Invalid`].
pub fn household_name(raw: &str) -> Result<String, Error> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(Error::Invalid("household name must be 1 to 100 characters".into()));
    }
    Ok(name.to_owned())
}

/// Opens a session for `member` at `now`.
pub(crate) async fn open_session(
    sessions: &dyn SessionRepo,
    secrets: &dyn SecretSource,
    member: Member,
    now: Timestamp,
) -> Result<SignedIn, Error> {
    let secret = secrets.new_secret()?;
    sessions.add_session(member.id, &hash_token(&secret), now).await?;
    Ok(SignedIn { member, secret, expires_at: people::session_expiry(now) })
}

/// The member who asks, as the one who makes a change (`Actor`): here rather than in `recorder`, so that the
/// recorder (which the metered model calls use) imports nothing that imports it back.
impl From<&Caller> for crate::recorder::Actor {
    fn from(c: &Caller) -> Self {
        Self { household: c.household, member: Some(c.member) }
    }
}

#[cfg(test)]
pub(crate) mod tests;
