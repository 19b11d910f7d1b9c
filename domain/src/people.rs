//! People in a household: members and their roles, what each role may do, member names, the password policy,
//! invitations, sessions and API tokens (how long each lives) and the sign-in throttle. Pure rules: time is passed
//! in. The history of changes is `crate::history`.

use crate::Timestamp;
use chrono::Duration;
use std::fmt;

pub use crate::ids::{EventId, InvitationId, MemberId, SessionId, TokenId};

/// What a member may do in the household.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Reads everything; writes nothing and makes no model call.
    Viewer,
    /// Everything on items, places, media, projects, intake and pricing; their own tokens.
    Member,
    /// Everything, plus members, invitations, every member's tokens and the budget.
    Owner,
}

impl Role {
    /// The role's word: `owner`, `member` or `viewer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Member => "member",
            Role::Viewer => "viewer",
        }
    }

    /// Reads a role's word.
    ///
    /// ```
    /// use trove_domain::people::Role;
    /// assert_eq!(Role::parse("viewer"), Some(Role::Viewer));
    /// assert_eq!(Role::parse("admin"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "owner" => Some(Role::Owner),
            "member" => Some(Role::Member),
            "viewer" => Some(Role::Viewer),
            _ => None,
        }
    }

    /// Whether this role may do `what`.
    ///
    /// ```
    /// use trove_domain::people::{Permission, Role};
    /// assert!(Role::Member.may(Permission::WriteInventory));
    /// assert!(!Role::Viewer.may(Permission::CallModel));
    /// assert!(!Role::Member.may(Permission::ManageHousehold));
    /// ```
    pub fn may(self, what: Permission) -> bool {
        self >= what.needs()
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a request does, as far as roles are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// Read anything of the household.
    Read,
    /// Change items, places, media, projects (and anything else but people and the budget).
    WriteInventory,
    /// Make a model call, which spends from the budget.
    CallModel,
    /// Make, list and revoke one's own API tokens; end one's own session.
    OwnTokens,
    /// Members, invitations, every member's tokens and sessions, the budget.
    ManageHousehold,
}

impl Permission {
    /// The least role that may do this.
    pub fn needs(self) -> Role {
        match self {
            Permission::Read | Permission::OwnTokens => Role::Viewer,
            Permission::WriteInventory | Permission::CallModel => Role::Member,
            Permission::ManageHousehold => Role::Owner,
        }
    }
}

/// What an API token may be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Reading only: any request that would change something is refused.
    Read,
    /// Whatever its member's role allows.
    Write,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "read" => Some(Scope::Read),
            "write" => Some(Scope::Write),
            _ => None,
        }
    }
}

/// Why a person's input was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeopleError {
    #[error("name must be 1 to {NAME_MAX} characters")]
    NameLength,
    #[error("name must not contain control characters")]
    NameControl,
    #[error("password must be at least {PASSWORD_MIN} characters")]
    PasswordTooShort,
    #[error("password must be at most {PASSWORD_MAX} characters")]
    PasswordTooLong,
    #[error("token name must be 1 to {TOKEN_NAME_MAX} characters")]
    TokenName,
    #[error("expires_in_days must be between 1 and {TOKEN_DAYS_MAX}")]
    TokenDays,
}

/// The longest member name, in characters.
pub const NAME_MAX: usize = 64;
/// The shortest password, in characters.
pub const PASSWORD_MIN: usize = 12;
/// The longest password, in characters (hashing is the only thing done with it; this bounds that work).
pub const PASSWORD_MAX: usize = 1024;
/// The longest API token name, in characters.
pub const TOKEN_NAME_MAX: usize = 100;
/// The longest invitation code, sign-in name or passkey ceremony id a request may carry: none is that long, so a
/// longer one is refused before any work.
pub const CREDENTIAL_TEXT_MAX: usize = 200;
/// The longest life of an API token, in days.
pub const TOKEN_DAYS_MAX: i64 = 3650;

/// A member's name: what a person signs in with, unique across the instance ignoring case. Trimmed, 1 to
/// [`NAME_MAX`] characters, no control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MemberName(String);

