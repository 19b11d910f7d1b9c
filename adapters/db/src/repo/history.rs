//! `EventRepo`: the history, in `events` (indexed by household, kind and object).

use crate::Store;
use crate::entity::events;
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::sqlx;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, DbBackend, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use trove_application::RepoError;
use trove_application::ports::EventRepo;
use trove_domain::people::{Event, EventId, MemberId, ObjectKind};
use trove_domain::{HouseholdId, Timestamp};

fn event(row: events::Model) -> anyhow::Result<(EventId, Event)> {
    let kind = ObjectKind::parse(&row.object_kind)
        .ok_or_else(|| anyhow!("event {} has an unknown kind {:?}", row.id, row.object_kind))?;
    let changes = serde_json::from_str(&row.changes).with_context(|| format!("event {} has bad changes", row.id))?;
    Ok((
        EventId(row.id),
        Event {
            at: row.at,
            member: row.member_id.map(MemberId),
            action: row.action,
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

/// Events per INSERT of `append_all` on PostgreSQL, where each column goes as one array (8 bound values a
/// statement, whatever the rows): binding 8,000 values a statement one by one took 3.6 s for 100,000 events.
const PG_EVENTS_CHUNK: usize = 10_000;

/// `append_all` on PostgreSQL: each chunk one INSERT of its rows from the columns as arrays, in the order given
/// (`WITH ORDINALITY`, so the ids grow in that order), all in one transaction.
async fn append_all_pg(pool: &sqlx::PgPool, household: HouseholdId, all: &[Event]) -> anyhow::Result<()> {
    let mut txn = pool.begin().await.context("begin appending events")?;
    for chunk in all.chunks(PG_EVENTS_CHUNK) {
        let at: Vec<Timestamp> = chunk.iter().map(|e| e.at).collect();
        let member: Vec<Option<i64>> = chunk.iter().map(|e| e.member.map(|m| m.0)).collect();
        let action: Vec<&str> = chunk.iter().map(|e| e.action.as_str()).collect();
        let kind: Vec<&str> = chunk.iter().map(|e| e.kind.as_str()).collect();
        let object: Vec<i64> = chunk.iter().map(|e| e.object).collect();
        let changes = chunk
            .iter()
            .map(|e| serde_json::to_string(&e.changes))
            .collect::<Result<Vec<_>, _>>()
            .context("encode changes")?;
        let version: Vec<Option<i64>> = chunk.iter().map(|e| e.version_after).collect();
        sqlx::query(
            "INSERT INTO events (household_id, at, member_id, action, object_kind, object_id, changes, version_after) \
             SELECT $1, e.at, e.member_id, e.action, e.object_kind, e.object_id, e.changes, e.version_after \
             FROM unnest($2::timestamptz[], $3::int8[], $4::text[], $5::text[], $6::int8[], $7::text[], $8::int8[]) \
             WITH ORDINALITY AS e(at, member_id, action, object_kind, object_id, changes, version_after, n) \
             ORDER BY e.n",
        )
        .bind(household.0)
        .bind(&at)
        .bind(&member)
        .bind(&action)
        .bind(&kind)
        .bind(&object)
        .bind(&changes)
        .bind(&version)
        .execute(&mut *txn)
        .await
        .context("append events")?;
    }
    txn.commit().await.context("commit the events")
}

/// The row of an event of `household`.
fn row(household: HouseholdId, e: &Event) -> anyhow::Result<events::ActiveModel> {
    Ok(events::ActiveModel {
        household_id: Set(household.0),
        at: Set(e.at),
        member_id: Set(e.member.map(|m| m.0)),
        action: Set(e.action.clone()),
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
    async fn append(&self, household: HouseholdId, e: &Event) -> Result<EventId, RepoError> {
        Ok(EventId(row(household, e)?.insert(&self.db).await.context("append event")?.id))
    }

    async fn append_all(&self, household: HouseholdId, all: &[Event]) -> Result<(), RepoError> {
        if all.is_empty() {
            return Ok(());
        }
        if self.db.get_database_backend() == DbBackend::Postgres {
            return Ok(append_all_pg(self.db.get_postgres_connection_pool(), household, all).await?);
        }
        // One transaction: all or nothing. Dropped unfinished on an error, it rolls back.
        let txn = self.begin_write().await.context("begin appending events")?;
        for chunk in all.chunks(EVENTS_CHUNK) {
            let rows = chunk.iter().map(|e| row(household, e)).collect::<anyhow::Result<Vec<_>>>()?;
            events::Entity::insert_many(rows).exec_without_returning(&txn).await.context("append events")?;
        }
        txn.commit().await.context("commit the events")?;
        Ok(())
    }

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
