//! The errors ports and use cases report.

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
    /// A conditional write found the object in another state than the one required.
    #[error("{0}")]
    Conflict(String),
    /// Anything else: the database is unreachable, a row does not map to the domain, ...
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
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
    NotFound { what: Object, id: i64 },
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
    /// Too many failed sign-ins for this name: refused for `retry_after_secs` more seconds.
    #[error("too many failed sign-ins for this name; try again in {retry_after_secs} seconds")]
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
    /// The limit of concurrent CPU-heavy jobs is reached and its queue is full (`jobs::Jobs`); nothing ran. The
    /// same request may succeed after `retry_after_s` seconds.
    #[error("the server is busy with other images; try again in {retry_after_s} s")]
    Busy { retry_after_s: u64 },
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// The kinds of objects a request names by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Object {
    Item,
    Project,
    Template,
    Place,
    Media,
    Member,
    Invitation,
    Token,
    Event,
    Passkey,
}

impl std::fmt::Display for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Object::Item => "item",
            Object::Project => "project",
            Object::Template => "template",
            Object::Place => "place",
            Object::Media => "media",
            Object::Member => "member",
            Object::Invitation => "invitation",
            Object::Token => "token",
            Object::Event => "event",
            Object::Passkey => "passkey",
        })
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
    /// A conditional write found the object in another state than the one required, in the store's words
    /// ([`RepoError::Conflict`]).
    #[error("{0}")]
    StateChanged(String),
    /// An image with a side under `min` pixels: too small to hold an item (checked before any other work).
    #[error("the image is {width} x {height} pixels; at least {min} x {min} are needed to hold an item")]
    ImageTooSmall { width: u32, height: u32, min: u32 },
    /// An invitation that was used or has expired.
    #[error(transparent)]
    InvitationGone(#[from] trove_domain::people::InvitationGone),
    /// A change that would leave the household without an owner.
    #[error("member {0} is the household's last owner; make another member owner first")]
    LastOwner(trove_domain::people::MemberId),
    /// A member name someone already has (names are unique across the instance, ignoring case).
    #[error("the name {0:?} is taken; choose another")]
    NameTaken(String),
    /// A passkey ceremony that is unknown, expired, already finished or not the caller's.
    #[error("no passkey ceremony has this id, or it expired; start again")]
    CeremonyGone,
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
    Undo(#[from] trove_domain::people::UndoRefused),
    /// An `Idempotency-Key` held by a request that is still running.
    #[error("a request with this Idempotency-Key is still running")]
    KeyRunning,
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
            RepoError::Conflict(m) => Refusal::StateChanged(m).into(),
            RepoError::Unexpected(e) => Error::Unexpected(e),
        }
    }
}

/// Turns a repository `NotFound` into a use-case `NotFound` naming the object.
pub(crate) fn named(what: Object, id: i64) -> impl Fn(RepoError) -> Error {
    move |e| match e {
        RepoError::NotFound => Error::NotFound { what, id },
        other => other.into(),
    }
}
