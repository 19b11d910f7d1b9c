//! `EventRepo`: the history, in `events` (indexed by household, kind and object).

use crate::Store;
use crate::bulk::{PgBulk, SetAside, copy_opt, copy_text};
use crate::entity::events;
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use trove_application::RepoError;
use trove_application::ports::EventRepo;
use trove_domain::HouseholdId;
use trove_domain::history::{Action, Event, ObjectKind};
use trove_domain::people::{EventId, MemberId};

fn event(row: events::Model) -> anyhow::Result<(EventId, Event)> {
    let kind = ObjectKind::parse(&row.object_kind)
        .ok_or_else(|| anyhow!("event {} has an unknown kind {:?}", row.id, row.object_kind))?;
    let action =
        Action::parse(&row.action).ok_or_else(|| anyhow!("event {} has an unknown action {:?}", row.id, row.action))?;
    let changes = serde_json::from_str(&row.changes).with_context(|| format!("event {} has bad changes", row.id))?;
    Ok((
        EventId(row.id),
        Event {
            at: row.at,
            member: row.member_id.map(MemberId),
            action,
            kind,
            object: row.object_id,
            changes,
            version_after: row.version_after,
        },
    ))
}

/// Events per multi-row INSERT of `append_all` on SQLite: 8 bound values each, well under its limit of 32,766
/// bound parameters, so 100,000 events are 100 statements.
const EVENTS_CHUNK: usize = 1_000;

/// Appends `all` on PostgreSQL inside `bulk`, the transaction of the write they record: one `COPY ... FROM
/// STDIN` of every event, in the order given (so the ids grow in that order). Measured at 100,000 events: 10
/// INSERTs of 10,000 rows from arrays took 1.3 s of a release import; the same rows by `COPY` are one statement
/// of a few hundred ms.
pub(crate) async fn copy_events(bulk: &PgBulk, household: HouseholdId, all: &[Event]) -> anyhow::Result<()> {
    if all.is_empty() {
        return Ok(());
    }
    // Many events into a history that holds no more than that (a first import's): the foreign key to the
    // household checks them all at once after the `COPY` instead of one query per event (`SetAside`).
    let set_aside = SetAside::for_load(bulk, "events", all.len()).await?;
    let mut rows = all.iter();
    bulk.copy_in(
        "COPY events (household_id, at, member_id, action, object_kind, object_id, changes, version_after) \
         FROM STDIN",
        |out| {
            let Some(e) = rows.next() else { return Ok(false) };
            let changes = serde_json::to_string(&e.changes).context("encode changes")?;
            out.extend_from_slice(household.0.to_string().as_bytes());
            out.push(b'\t');
            // Microseconds, cut as sqlx cuts a bound time: PostgreSQL would round more digits.
            out.extend_from_slice(e.at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true).as_bytes());
            out.push(b'\t');
            copy_opt(out, e.member.map(|m| m.0.to_string()).as_deref());
            out.push(b'\t');
            copy_text(out, e.action.as_str());
            out.push(b'\t');
            copy_text(out, e.kind.as_str());
            out.push(b'\t');
            out.extend_from_slice(e.object.to_string().as_bytes());
            out.push(b'\t');
            copy_text(out, &changes);
            out.push(b'\t');
            copy_opt(out, e.version_after.map(|v| v.to_string()).as_deref());
            out.push(b'\n');
            Ok(rows.len() > 0)
        },
    )
    .await
    .context("append events")?;
    if let Some(set_aside) = set_aside {
        set_aside.restore(bulk).await?;
    }
    Ok(())
}

/// Appends `event` inside `txn`, the transaction of the write it records (any backend), and answers its id.
pub(crate) async fn insert_event<C: ConnectionTrait>(
    txn: &C,
    household: HouseholdId,
    event: &Event,
) -> anyhow::Result<EventId> {
    Ok(EventId(row(household, event)?.insert(txn).await.context("append event")?.id))
}

/// Appends `all` inside `txn`, the transaction of the writes they record (any backend), by multi-row INSERTs
/// of [`EVENTS_CHUNK`] events, in the order given. Rolls nothing back itself.
pub(crate) async fn insert_events<C: ConnectionTrait>(
    txn: &C,
    household: HouseholdId,
    all: &[Event],
) -> anyhow::Result<()> {
    for chunk in all.chunks(EVENTS_CHUNK) {
        let rows = chunk.iter().map(|e| row(household, e)).collect::<anyhow::Result<Vec<_>>>()?;
        events::Entity::insert_many(rows).exec_without_returning(txn).await.context("append events")?;
    }
    Ok(())
}

/// The row of an event of `household`.
fn row(household: HouseholdId, e: &Event) -> anyhow::Result<events::ActiveModel> {
    Ok(events::ActiveModel {
        household_id: Set(household.0),
        at: Set(e.at),
        member_id: Set(e.member.map(|m| m.0)),
        action: Set(e.action.as_str().to_owned()),
        object_kind: Set(e.kind.as_str().to_owned()),
        object_id: Set(e.object),
        changes: Set(serde_json::to_string(&e.changes).context("encode changes")?),
        version_after: Set(e.version_after),
        ..Default::default()
    })
}

fn events(rows: Vec<events::Model>) -> Result<Vec<(EventId, Event)>, RepoError> {
    Ok(rows.into_iter().map(event).collect::<anyhow::Result<_>>()?)
}

#[async_trait]
impl EventRepo for Store {
    async fn of_object(
        &self,
        household: HouseholdId,
        kind: ObjectKind,
        id: i64,
    ) -> Result<Vec<(EventId, Event)>, RepoError> {
        let rows = events::Entity::find()
            .filter(events::Column::HouseholdId.eq(household.0))
            .filter(events::Column::ObjectKind.eq(kind.as_str()))
            .filter(events::Column::ObjectId.eq(id))
            .order_by_asc(events::Column::Id)
            .all(&self.db)
            .await
            .context("events of an object")?;
        events(rows)
    }

    async fn activity(
        &self,
        household: HouseholdId,
        limit: u32,
        before: Option<EventId>,
    ) -> Result<Vec<(EventId, Event)>, RepoError> {
        let mut query = events::Entity::find().filter(events::Column::HouseholdId.eq(household.0));
        if let Some(before) = before {
            query = query.filter(events::Column::Id.lt(before.0));
        }
        let rows =
            query.order_by_desc(events::Column::Id).limit(u64::from(limit)).all(&self.db).await.context("activity")?;
        events(rows)
    }

    async fn get(&self, household: HouseholdId, id: EventId) -> Result<Event, RepoError> {
        let row = events::Entity::find_by_id(id.0)
            .filter(events::Column::HouseholdId.eq(household.0))
            .one(&self.db)
            .await
            .context("get event")?
            .ok_or(RepoError::NotFound)?;
        Ok(event(row)?.1)
    }
}
