//! Who is asking: API tokens and browser sessions, signing in with a password (throttled), and the tokens the
//! command line issues. Secrets are shown once and stored as SHA-256 hashes only.

use crate::error::Forbidden;
use crate::jobs::Jobs;
use crate::ports::people::{Member, NewMember, NewToken};
use crate::ports::{
    AccessChange, AccessChanges, Clock, HouseholdRepo, MemberRepo, PasswordHasher, SecretSource, SessionRepo,
    SignInFailures, TokenRepo,
};
use crate::{Conflict, Error, RepoError};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;
use trove_domain::people::{self, MemberId, MemberName, Permission, Role, Scope, SessionId, TokenId};
use trove_domain::throttle::{self, ClientAddress};
use trove_domain::{HouseholdId, Timestamp};

/// How long a token's check is reused without asking the store when changes are not pushed between processes
/// (SQLite): a revoked or expired token, or a changed role, takes effect on another process within this time.
pub const TOKEN_CACHE_TTL: chrono::Duration = chrono::Duration::seconds(1);
/// How long a token's check is reused when every process hears of changes as they happen (PostgreSQL): only a
/// bound for a change missed while the connection that hears them was down (it forgets every check when it
/// comes back).
pub const TOKEN_CACHE_TTL_PUSHED: chrono::Duration = chrono::Duration::seconds(30);
/// The most token checks kept; past it the cache starts again empty (a bound, not an eviction policy).
const TOKEN_CACHE_MAX: usize = 10_000;

/// How long a refused sign-in (throttled, or beyond the hashing queue) is held before its answer. A client that
/// waits for each answer before its next sign-in, as every HTTP client does on one connection, sends at most one
/// a second per connection however it treats `Retry-After`; the held answer costs a timer, nothing else.
pub const REFUSAL_HOLD: std::time::Duration = std::time::Duration::from_secs(1);

/// A token check kept for [`TokenChecks::ttl`], by the token's hash.
#[derive(Debug, Clone, Copy)]
struct CachedToken {
    caller: Caller,
    checked_at: Timestamp,
    expires_at: Option<Timestamp>,
}

/// Recent token checks, shared by [`Auth`] (which fills it) and [`crate::people::People`] (which ends a revoked
/// token or a changed member's tokens at once: here, and through the [`AccessChanges`] port on every other
/// process on the database, which forgets them as it hears of it).
#[derive(Default)]
pub struct TokenChecks {
    map: Mutex<HashMap<String, CachedToken>>,
    /// Counts the forgettings: a check read from the store is kept only when none happened while it was read,
    /// so a check that raced a revocation is not kept after it.
    generation: AtomicU64,
    /// How changes reach the other processes; `None`: they do not (a single process, or tests).
    announcer: Option<Arc<dyn AccessChanges>>,
}

impl std::fmt::Debug for TokenChecks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenChecks").field("generation", &self.generation()).finish_non_exhaustive()
    }
}