impl MemberName {
    /// ```
    /// use trove_domain::people::MemberName;
    /// let n = MemberName::new("  Ada Lovelace ").unwrap();
    /// assert_eq!((n.as_str(), n.key().as_str()), ("Ada Lovelace", "ada lovelace"));
    /// assert!(MemberName::new("   ").is_err());
    /// ```
    ///
    /// # Errors
    /// [`PeopleError::NameLength`] or [`PeopleError::NameControl`].
    pub fn new(raw: &str) -> Result<Self, PeopleError> {
        let name = raw.trim();
        let n = name.chars().count();
        if n == 0 || n > NAME_MAX {
            return Err(PeopleError::NameLength);
        }
        if name.chars().any(char::is_control) {
            return Err(PeopleError::NameControl);
        }
        Ok(Self(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name as it is compared: lower-cased, so `Ada` and `ada` are one name.
    pub fn key(&self) -> String {
        self.0.to_lowercase()
    }
}

impl fmt::Display for MemberName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The password policy: at least [`PASSWORD_MIN`] characters (and at most [`PASSWORD_MAX`]). Nothing else is
/// asked of it: length is what makes a password strong.
///
/// # Errors
/// [`PeopleError::PasswordTooShort`] or [`PeopleError::PasswordTooLong`].
pub fn check_password(password: &str) -> Result<(), PeopleError> {
    match password.chars().count() {
        n if n < PASSWORD_MIN => Err(PeopleError::PasswordTooShort),
        n if n > PASSWORD_MAX => Err(PeopleError::PasswordTooLong),
        _ => Ok(()),
    }
}

/// A token's name: trimmed, 1 to [`TOKEN_NAME_MAX`] characters, no control characters.
///
/// # Errors
/// [`PeopleError::TokenName`].
pub fn token_name(raw: &str) -> Result<String, PeopleError> {
    let name = raw.trim();
    let n = name.chars().count();
    if n == 0 || n > TOKEN_NAME_MAX || name.chars().any(char::is_control) {
        return Err(PeopleError::TokenName);
    }
    Ok(name.to_owned())
}

/// When a token made at `now` to live `days` days expires (`None`: never).
///
/// # Errors
/// [`PeopleError::TokenDays`] when `days` is outside 1 to [`TOKEN_DAYS_MAX`].
pub fn token_expiry(now: Timestamp, days: Option<i64>) -> Result<Option<Timestamp>, PeopleError> {
    match days {
        None => Ok(None),
        Some(d) if (1..=TOKEN_DAYS_MAX).contains(&d) => Ok(Some(now + Duration::days(d))),
        Some(_) => Err(PeopleError::TokenDays),
    }
}

/// How long an invitation may be used.
pub const INVITATION_VALID_FOR: Duration = Duration::days(7);
/// How long a session lives without being used; every use slides it.
pub const SESSION_IDLE: Duration = Duration::days(30);
/// How often a session's or token's last use is written: a use within this time of the last written one
/// changes nothing, so reading does not write on every request.
pub const TOUCH_EVERY: Duration = Duration::minutes(1);

/// Why an invitation may no longer be accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InvitationGone {
    #[error("no invitation has this code")]
    Unknown,
    #[error("this invitation was already used")]
    Used,
    #[error("this invitation has expired")]
    Expired,
    /// An owner revoked it.
    #[error("this invitation was revoked")]
    Revoked,
    /// The member who made it was removed from the household.
    #[error("the member who made this invitation is no longer in the household")]
    MakerRemoved,
    /// The member who made it no longer holds the role it grants (their role is lower now).
    #[error("the member who made this invitation no longer holds the {0} role it grants")]
    MakerLacksRole(Role),
}

/// Who made an invitation, as the store knows them at the moment the invitation is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maker {
    /// The command line (`trove invite`): whoever runs the instance, who has every right and cannot lose it.
    Instance,
    /// A member still in the household, with the role they hold now.
    Member(Role),
    /// A member who has been removed from the household since.
    Removed,
}

/// An invitation as the rules judge it: the role it grants, when it was made, what became of it, and its maker
/// now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvitationState {
    /// The role the person who accepts it gets.
    pub grants: Role,
    pub created_at: Timestamp,
    /// Accepted already (invitations are one-time).
    pub used: bool,
    /// Revoked by an owner.
    pub revoked: bool,
    pub maker: Maker,
}

