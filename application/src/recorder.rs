//! Who asks for a change (`Actor`: the member, or `None` for the command line) and the `Recorder` that appends the
//! events the use cases make. Apart from `history`, which reads them, so the use cases that record (`items`) and
//! the history that reverts through them (`history` -> `items`) do not import each other.

use crate::ports::Clock;
use crate::ports::people::Member;
use std::sync::Arc;
use trove_domain::HouseholdId;
use trove_domain::history::{Action, Event, Field, FieldChange, Fields, ObjectKind, Recording, between};
use trove_domain::people::MemberId;
use trove_domain::place::Place;

/// Who asks for a change: the household it is made in and the member who asked (`None`: the command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor {
    pub household: HouseholdId,
    pub member: Option<MemberId>,
}

impl Actor {
    /// The command line, acting in `household` with no member.
    pub fn command_line(household: HouseholdId) -> Self {
        Self { household, member: None }
    }
}

/// A member's fields as the history shows them: name, role.
pub fn member_fields(m: &Member) -> Fields {
    vec![(Field::Name, Some(m.name.to_string())), (Field::Role, Some(m.role.to_string()))]
}

/// The `join` event of a member who joined their household by an invitation: by themself, when they were added.
/// Written by the store in the transaction that adds them ([`crate::ports::InvitationRepo::redeem`]).
pub fn joined(member: &Member) -> Event {
    let changes = between(None, Some(member_fields(member)));
    Recording::new(member.created_at, Some(member.id), Action::Join).event(
        ObjectKind::Member,
        member.id.0,
        changes,
        None,
    )
}

/// Appends the events of the changes the use cases make.
#[derive(Clone)]
pub struct Recorder {
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self { clock }
    }

    /// Who (`actor`), now, and as which `action`: for a store that writes a write's events in its transaction.
    pub fn recording(&self, actor: Actor, action: Action) -> Recording {
        Recording::new(self.clock.now(), actor.member, action)
    }

    /// The event of one change of `actor` on an object, made now and not yet appended (for
    /// [`Recorder::record_all`]).
    pub fn event(
        &self,
        actor: Actor,
        action: Action,
        kind: ObjectKind,
        object: i64,
        changes: Vec<FieldChange>,
        version_after: Option<i64>,
    ) -> Event {
        self.recording(actor, action).event(kind, object, changes, version_after)
    }

    /// The `create` event of a place made for a `location` text.
    pub fn place_created(&self, actor: Actor, place: &Place) -> Event {
        self.recording(actor, Action::Create).place_created(place)
    }
}

/// The events a test's recorder kept, with their households, in order.
#[cfg(test)]
/// A recorder for use-case tests, with a clock that reads the epoch.
#[cfg(test)]
pub(crate) fn capturing() -> Recorder {
    capturing_at(chrono::DateTime::UNIX_EPOCH)
}

/// A recorder for use-case tests, with a clock that reads `at`.
#[cfg(test)]
pub(crate) fn capturing_at(at: trove_domain::Timestamp) -> Recorder {
    let mut clock = crate::ports::clock::MockClock::new();
    clock.expect_now().returning(move || at);
    Recorder::new(Arc::new(clock))
}