impl TokenChecks {
    /// Token checks whose endings are announced to the other processes by `announcer`.
    pub fn announced_by(announcer: Arc<dyn AccessChanges>) -> Self {
        Self { announcer: Some(announcer), ..Self::default() }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, CachedToken>> {
        self.map.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How long a check is reused: [`TOKEN_CACHE_TTL_PUSHED`] when changes are pushed, else
    /// [`TOKEN_CACHE_TTL`].
    pub fn ttl(&self) -> chrono::Duration {
        match &self.announcer {
            Some(a) if a.pushed() => TOKEN_CACHE_TTL_PUSHED,
            _ => TOKEN_CACHE_TTL,
        }
    }

    /// How many times checks were forgotten so far (each change heard counts).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Forgets the checks `change` ends, in this process only (a change heard from another process).
    pub fn forget(&self, change: AccessChange) {
        let mut map = self.map();
        match change {
            AccessChange::Token(id) => {
                map.retain(|_, c| !matches!(c.caller.access, Access::Token { id: t, .. } if t == id));
            }
            AccessChange::Member(member) => map.retain(|_, c| c.caller.member != member),
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Forgets every check (the changes of a while may have been missed).
    pub fn forget_all(&self) {
        self.map().clear();
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Ends the checks `change` ends here and on every other process (after the change is committed). A failed
    /// announcement is logged: the other processes then forget within [`TokenChecks::ttl`].
    pub async fn end(&self, change: AccessChange) {
        self.forget(change);
        if let Some(a) = &self.announcer
            && let Err(e) = a.announce(change).await
        {
            tracing::warn!(error = %e, change = %change.to_text(), "could not tell other processes of an access change");
        }
    }

    /// Keeps `check` of the token `hash` unless checks were forgotten since `generation` was read.
    fn keep(&self, hash: String, check: CachedToken, generation: u64) {
        let mut map = self.map();
        if self.generation() != generation {
            return;
        }
        if map.len() >= TOKEN_CACHE_MAX {
            map.clear();
        }
        map.insert(hash, check);
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

/// The longest name key the throttle stores: longer texts are no member's name, and their keys are cut here.
const THROTTLE_KEY_MAX: usize = 4 * people::NAME_MAX;

/// The throttle's key of a name typed at sign-in: lower-cased, cut to [`THROTTLE_KEY_MAX`] characters, control
/// characters (which no name has, and PostgreSQL's text refuses as NUL) replaced, so any text can be counted.
///
/// ```
/// # use trove_application::auth::throttle_key;
/// assert_eq!(throttle_key(" Ada "), "ada");
/// assert_eq!(throttle_key("a\0b"), "a\u{fffd}b");
/// assert_eq!(throttle_key(&"x".repeat(10_000)).chars().count(), 4 * trove_domain::people::NAME_MAX);
/// ```
pub fn throttle_key(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .chars()
        .take(THROTTLE_KEY_MAX)
        .map(|c| if c.is_control() { char::REPLACEMENT_CHARACTER } else { c })
        .collect()
}

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
    /// The failed sign-ins, in the database: one throttle for every process, kept across restarts.
    failures: Arc<dyn SignInFailures>,
    /// The limit of password hashes computed at once (each Argon2id takes 19 MiB): a flood of sign-ins waits in
    /// a short queue or is refused, instead of exhausting memory.
    hashing: Jobs,
    /// Recent token checks, so a script's requests do not each read the store.
    token_checks: Arc<TokenChecks>,
    /// A hash of no one's password, checked when the name is unknown so that a failure takes the same time
    /// whether or not the name exists.
    decoy: Arc<OnceCell<String>>,
    /// Passwords turned off (`TROVE_OIDC_ONLY`): a password sign-in is refused before anything is read.
    passwords_off: bool,
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
    /// The failed sign-ins the throttle counts.
    pub failures: Arc<dyn SignInFailures>,
    /// The gate every password hash passes (sign-in, the decoy, a new member's password).
    pub hashing: Jobs,
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
            failures: p.failures.clone(),
            hashing: p.hashing.clone(),
            token_checks: p.token_checks.clone(),
            decoy: Arc::default(),
            passwords_off: false,
        }
    }

    /// Whether names and passwords sign in here.
    pub fn passwords_on(&self) -> bool {
        !self.passwords_off
    }

    /// The same; with `on` false (`TROVE_OIDC_ONLY`), refusing every sign-in with a password ([`Forbidden::PasswordsOff`]): people sign in with the
    /// OpenID provider (or a passkey).
    #[must_use]
    pub fn with_passwords(mut self, on: bool) -> Self {
        self.passwords_off = !on;
        self
    }

    /// Makes a write token named `name` for the first owner of the household called `household` and answers the
    /// household and the token (shown once; only its hash is stored). The household and its owner are created on
    /// first use (the owner is called "`household` owner", or with a number after it when that name is taken,
    /// and has no password: an invitation makes an owner who signs in).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a blank household or token name.
    pub async fn issue(&self, household: &str, name: &str) -> Result<(HouseholdId, String), Error> {
        let household = household_name(household)?;
        let name = people::token_name(name).map_err(|e| Error::Invalid(e.to_string()))?;
        let token = new_api_token(&*self.secrets)?;
        let id = self.households.ensure_household(&household).await?;
        let owner = self.first_owner(id, &household).await?;
        let now = self.clock.now();
        self.tokens
            .add_token(NewToken {
                member: owner.id,
                household: id,
                hash: hash_token(&token),
                name,
                scope: Scope::Write,
                created_at: now,
                expires_at: None,
            })
            .await?;
        Ok((id, token))
    }

    /// The token checks this process keeps (and forgets as it hears of changes).
    pub fn token_checks(&self) -> &TokenChecks {
        &self.token_checks
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
                Err(RepoError::Conflict(Conflict::NameTaken)) => continue,
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
            && now - c.checked_at < self.token_checks.ttl()
            && people::alive(c.expires_at, now)
        {
            return Ok(Some(c.caller));
        }
        let generation = self.token_checks.generation();
        let Some((t, member)) = self.tokens.token(&hash).await? else {
            self.token_checks.map().remove(&hash);
            return Ok(None);
        };
        if !people::alive(t.expires_at, now) {
            return Ok(None);
        }
        // The last-used stamp is best effort: a full disk must not refuse reads.
        if people::needs_touch(t.last_used_at, now)
            && let Err(e) = self.tokens.touch_token(t.id, now).await
        {
            tracing::warn!(error = %e, token = %t.id, "could not stamp a token's last use");
        }
        let caller = Caller::of(&member, Access::Token { id: t.id, scope: t.scope });
        self.token_checks.keep(hash, CachedToken { caller, checked_at: now, expires_at: t.expires_at }, generation);
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
        // The last-seen stamp (which slides the expiry) is best effort: a full disk must not refuse reads.
        if people::needs_touch(Some(s.last_seen), now)
            && let Err(e) = self.sessions.touch_session(s.id, now).await
        {
            tracing::warn!(error = %e, session = %s.id, "could not stamp a session's last use");
        }
        Ok(Some(Caller::of(&s.member, Access::Session(s.id))))
    }

    /// Signs in with a name and password from the client address `from`: a new session. A wrong name and a
    /// wrong password fail alike and take the same time (the password is checked against a decoy hash when the
    /// name is unknown). The throttle ([`trove_domain::throttle`]) refuses a name after repeated failures from
    /// one address, an address after failures under many names, and a name under attack from many addresses to
    /// the addresses that failed, so a stranger cannot lock a member out. The password is checked under the
    /// hashing limit.
    ///
    /// A refusal (throttled, or too many sign-ins being checked) is held for [`REFUSAL_HOLD`] before it is
    /// answered, holding no turn and no memory: a flood that ignores `Retry-After` is paced by its own waiting, so
    /// it cannot take the cores from the other requests.
    ///
    /// # Errors
    /// [`Error::Throttled`], [`Error::SignInFailed`], [`Error::Busy`] when too many sign-ins are being checked.
    pub async fn sign_in(&self, name: &str, password: &str, from: &ClientAddress) -> Result<SignedIn, Error> {
        if self.passwords_off {
            return Err(Forbidden::PasswordsOff.into());
        }
        let answer = self.check_sign_in(name, password, from).await;
        if matches!(answer, Err(Error::Busy { .. } | Error::Throttled { .. })) {
            tokio::time::sleep(REFUSAL_HOLD).await;
        }
        answer
    }

    async fn check_sign_in(&self, name: &str, password: &str, from: &ClientAddress) -> Result<SignedIn, Error> {
        let now = self.clock.now();
        // The decoy is made once per process, before this sign-in holds a turn to hash.
        let decoy = self.decoy().await?;
        // A turn to hash first: in a flood, the sign-ins beyond the queue are refused before they read anything.
        let turn = self.hashing.admit()?;
        let key = self.unthrottled(name, from, now).await?;
        let found = match MemberName::new(name) {
            Ok(n) => self.members.member_by_name(&n).await?,
            Err(_) => None,
        };
        let (member, hash) = match found {
            Some((m, Some(h))) => (Some(m), h),
            _ => (None, decoy),
        };
        let hasher = self.hasher.clone();
        let password = password.to_owned();
        let right = turn.run(move || hasher.verify(&password, &hash)).await?;
        match member {
            Some(member) if right => {
                self.signed_in(&key, from).await?;
                open_session(&*self.sessions, &*self.secrets, member, self.clock.now()).await
            }
            _ => {
                self.sign_in_failed(&key, from, now).await?;
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

    /// The throttle's key of a name typed at sign-in from `from`, refused while the throttle says wait (failed
    /// sign-ins with a password and with a passkey count alike).
    ///
    /// # Errors
    /// [`Error::Throttled`]; `Unexpected` when the store fails.
    pub(crate) async fn unthrottled(&self, name: &str, from: &ClientAddress, now: Timestamp) -> Result<String, Error> {
        let key = throttle_key(name);
        let since = now - people::THROTTLE_WINDOW;
        let recent = self.failures.recent_failures(&key, from, since, throttle::MOST_READ).await?;
        if let Some(wait) = throttle::wait(&recent, now) {
            return Err(Error::Throttled { retry_after_secs: u64::try_from(wait.num_seconds()).unwrap_or(0).max(1) });
        }
        Ok(key)
    }

    /// Counts a failed sign-in for the throttle's `key` from `from` (see [`Auth::unthrottled`]).
    ///
    /// # Errors
    /// `Unexpected` when the store fails.
    pub(crate) async fn sign_in_failed(&self, key: &str, from: &ClientAddress, now: Timestamp) -> Result<(), Error> {
        self.failures.record_failure(key, from, now, now - people::THROTTLE_WINDOW).await?;
        Ok(())
    }

    /// Forgets the failures of the throttle's `key` from `from` after a sign-in from there succeeded.
    ///
    /// # Errors
    /// `Unexpected` when the store fails.
    pub(crate) async fn signed_in(&self, key: &str, from: &ClientAddress) -> Result<(), Error> {
        self.failures.forget_failures(key, from).await?;
        Ok(())
    }

    async fn decoy(&self) -> Result<String, Error> {
        let hasher = self.hasher.clone();
        let secrets = self.secrets.clone();
        let hashing = self.hashing.clone();
        let decoy = self
            .decoy
            .get_or_try_init(|| async move {
                let secret = secrets.new_secret()?;
                Ok::<_, Error>(hashing.run(move || hasher.hash(&secret)).await??)
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

/// What every API token starts with, so that one is told from a session's secret at a glance and a leaked one
/// is found by secret scanners.
pub const API_TOKEN_PREFIX: &str = "trove_";

/// **The** format of a new API token: [`API_TOKEN_PREFIX`] and a fresh secret.
///
/// # Errors
/// When `secrets` gives none.
pub(crate) fn new_api_token(secrets: &dyn SecretSource) -> anyhow::Result<String> {
    Ok(format!("{API_TOKEN_PREFIX}{}", secrets.new_secret()?))
}

/// The invitation with this code hash, if it may still be accepted at `now`: checked before anything is worked
/// out or written (the store judges it again as it writes).
///
/// # Errors
/// [`Refusal::InvitationGone`](crate::Refusal::InvitationGone) for an unknown code or one that was used, revoked
/// or has expired, or whose maker was removed or no longer holds the role it grants.
pub(crate) async fn usable_invitation(
    invitations: &dyn crate::ports::InvitationRepo,
    hash: &str,
    now: Timestamp,
) -> Result<crate::ports::people::Invitation, Error> {
    let invitation =
        invitations.invitation(hash).await?.ok_or(crate::Refusal::InvitationGone(people::InvitationGone::Unknown))?;
    people::check_invitation(&invitation.state(), now).map_err(crate::Refusal::from)?;
    Ok(invitation)
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