/// When an invitation made at `created_at` expires: [`INVITATION_VALID_FOR`] later.
pub fn invitation_expiry(created_at: Timestamp) -> Timestamp {
    created_at + INVITATION_VALID_FOR
}

/// An invitation may be accepted while it is unused, not revoked, younger than [`INVITATION_VALID_FOR`], and
/// its maker still holds at least the role it grants: nobody hands on a right they no longer have, so a removed
/// member's invitations die with them and a demoted owner's owner invitations die with the role. One made from
/// the command line has no member behind it and lives its seven days. A used invitation is answered as used
/// before anything else, so the losers of a race for one are told just that.
///
/// ```
/// use trove_domain::people::{InvitationGone, InvitationState, Maker, Role, check_invitation, INVITATION_VALID_FOR};
/// let made = chrono::Utc::now();
/// let owner_link = InvitationState {
///     grants: Role::Owner,
///     created_at: made,
///     used: false,
///     revoked: false,
///     maker: Maker::Member(Role::Owner),
/// };
/// assert_eq!(check_invitation(&owner_link, made), Ok(()));
/// assert_eq!(check_invitation(&InvitationState { used: true, ..owner_link }, made), Err(InvitationGone::Used));
/// assert_eq!(check_invitation(&owner_link, made + INVITATION_VALID_FOR), Err(InvitationGone::Expired));
/// let demoted = InvitationState { maker: Maker::Member(Role::Viewer), ..owner_link };
/// assert_eq!(check_invitation(&demoted, made), Err(InvitationGone::MakerLacksRole(Role::Owner)));
/// ```
///
/// # Errors
/// [`InvitationGone`] naming the first reason it may not be accepted: used, revoked, expired, its maker
/// removed, or its maker's role now lower than the one it grants.
pub fn check_invitation(invitation: &InvitationState, now: Timestamp) -> Result<(), InvitationGone> {
    if invitation.used {
        return Err(InvitationGone::Used);
    }
    if invitation.revoked {
        return Err(InvitationGone::Revoked);
    }
    if now >= invitation_expiry(invitation.created_at) {
        return Err(InvitationGone::Expired);
    }
    match invitation.maker {
        Maker::Instance => Ok(()),
        Maker::Removed => Err(InvitationGone::MakerRemoved),
        Maker::Member(role) if role < invitation.grants => Err(InvitationGone::MakerLacksRole(invitation.grants)),
        Maker::Member(_) => Ok(()),
    }
}

/// When a session last used at `last_seen` expires.
pub fn session_expiry(last_seen: Timestamp) -> Timestamp {
    last_seen + SESSION_IDLE
}

/// Whether a session or token whose expiry is `expires_at` is still good at `now`.
pub fn alive(expires_at: Option<Timestamp>, now: Timestamp) -> bool {
    expires_at.is_none_or(|e| now < e)
}

/// Whether a use at `now` should be written, the last written one being at `last`.
pub fn needs_touch(last: Option<Timestamp>, now: Timestamp) -> bool {
    last.is_none_or(|l| now - l >= TOUCH_EVERY)
}

/// Failed sign-ins of one name allowed within [`THROTTLE_WINDOW`].
pub const THROTTLE_FAILURES: usize = 5;
/// The window the failures are counted in.
pub const THROTTLE_WINDOW: Duration = Duration::minutes(15);

