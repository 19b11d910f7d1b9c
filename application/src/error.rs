//! The errors ports and use cases report.

use trove_domain::history::ObjectKind;
use trove_domain::item::{ChangeRefused, GoneRefused};
use trove_domain::listing::ListingError;
use trove_domain::pricing::NotPriceable;
use trove_domain::project::LifecycleError;
use trove_domain::spend::BudgetReached;
use trove_domain::{ItemId, MediaId};

use crate::metered::RunSpend;

/// What a repository port reports besides success.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The object does not exist in this household.
    #[error("not found")]
    NotFound,
    /// A conditional write found the row changed since it was read (another writer got there first).
    #[error("item {0} changed since it was read")]
    Stale(ItemId),
    /// A medium to attach to a new item that is not pending media of the household (unknown, another
    /// household's, or already on an item).
    #[error("media {0} is not pending media of this household")]
    NotPending(MediaId),
    /// A conditional write found the object in another state than the one required: which one, so that use
    /// cases match on it and never read a message.
    #[error(transparent)]
    Conflict(#[from] Conflict),
    /// The store cannot serve the request for now (its disk is full, its server is down or does not answer in
    /// time): the same request may succeed later. Nothing was written. `cause` is for the log.
    #[error("{fault}")]
    Unavailable {
        fault: StorageFault,
        #[source]
        cause: anyhow::Error,
    },
    /// Anything else: the database is unreachable, a row does not map to the domain, ...
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why a store cannot serve a request for now, in the words a client reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StorageFault {
    /// No space is left (`ENOSPC`, a quota).
    #[error("the storage is full")]
    Full,
    /// The storage refuses writes (read-only, its permissions).
    #[error("the storage cannot be written")]
    NotWritable,
    /// The storage server refuses connections or cannot be found.
    #[error("the storage cannot be reached")]
    Unreachable,
    /// The storage server did not answer within its time.
    #[error("the storage did not answer in time")]
    TimedOut,
    /// Any other failure of the storage (an I/O error, a server error).
    #[error("the storage failed")]
    Failed,
}

/// Seconds a client waits before trying again a request that found a store unavailable.
pub const STORAGE_RETRY_AFTER_S: u64 = 10;

/// Tells a storage fault among the causes of an error a store did not classify itself (most of a database
/// adapter's errors reach the use cases as `RepoError::Unexpected` through `?`): the adapter that knows its
/// driver's errors registers one with [`recognise_faults`] when it opens, so a full disk or a database that
/// cannot be reached is answered as unavailable (503, come back later), not as a bug (500).
pub type FaultRecogniser = fn(&(dyn std::error::Error + 'static)) -> Option<StorageFault>;

static RECOGNISERS: std::sync::RwLock<Vec<FaultRecogniser>> = std::sync::RwLock::new(Vec::new());

/// Registers `recognise` (once: registering the same function again does nothing).
pub fn recognise_faults(recognise: FaultRecogniser) {
    let mut all = RECOGNISERS.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !all.iter().any(|r| std::ptr::fn_addr_eq(*r, recognise)) {
        all.push(recognise);
    }
}

/// The storage fault among `cause`'s chain: an I/O error of a full or read-only file system, or one a
/// registered recogniser tells.
#[must_use]
pub fn fault_in(cause: &anyhow::Error) -> Option<StorageFault> {
    let all = RECOGNISERS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    cause.chain().find_map(|e| {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => return Some(StorageFault::Full),
                std::io::ErrorKind::ReadOnlyFilesystem => return Some(StorageFault::NotWritable),
                _ => {}
            }
        }
        all.iter().find_map(|r| r(e))
    })
}

/// The state a store's conditional write found instead of the one it needed. The store says which; the use
/// cases match on it (a use case that has no better answer passes it on as [`Refusal::StateChanged`], whose
/// message is this one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Conflict {
    /// A member of any household already has the name, ignoring case.
    #[error("the name is taken")]
    NameTaken,
    /// The invitation may no longer be accepted (or revoked): used, revoked, expired, or its maker lost the
    /// right to give the role (the domain's [`check_invitation`](trove_domain::people::check_invitation)).
    #[error(transparent)]
    Invitation(trove_domain::people::InvitationGone),
    /// The passkey's credential is registered already (to anyone).
    #[error("this passkey is registered already")]
    CredentialRegistered,
    /// The change would leave the household without an owner.
    #[error("member {0} is the last owner")]
    LastOwner(trove_domain::people::MemberId),
    /// Removing the passkey would leave its member no way to sign in.
    #[error("passkey {0} is the member's last way to sign in")]
    LastWayIn(trove_domain::ids::PasskeyId),
    /// A place still holds present items or places, so it cannot be deleted.
    #[error("place {place} still holds {}; move them out first", holdings(*items, *places))]
    StillHolds { place: trove_domain::PlaceId, items: u64, places: u64 },
    /// A change of the tree of places that its rules refuse under the lock (another writer got there first).
    #[error(transparent)]
    Place(trove_domain::place::PlaceRefused),
    /// A place id that is not a place of the household.
    #[error("no such place {0}")]
    NoSuchPlace(trove_domain::PlaceId),
    /// A step of a project's lifecycle from a status the project is no longer in.
    #[error("project {project} is {is}, not {}", either(expected))]
    ProjectStatus {
        project: trove_domain::ProjectId,
        is: trove_domain::project::ProjectStatus,
        expected: Vec<trove_domain::project::ProjectStatus>,
    },
    /// The reservation of an `Idempotency-Key` no longer holds its key (released, completed, or taken over).
    #[error("the reservation of this Idempotency-Key is no longer held")]
    KeyNotHeld,
    /// A new secret's hash (an invitation code, a token, a ceremony id) is stored already.
    #[error("{0} is already stored")]
    AlreadyStored(&'static str),
    /// A code another present item of the household carries already (codes are unique per household by their
    /// key, so a UPC-A and its EAN-13 are one code): `code` as given (`gtin 4006381333931`), and the item that
    /// holds it, with its name.
    #[error("{code} is already on {name:?} (item {item}); remove it there first")]
    CodeHeld { code: String, item: ItemId, name: String },
}

/// What a place holds, in words: `1 item`, `2 places`, `1 item and 3 places`.
fn holdings(items: u64, places: u64) -> String {
    let count = |n: u64, one: &str, many: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {many}") };
    match (items, places) {
        (0, p) => count(p, "place", "places"),
        (i, 0) => count(i, "item", "items"),
        (i, p) => format!("{} and {}", count(i, "item", "items"), count(p, "place", "places")),
    }
}

/// Statuses as alternatives: `accepted or proposed`.
fn either(statuses: &[trove_domain::project::ProjectStatus]) -> String {
    statuses.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" or ")
}

