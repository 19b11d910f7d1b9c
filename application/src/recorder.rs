//! Who asks for a change (`Actor`: the member, or `None` for the command line) and the `Recorder` that appends the
//! events the use cases make. Apart from `history`, which reads them, so the use cases that record (`items`) and
//! the history that reverts through them (`history` -> `items`) do not import each other.

use crate::Error;
use crate::ports::people::Member;
use crate::ports::{Clock, EventRepo};
use std::sync::Arc;
use trove_domain::HouseholdId;
use trove_domain::history::{Action, Event, FieldChange, ObjectKind};
use trove_domain::history::{Fields, Recording, between};
use trove_domain::people::{EventId, MemberId};
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
    vec![("name", Some(m.name.to_string())), ("role", Some(m.role.to_string()))]
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
    events: Arc<dyn EventRepo>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    pub fn new(events: Arc<dyn EventRepo>, clock: Arc<dyn Clock>) -> Self {
        Self { events, clock }
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

    /// Records one event of `actor` on an object.
    ///
    /// # Errors
    /// [`Error::Unexpected`] when the store fails (the change it records is written already).
    pub async fn record(
        &self,
        actor: Actor,
        action: Action,
        kind: ObjectKind,
        object: i64,
        changes: Vec<FieldChange>,
        version_after: Option<i64>,
    ) -> Result<EventId, Error> {
        let event = self.event(actor, action, kind, object, changes, version_after);
        Ok(self.events.append(actor.household, &event).await?)
    }

    /// Records many events of `household` at once: one transaction of multi-row writes
    /// ([`EventRepo::append_all`]), all or none. Nothing is written for no events.
    ///
    /// # Errors
    /// As [`Recorder::record`].
    pub async fn record_all(&self, household: HouseholdId, events: &[Event]) -> Result<(), Error> {
        if events.is_empty() {
            return Ok(());
        }
        Ok(self.events.append_all(household, events).await?)
    }

    /// The `create` event of a place made for a `location` text.
    pub fn place_created(&self, actor: Actor, place: &Place) -> Event {
        self.recording(actor, Action::Create).place_created(place)
    }
}

/// The events a test's recorder kept, with their households, in order.
#[cfg(test)]
pub(crate) type Captured = Arc<std::sync::Mutex<Vec<(HouseholdId, Event)>>>;

/// A recorder for use-case tests: every event appended is kept, with its household, in the list answered.
#[cfg(test)]
pub(crate) fn capturing() -> (Recorder, Captured) {
    capturing_at(chrono::DateTime::UNIX_EPOCH)
}

/// As [`capturing`], with a clock that reads `at`.
#[cfg(test)]
pub(crate) fn capturing_at(at: trove_domain::Timestamp) -> (Recorder, Captured) {
    use crate::ports::clock::MockClock;
    use crate::ports::history::MockEventRepo;
    let kept: Captured = Arc::default();
    let mut events = MockEventRepo::new();
    let into = kept.clone();
    events.expect_append().returning(move |h, e| {
        let mut kept = into.lock().unwrap();
        kept.push((h, e.clone()));
        Ok(EventId(kept.len() as i64))
    });
    let into = kept.clone();
    events.expect_append_all().returning(move |h, all| {
        into.lock().unwrap().extend(all.iter().map(|e| (h, e.clone())));
        Ok(())
    });
    let mut clock = MockClock::new();
    clock.expect_now().returning(move || at);
    (Recorder::new(Arc::new(events), Arc::new(clock)), kept)
}