/// Whether a name whose failed sign-ins happened at `failures` is refused at `now`, and for how long: after
/// [`THROTTLE_FAILURES`] failures within [`THROTTLE_WINDOW`], until the oldest of those leaves the window.
///
/// ```
/// use chrono::Duration;
/// use trove_domain::people::throttled;
/// let now = chrono::Utc::now();
/// let five: Vec<_> = (0..5).map(|i| now - Duration::minutes(10 - i)).collect();
/// assert_eq!(throttled(&five, now), Some(Duration::minutes(5)));
/// assert_eq!(throttled(&five[1..], now), None);
/// ```
pub fn throttled(failures: &[Timestamp], now: Timestamp) -> Option<Duration> {
    let mut recent: Vec<Timestamp> = failures.iter().copied().filter(|f| *f > now - THROTTLE_WINDOW).collect();
    if recent.len() < THROTTLE_FAILURES {
        return None;
    }
    recent.sort_unstable();
    // The failure that, once it leaves the window, leaves fewer than the limit in it.
    let deciding = recent[recent.len() - THROTTLE_FAILURES];
    Some(deciding + THROTTLE_WINDOW - now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(minute: i64) -> Timestamp {
        chrono::Utc.with_ymd_and_hms(2026, 1, 1, 12, 0, 0).unwrap() + Duration::minutes(minute)
    }

    #[test]
    fn what_each_role_may_do() {
        use Permission::*;
        let table = [
            (Role::Owner, [true, true, true, true, true]),
            (Role::Member, [true, true, true, true, false]),
            (Role::Viewer, [true, false, false, true, false]),
        ];
        for (role, expected) in table {
            let got = [Read, WriteInventory, CallModel, OwnTokens, ManageHousehold].map(|p| role.may(p));
            assert_eq!(got, expected, "{role}");
        }
        for role in [Role::Owner, Role::Member, Role::Viewer] {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        assert_eq!(Role::parse("Owner"), None);
        assert_eq!(Scope::parse("read"), Some(Scope::Read));
        assert_eq!(Scope::parse("admin"), None);
    }

    fn check_name(raw: &str, expected: Result<(&str, &str), PeopleError>) {
        let got = MemberName::new(raw);
        assert_eq!(got.map(|n| (n.as_str().to_owned(), n.key())), expected.map(|(a, b)| (a.into(), b.into())));
    }

    #[test]
    fn member_names_are_trimmed_bounded_and_compared_ignoring_case() {
        check_name("Ada", Ok(("Ada", "ada")));
        check_name("  ÉMILE Zola\t", Ok(("ÉMILE Zola", "émile zola")));
        check_name("", Err(PeopleError::NameLength));
        check_name(" \t ", Err(PeopleError::NameLength));
        let longest = "x".repeat(NAME_MAX);
        check_name(&longest, Ok((&longest, &longest)));
        check_name(&"x".repeat(NAME_MAX + 1), Err(PeopleError::NameLength));
        check_name("a\u{0}b", Err(PeopleError::NameControl));
        check_name("a\nb", Err(PeopleError::NameControl));
    }

    #[test]
    fn passwords_need_twelve_characters() {
        assert_eq!(check_password("elevenchars"), Err(PeopleError::PasswordTooShort));
        assert_eq!(check_password("twelve chars"), Ok(()));
        // Characters, not bytes: eleven accented letters are still too short.
        assert_eq!(check_password(&"é".repeat(11)), Err(PeopleError::PasswordTooShort));
        assert_eq!(check_password(&"x".repeat(PASSWORD_MAX + 1)), Err(PeopleError::PasswordTooLong));
    }

    #[test]
    fn tokens_have_a_name_and_an_optional_life() {
        assert_eq!(token_name("  backup script "), Ok("backup script".into()));
        assert_eq!(token_name(""), Err(PeopleError::TokenName));
        assert_eq!(token_name(&"x".repeat(TOKEN_NAME_MAX + 1)), Err(PeopleError::TokenName));
        assert_eq!(token_expiry(at(0), None), Ok(None));
        assert_eq!(token_expiry(at(0), Some(1)), Ok(Some(at(24 * 60))));
        assert_eq!(token_expiry(at(0), Some(0)), Err(PeopleError::TokenDays));
        assert_eq!(token_expiry(at(0), Some(TOKEN_DAYS_MAX + 1)), Err(PeopleError::TokenDays));
    }

    #[test]
    fn invitations_are_one_time_last_seven_days_and_die_with_their_makers_rights() {
        let week = 7 * 24 * 60;
        let open = |grants, maker| InvitationState { grants, created_at: at(0), used: false, revoked: false, maker };
        let check = |invitation: InvitationState, minute: i64, expected: Result<(), InvitationGone>| {
            assert_eq!(check_invitation(&invitation, at(minute)), expected, "{invitation:?} at minute {minute}");
        };
        let owners = Maker::Member(Role::Owner);
        check(open(Role::Member, owners), week - 1, Ok(()));
        check(open(Role::Member, owners), week, Err(InvitationGone::Expired));
        check(InvitationState { used: true, ..open(Role::Member, owners) }, 1, Err(InvitationGone::Used));
        check(InvitationState { revoked: true, ..open(Role::Member, owners) }, 1, Err(InvitationGone::Revoked));
        // Used before anything else: the losers of a race for one invitation are told it was used.
        let used_revoked_expired = InvitationState { used: true, revoked: true, ..open(Role::Owner, Maker::Removed) };
        check(used_revoked_expired, week, Err(InvitationGone::Used));
        check(
            InvitationState { revoked: true, ..open(Role::Owner, Maker::Removed) },
            week,
            Err(InvitationGone::Revoked),
        );
        check(open(Role::Owner, Maker::Removed), week, Err(InvitationGone::Expired));
        // The command line's invitations have no member behind them.
        check(open(Role::Owner, Maker::Instance), 1, Ok(()));
        check(open(Role::Viewer, Maker::Removed), 1, Err(InvitationGone::MakerRemoved));
        check(open(Role::Owner, Maker::Removed), 1, Err(InvitationGone::MakerRemoved));
        // The maker must still hold the role the invitation grants, or a higher one.
        for (maker, grants, expected) in [
            (Role::Owner, Role::Owner, Ok(())),
            (Role::Owner, Role::Viewer, Ok(())),
            (Role::Member, Role::Owner, Err(InvitationGone::MakerLacksRole(Role::Owner))),
            (Role::Member, Role::Member, Ok(())),
            (Role::Viewer, Role::Owner, Err(InvitationGone::MakerLacksRole(Role::Owner))),
            (Role::Viewer, Role::Member, Err(InvitationGone::MakerLacksRole(Role::Member))),
            (Role::Viewer, Role::Viewer, Ok(())),
        ] {
            check(open(grants, Maker::Member(maker)), 1, expected);
        }
        assert_eq!(invitation_expiry(at(0)), at(week));
    }

    #[test]
    fn sessions_slide_and_uses_are_written_at_most_once_a_minute() {
        let month = 30 * 24 * 60;
        assert_eq!(session_expiry(at(5)), at(month + 5));
        assert!(alive(Some(at(10)), at(9)));
        assert!(!alive(Some(at(10)), at(10)));
        assert!(alive(None, at(10)));
        assert!(needs_touch(None, at(0)));
        assert!(!needs_touch(Some(at(0)), at(0) + Duration::seconds(59)));
        assert!(needs_touch(Some(at(0)), at(1)));
    }

    #[test]
    fn five_failures_in_fifteen_minutes_refuse_the_name_until_the_window_passes() {
        let cases: [(&[i64], i64, Option<i64>); 6] = [
            (&[], 0, None),
            (&[0, 1, 2, 3], 4, None),
            (&[0, 1, 2, 3, 4], 4, Some(11)),
            (&[0, 1, 2, 3, 4], 14, Some(1)),
            (&[0, 1, 2, 3, 4], 15, None),
            // A sixth failure keeps the name refused until the second one leaves the window.
            (&[0, 1, 2, 3, 4, 5], 15, Some(1)),
        ];
        for (failures, now, expected) in cases {
            let failures: Vec<Timestamp> = failures.iter().map(|m| at(*m)).collect();
            assert_eq!(throttled(&failures, at(now)), expected.map(Duration::minutes), "{failures:?} at {now}");
        }
    }
}