/// What a use case reports besides success: the variants a caller (the HTTP adapter) branches on, each with the
/// data of what happened, and one opaque `Unexpected` for everything else. The messages are the ones clients
/// read; the HTTP adapter decides the status of each variant (`adapters/http/src/error.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input is malformed or out of bounds; nothing was written. The message names the field.
    #[error("{0}")]
    Invalid(String),
    /// The object does not exist (or belongs to another household).
    #[error("no such {what} {id}")]
    NotFound { what: ObjectKind, id: i64 },
    /// A rule refused the request: the object is not in a state that allows it, or the request as a whole is
    /// not allowed. Nothing was written.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The caller's role or token does not allow this; nothing was done. The message names what is needed.
    #[error(transparent)]
    Forbidden(#[from] Forbidden),
    /// A sign-in with a wrong name or password: the same answer for both.
    #[error("wrong name or password")]
    SignInFailed,
    /// A sign-in with a passkey that was not accepted (unknown, not the name's, or failing a check).
    #[error("the passkey was not accepted")]
    PasskeySignInFailed,
    /// A single sign-on the provider refused or whose answer failed a check (the reason), or that came back to
    /// a browser that did not begin it. Nothing was written.
    #[error("single sign-on failed: {0}")]
    SsoFailed(String),
    /// A single sign-on's answer whose `state` is not the one the browser began with (a forged or crossed
    /// link): a bad request, not a failed sign-in. Nothing was written, and the sign-in begun is still there.
    #[error("single sign-on failed: the sign-in's state is not the one this browser began with")]
    SsoStateMismatch,
    /// Too many failed sign-ins for this name or from this address: refused for `retry_after_secs` more seconds.
    #[error("too many failed sign-ins; try again in {}", wait_text(*retry_after_secs))]
    Throttled { retry_after_secs: u64 },
    /// This month's model budget is spent; nothing was sent.
    #[error(transparent)]
    Budget(#[from] BudgetReached),
    /// The model backend cannot do this; `setting` enables it.
    #[error("{what} needs the Model API: set {setting}")]
    NotConfigured { what: String, setting: &'static str },
    /// The configured model backend does not offer `capability` (its provider profile lacks it); nothing was
    /// sent. The message names it and a provider that has it.
    #[error("{message}")]
    Unavailable { capability: &'static str, message: String },
    /// The model failed (after retries), answered something unusable, or the loop ran out of steps. Nothing was
    /// written but the spend of the calls that were made.
    #[error("{reason}")]
    ModelFailed { reason: String, spend: RunSpend },
    /// The model provider is rate limiting (after the retries that fit in a request): nothing was answered,
    /// the attempt is recorded; the same request may succeed after `retry_after_s` seconds.
    #[error("{reason}")]
    ModelBusy { reason: String, retry_after_s: u64, spend: RunSpend },
    /// The limit of concurrent CPU-heavy jobs is reached and its queue is full (`jobs::Jobs`); nothing ran. The
    /// same request may succeed after `retry_after_s` seconds.
    #[error("the server is busy with other {work}; try again in {retry_after_s} s")]
    Busy { work: &'static str, retry_after_s: u64 },
    /// A store cannot serve the request for now ([`RepoError::Unavailable`]: a full disk, an unreachable S3);
    /// nothing was kept. The same request may succeed after `retry_after_s` seconds; `cause` is for the log.
    #[error("{fault}; try again in {retry_after_s} s")]
    StorageUnavailable {
        fault: StorageFault,
        retry_after_s: u64,
        #[source]
        cause: anyhow::Error,
    },
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// A wait as a person reads it: seconds under a minute, else whole minutes (rounded up).
///
/// ```
/// use trove_application::error::wait_text;
/// assert_eq!(wait_text(1), "1 second");
/// assert_eq!(wait_text(45), "45 seconds");
/// assert_eq!(wait_text(60), "1 minute");
/// assert_eq!(wait_text(896), "15 minutes");
/// ```
pub fn wait_text(secs: u64) -> String {
    match secs {
        0 | 1 => "1 second".to_owned(),
        2..=59 => format!("{secs} seconds"),
        60 => "1 minute".to_owned(),
        _ => format!("{} minutes", secs.div_ceil(60)),
    }
}

/// What a request needs that its caller lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Forbidden {
    /// A role at least this one.
    #[error("this needs the {0} role")]
    Role(trove_domain::people::Role),
    /// A token with the `write` scope (or a session).
    #[error("this needs a token with the write scope; this one may only read")]
    ReadToken,
    /// A backup holds every household of the server: only its operator takes one (`trove backup`) when there
    /// are others than the caller's.
    #[error(
        "a backup holds every household on this server, not only yours: the server's operator takes it with `trove backup`"
    )]
    OtherHouseholds,
    /// A single sign-on account that no mapped group and no invitation brings into a household (or a member a
    /// group brought in who is in none of them any more).
    #[error("this account has no place here: ask a household's owner for an invitation and sign in from its link")]
    NoSsoAccess,
    /// Passwords are turned off (`TROVE_OIDC_ONLY`): people sign in with the OpenID provider.
    #[error("passwords are turned off here: sign in with the single sign-on button")]
    PasswordsOff,
}

/// The rule that refused a request, with its data. The message is the rule's own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A change of an item (or anything recorded on it) the item's rules refuse.
    #[error(transparent)]
    Change(#[from] ChangeRefused),
    /// Marking an item gone: it is reserved, or already gone.
    #[error(transparent)]
    Gone(#[from] GoneRefused),
    /// A step of a project's lifecycle: the project is in another status, or an item no longer fits.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    /// Pricing an item that is gone.
    #[error(transparent)]
    NotPriceable(#[from] NotPriceable),
    /// A listing draft or share text for an item meant for something else, or gone.
    #[error(transparent)]
    Listing(#[from] ListingError),
    /// A change of the tree of places: a move that would make a cycle, under a missing place, or a name a
    /// sibling already has.
    #[error(transparent)]
    Place(#[from] trove_domain::place::PlaceRefused),
    /// A bulk change one of its items' rules refuses (the item and the reason).
    #[error(transparent)]
    Bulk(#[from] trove_domain::bulk::BulkRefused),
    /// A component that is not an item of the household.
    #[error("component {0} is not an item of this household")]
    ForeignComponent(ItemId),
    /// A medium to attach to a new item that is not pending media of the household: unknown, another
    /// household's, or already on an item.
    #[error("media {0} is not pending media of this household (unknown, or already on an item)")]
    NotPendingMedia(MediaId),
    /// An item of a project being accepted changed between the check and the reservation.
    #[error("item {0} is no longer buildable (it changed while accepting)")]
    ChangedWhileAccepting(ItemId),
    /// An item changed under every attempt of a conditional write.
    #[error("item {0} changed while this request ran; try again")]
    Stale(ItemId),
    /// A conditional write found the object in another state than the one required ([`RepoError::Conflict`]),
    /// where the use case has no more particular refusal.
    #[error(transparent)]
    StateChanged(Conflict),
    /// An image with a side under `min` pixels: too small to hold an item (checked before any other work).
    #[error("the image is {width} x {height} pixels; at least {min} x {min} are needed to hold an item")]
    ImageTooSmall { width: u32, height: u32, min: u32 },
    /// An invitation that was used or has expired.
    #[error(transparent)]
    InvitationGone(#[from] trove_domain::people::InvitationGone),
    /// A change that would leave the household without an owner: `name` is that owner's.
    #[error("{name:?} is the household's last owner; make another member owner first")]
    LastOwner { member: trove_domain::people::MemberId, name: String },
    /// A place, named as its owner calls it, still holds present items or places, so it cannot be deleted.
    #[error("{name:?} still holds {}; move them out first", holdings(*items, *places))]
    PlaceStillHolds { name: String, items: u64, places: u64 },
    /// A member name someone already has (names are unique across the instance, ignoring case).
    #[error("the name {0:?} is taken; choose another")]
    NameTaken(String),
    /// A passkey ceremony that is unknown, expired, already finished or not the caller's.
    #[error("no passkey ceremony has this id, or it expired; start again")]
    CeremonyGone,
    /// A single sign-on that is unknown, expired or already finished (its `state`).
    #[error("this single sign-on is unknown, expired or already finished; start again")]
    SsoSignInGone,
    /// A new passkey that failed WebAuthn's checks (the reason), or is already registered.
    #[error("the passkey was not accepted: {0}")]
    PasskeyRefused(String),
    /// Removing a member's last passkey when they have no password: they could no longer sign in.
    #[error("passkey {0} is the last way this member signs in; add another passkey first")]
    LastWayIn(trove_domain::ids::PasskeyId),
    /// A voice note whose transcript is empty.
    #[error("the voice note holds no speech to read")]
    NoSpeech,
    /// An `Idempotency-Key` already answered for a request with another body or scope.
    #[error("this Idempotency-Key was used for a different request")]
    KeyUsedElsewhere,
    /// An undo the rule refuses: not a change of an item's fields, or the item changed since.
    #[error(transparent)]
    Undo(#[from] trove_domain::history::UndoRefused),
    /// An `Idempotency-Key` held by a request that is still running.
    #[error("a request with this Idempotency-Key is still running")]
    KeyRunning,
    /// "Refresh values" is already running for the household: one at a time.
    #[error("values are already being refreshed: stop that run or wait for it to end")]
    RefreshRunning,
    /// A loan the lending rules refuse.
    #[error(transparent)]
    Loan(#[from] trove_domain::loan::LoanRefused),
    /// A schedule, or maintenance done, the rules refuse.
    #[error(transparent)]
    Schedule(#[from] trove_domain::loan::ScheduleRefused),
    /// A reminder channel that is not one (an address, a URL, a lead time).
    #[error(transparent)]
    Channel(#[from] trove_domain::notify::ChannelRefused),
    /// Returning a loan that was returned already.
    #[error("loan {0} was returned already")]
    AlreadyReturned(trove_domain::ids::LoanId),
    /// A change conditional on the version the client read (`If-Match`) of an item now at another version.
    /// `expected` lists the versions the client named (none: its tags name no version, such as a weak tag).
    #[error("item {item} is at version {current}, not {}; read it again", versions_named(expected))]
    VersionMismatch { item: ItemId, expected: Vec<i64>, current: i64 },
}

/// The versions a precondition named, as a message says them: "3", "3 or 4", "the one named".
fn versions_named(versions: &[i64]) -> String {
    match versions {
        [] => "the one If-Match named".to_owned(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
    }
}

impl From<RepoError> for Error {
    /// A repository's `NotFound` reaches a caller through [`named`], which says what was missing; one that
    /// arrives unnamed is a port breaking its contract, and so unexpected.
    fn from(e: RepoError) -> Self {
        match e {
            RepoError::NotFound => {
                Error::Unexpected(anyhow::anyhow!("a store answered not found for an object the use case did not name"))
            }
            RepoError::Stale(item) => Refusal::Stale(item).into(),
            RepoError::NotPending(media) => Refusal::NotPendingMedia(media).into(),
            RepoError::Conflict(c) => Refusal::StateChanged(c).into(),
            RepoError::Unavailable { fault, cause } => {
                Error::StorageUnavailable { fault, retry_after_s: STORAGE_RETRY_AFTER_S, cause }
            }
            RepoError::Unexpected(cause) => match fault_in(&cause) {
                Some(fault) => Error::StorageUnavailable { fault, retry_after_s: STORAGE_RETRY_AFTER_S, cause },
                None => Error::Unexpected(cause),
            },
        }
    }
}

/// Turns a repository `NotFound` into a use-case `NotFound` naming the object.
pub(crate) fn named(what: ObjectKind, id: i64) -> impl Fn(RepoError) -> Error {
    move |e| match e {
        RepoError::NotFound => Error::NotFound { what, id },
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error a store did not classify is unavailable when its causes hold a full disk (an I/O error) or
    /// what a registered recogniser tells; anything else stays unexpected.
    #[test]
    fn storage_faults_among_the_causes_are_unavailable_not_unexpected() {
        let full = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::StorageFull)).context("write a blob");
        let err = Error::from(RepoError::Unexpected(full));
        assert!(matches!(err, Error::StorageUnavailable { fault: StorageFault::Full, .. }), "{err:?}");

        #[derive(Debug, thiserror::Error)]
        #[error("driver says: no more pages")]
        struct DriverFull;
        fn driver(e: &(dyn std::error::Error + 'static)) -> Option<StorageFault> {
            e.downcast_ref::<DriverFull>().map(|_| StorageFault::Full)
        }
        let unregistered = Error::from(RepoError::Unexpected(anyhow::Error::new(DriverFull).context("insert")));
        assert!(matches!(unregistered, Error::Unexpected(_)), "{unregistered:?}");
        recognise_faults(driver);
        recognise_faults(driver);
        assert_eq!(
            RECOGNISERS.read().unwrap().iter().filter(|r| std::ptr::fn_addr_eq(**r, driver as FaultRecogniser)).count(),
            1
        );
        let recognised = Error::from(RepoError::Unexpected(anyhow::Error::new(DriverFull).context("insert")));
        assert!(matches!(recognised, Error::StorageUnavailable { fault: StorageFault::Full, .. }), "{recognised:?}");
        let other = Error::from(RepoError::Unexpected(anyhow::anyhow!("a row does not map")));
        assert!(matches!(other, Error::Unexpected(_)), "{other:?}");
    }
    use trove_domain::people::{InvitationGone, MemberId};
    use trove_domain::project::ProjectStatus;
    use trove_domain::{PlaceId, ProjectId};

    /// A conflict a use case passes on is what the client reads: each says which state stood in the way.
    #[test]
    fn conflicts_read_as_what_stood_in_the_way() {
        let check = |conflict: Conflict, expected: &str| {
            assert_eq!(Error::from(RepoError::Conflict(conflict.clone())).to_string(), expected, "{conflict:?}");
        };
        check(
            Conflict::StillHolds { place: PlaceId(4), items: 0, places: 1 },
            "place 4 still holds 1 place; move them out first",
        );
        check(
            Conflict::StillHolds { place: PlaceId(4), items: 3, places: 0 },
            "place 4 still holds 3 items; move them out first",
        );
        check(
            Conflict::StillHolds { place: PlaceId(4), items: 1, places: 2 },
            "place 4 still holds 1 item and 2 places; move them out first",
        );
        check(
            Conflict::ProjectStatus {
                project: ProjectId(2),
                is: ProjectStatus::Built,
                expected: vec![ProjectStatus::Proposed, ProjectStatus::Accepted],
            },
            "project 2 is built, not proposed or accepted",
        );
        check(Conflict::NoSuchPlace(PlaceId(9)), "no such place 9");
        check(Conflict::KeyNotHeld, "the reservation of this Idempotency-Key is no longer held");
        check(Conflict::Invitation(InvitationGone::Used), "this invitation was already used");
        check(Conflict::LastOwner(MemberId(3)), "member 3 is the last owner");
        check(Conflict::AlreadyStored("the token"), "the token is already stored");
        assert!(matches!(
            Error::from(RepoError::Conflict(Conflict::NameTaken)),
            Error::Refused(Refusal::StateChanged(Conflict::NameTaken))
        ));
    }
}
