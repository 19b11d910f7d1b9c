//! `InventoryRepo`: the items of each household.

mod codes;
mod import;
mod list;

use crate::Store;
use crate::bulk::{self, PgBulk};
use crate::counts::CountCache;
use crate::entity::{households, items};
use crate::mapping::{self, to_json};
use crate::repo::CHUNK;
use crate::repo::history::{copy_events, insert_event, insert_events};
use crate::repo::media::{attach_pending, media_by_id};
use crate::repo::places::{find_or_create_path, load_paths, lock_places};
use crate::search::{self, Search};
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use codes::{write_codes, write_fresh_codes};
use import::*;
use list::*;
use sea_orm::sea_query::{Expr, ExprTrait, JoinType, Order};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, QueryTrait, Statement,
};
use std::collections::HashMap;
use trove_application::ports::{
    ImportEvents, ImportWritten, InventoryRepo, ItemPage, ItemQuery, ItemSort, Reimported, SortKey,
};
use trove_application::{Conflict, RepoError};
use trove_domain::history::{Event, ObjectKind, Recording, medium_fields};
use trove_domain::item::{Item, ItemLine, ItemType, NewItem};
use trove_domain::media::MediaKind;
use trove_domain::people::EventId;
use trove_domain::place::{self, Place};
use trove_domain::{HouseholdId, ItemId, PlaceId, Timestamp};
/// Lines read per query by `InventoryRepo::lines`.
const LINES_PAGE: usize = 5_000;

/// Imports of at least this many rows refresh the statistics of `items` once they commit, inside the import
/// (PostgreSQL: `ANALYZE items`; SQLite: [`Store::analyze_sqlite`]), and a SQLite store of at least this many
/// items with no statistics gets
/// them when it starts ([`Store::migrate`]).
pub(crate) const ANALYZE_FROM_ROWS: usize = 1_000;

/// The row of a new item in `place` (whose path's names are `place_text`), version 1.
fn new_row(
    household: HouseholdId,
    item: &NewItem,
    place: Option<PlaceId>,
    place_text: &str,
    at: Timestamp,
) -> anyhow::Result<items::ActiveModel> {
    Ok(items::ActiveModel {
        household_id: Set(household.0),
        name: Set(item.name.as_str().to_owned()),
        item_type: Set(item.item_type.as_str().to_owned()),
        profile: Set(item.profile.clone()),
        condition: Set(item.condition.as_str().to_owned()),
        intent: Set(item.intent.as_str().to_owned()),
        availability: Set(item.availability.as_str().to_owned()),
        project_id: Set(None),
        gone_reason: Set(None),
        gone_at: Set(None),
        gone_note: Set(None),
        measurements: Set(to_json(&item.measurements, "measurements")?),
        faults: Set(to_json(&item.faults, "faults")?),
        tests_done: Set(to_json(&item.tests_done, "tests_done")?),
        accessories: Set(to_json(&item.accessories, "accessories")?),
        components: Set(to_json(&item.components, "components")?),
        place_id: Set(place.map(|p| p.0)),
        import_ref: Set(item.import_ref.clone()),
        created_at: Set(at),
        updated_at: Set(at),
        version: Set(1),
        search_place: Set(place_text.to_owned()),
        search_notes: Set(search::notes_text(None, &item.faults, &item.tests_done, &item.details, &item.tags)),
        quantity: Set(i64::from(item.quantity)),
        min_quantity: Set(item.min_quantity.map(i64::from)),
        tags: Set(to_json(&item.tags, "tags")?),
        details: Set(to_json(&item.details, "details")?),
        codes: Set(to_json(&item.codes, "codes")?),
        ..Default::default()
    })
}

/// Every field an update writes: all but the id, the household, the import reference, the creation time and
/// the version (which the update bumps itself).
fn full_changes(item: &Item, place_text: &str) -> anyhow::Result<items::ActiveModel> {
    Ok(items::ActiveModel {
        name: Set(item.name.as_str().to_owned()),
        item_type: Set(item.item_type.as_str().to_owned()),
        profile: Set(item.profile.clone()),
        condition: Set(item.condition.as_str().to_owned()),
        intent: Set(item.intent.as_str().to_owned()),
        availability: Set(item.availability.as_str().to_owned()),
        project_id: Set(item.project.map(|p| p.0)),
        gone_reason: Set(item.gone.as_ref().map(|g| g.reason.as_str().to_owned())),
        gone_at: Set(item.gone.as_ref().map(|g| g.at)),
        gone_note: Set(item.gone.as_ref().and_then(|g| g.note.clone())),
        measurements: Set(to_json(&item.measurements, "measurements")?),
        faults: Set(to_json(&item.faults, "faults")?),
        tests_done: Set(to_json(&item.tests_done, "tests_done")?),
        accessories: Set(to_json(&item.accessories, "accessories")?),
        components: Set(to_json(&item.components, "components")?),
        place_id: Set(item.place_id.map(|p| p.0)),
        updated_at: Set(item.updated_at),
        search_place: Set(place_text.to_owned()),
        search_notes: Set(search::notes_text(
            item.gone.as_ref().and_then(|g| g.note.as_deref()),
            &item.faults,
            &item.tests_done,
            &item.details,
            &item.tags,
        )),
        quantity: Set(i64::from(item.quantity)),
        min_quantity: Set(item.min_quantity.map(i64::from)),
        tags: Set(to_json(&item.tags, "tags")?),
        details: Set(to_json(&item.details, "details")?),
        codes: Set(to_json(&item.codes, "codes")?),
        ..Default::default()
    })
}

/// Sets each item's `place_path`, the paths read for all of them in one query, and its `cover`
/// (`media::fill_covers`).
async fn with_places<C: ConnectionTrait>(db: &C, household: HouseholdId, items: &mut [Item]) -> anyhow::Result<()> {
    crate::repo::media::fill_covers(db, household, items).await?;
    place_paths(db, household, items, None).await
}

/// Sets each item's `place_path`: from the paths `kept` at `revision` (the household's item revision read with the
/// items), the others read in one query (and kept, with `kept`).
async fn place_paths<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    items: &mut [Item],
    kept: Option<(&CountCache, i64)>,
) -> anyhow::Result<()> {
    let ids = items.iter().filter_map(|i| i.place_id);
    let (mut paths, missing) = match kept {
        Some((kept, revision)) => kept.paths(household.0, revision, ids),
        None => (HashMap::new(), ids.collect()),
    };
    if !missing.is_empty() {
        let read = load_paths(db, household, &missing).await?;
        if let Some((kept, revision)) = kept {
            kept.put_paths(household.0, revision, &read);
        }
        paths.extend(read);
    }
    for item in items {
        item.place_path = item.place_id.and_then(|p| paths.get(&p)).cloned();
    }
    Ok(())
}

/// Item rows as items with their places and covers.
async fn read_items<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    rows: Vec<items::Model>,
) -> anyhow::Result<Vec<Item>> {
    let mut items = mapping::item_list(rows)?;
    with_places(db, household, &mut items).await?;
    Ok(items)
}

/// The first photo of each item read (`media::fill_covers`' rule), as the column `cover` of the same statement.
fn cover_column(backend: DbBackend, household: HouseholdId) -> Expr {
    search::values_expr(
        backend,
        "(SELECT MIN(media.id) FROM media \
          WHERE media.household_id = ? AND media.item_id = items.id AND media.kind = ?)",
        [household.0.into(), MediaKind::Photo.as_str().into()],
    )
}

/// The statement of `select` (its columns become [`mapping::ItemRow`]'s, its cover in the same statement) with
/// its page written as numbers, not bound: SQLite prepares a statement again at every run when a bound value
/// may change its plan, as a bound `LIMIT` does, so a page bound that way is never served from the statement
/// cache. Only integers are written into the text.
fn item_rows_statement(
    backend: DbBackend,
    household: HouseholdId,
    select: sea_orm::Select<items::Entity>,
    page: Option<(u64, u64)>,
) -> Statement {
    // `select` is `select_only`: the columns of [`mapping::ItemRow`] and any the caller added.
    let select =
        select.columns(mapping::ITEM_ROW_COLUMNS.iter().copied()).column_as(cover_column(backend, household), "cover");
    let mut statement = select.build(backend);
    if let Some((limit, offset)) = page {
        statement.sql.push_str(&format!(" LIMIT {limit} OFFSET {offset}"));
    }
    statement
}

/// One item of the household with the path of its place, inside a transaction or not. The household's item
/// revision comes with the row, so a path kept in `kept` at that revision needs no second query.
pub(crate) async fn find_item<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    id: ItemId,
    kept: Option<&CountCache>,
) -> anyhow::Result<Option<Item>> {
    let backend = db.get_database_backend();
    let select =
        items::Entity::find().filter(items::Column::Id.eq(id.0)).filter(items::Column::HouseholdId.eq(household.0));
    // The revision, as one more column; the statement reads at most one row (the primary key), so no LIMIT.
    let select = select.select_only().column_as(
        Expr::cust("(SELECT households.item_revision FROM households WHERE households.id = items.household_id)"),
        "revision",
    );
    let statement = item_rows_statement(backend, household, select, None);
    let rows = db.query_all_raw(statement).await.with_context(|| format!("read item {id}"))?;
    let Some(row) = rows.first() else { return Ok(None) };
    let revision: i64 = row.try_get("", "revision").with_context(|| format!("read item {id}"))?;
    let mut item = [mapping::item_result(row)?];
    place_paths(db, household, &mut item, kept.map(|k| (k, revision))).await?;
    let [item] = item;
    Ok(Some(item))
}

/// Where places are found for new items: checks each `place_id` given against the household once, and finds
/// or creates each `location` text once (read leniently, so an old text is never refused). Runs inside the
/// caller's transaction, which holds the household's place lock.
#[derive(Default)]
struct Placing {
    /// The path texts of the places seen (`None`: no place of the household).
    known: HashMap<PlaceId, Option<String>>,
    by_text: HashMap<String, Option<PlaceId>>,
    /// The places created for `location` texts, in the order created.
    created: Vec<Place>,
}

impl Placing {
    async fn place_of<C: ConnectionTrait>(
        &mut self,
        db: &C,
        household: HouseholdId,
        item: &NewItem,
        at: Timestamp,
    ) -> Result<Option<PlaceId>, RepoError> {
        if let Some(id) = item.place_id {
            place_text(db, household, id, &mut self.known).await?;
            return Ok(Some(id));
        }
        let Some(text) = item.location.as_deref() else { return Ok(None) };
        if let Some(found) = self.by_text.get(text) {
            return Ok(*found);
        }
        let names = place::parse_location_lenient(text);
        let found = find_or_create_path(db, household, &names, at, &mut self.created).await?;
        if let Some(path) = &found {
            self.known.insert(path.id(), Some(path.joined()));
        }
        let found = found.map(|p| p.id());
        self.by_text.insert(text.to_owned(), found);
        Ok(found)
    }

    /// The path text of a place answered by [`Placing::place_of`]; empty for none.
    fn text(&self, place: Option<PlaceId>) -> &str {
        place.and_then(|p| self.known.get(&p)).and_then(Option::as_deref).unwrap_or("")
    }
}

/// The names of the path of place `id` as the index keeps them (remembered in `known`, `None` for no place of
/// the household).
///
/// # Errors
/// `Conflict` unless `id` is a place of the household.
async fn place_text<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    id: PlaceId,
    known: &mut HashMap<PlaceId, Option<String>>,
) -> Result<String, RepoError> {
    let text = match known.get(&id) {
        Some(text) => text.clone(),
        None => {
            let text = load_paths(db, household, &[id]).await?.remove(&id).map(|p| p.joined());
            known.insert(id, text.clone());
            text
        }
    };
    text.ok_or(RepoError::Conflict(Conflict::NoSuchPlace(id)))
}

/// Writes `item` conditional on its version, inside the caller's transaction; rolls nothing back itself.
async fn write_item<C: ConnectionTrait>(
    txn: &C,
    household: HouseholdId,
    item: &Item,
    known: &mut HashMap<PlaceId, Option<String>>,
) -> Result<(), RepoError> {
    let text = match item.place_id {
        Some(p) => place_text(txn, household, p, known).await?,
        None => String::new(),
    };
    let written = items::Entity::update_many()
        .set(full_changes(item, &text)?)
        .col_expr(items::Column::Version, Expr::col(items::Column::Version).add(1))
        .filter(items::Column::Id.eq(item.id.0))
        .filter(items::Column::HouseholdId.eq(household.0))
        .filter(items::Column::Version.eq(item.version))
        .exec(txn)
        .await
        .with_context(|| format!("update item {}", item.id))?;
    if written.rows_affected == 0 {
        // Nothing written: one read tells a missing item from a changed one.
        let exists = items::Entity::find_by_id(item.id.0)
            .filter(items::Column::HouseholdId.eq(household.0))
            .count(txn)
            .await
            .with_context(|| format!("read item {}", item.id))?
            > 0;
        return Err(if exists { RepoError::Stale(item.id) } else { RepoError::NotFound });
    }
    // A gone item's codes leave the index: it is history, and its codes may come back on another item.
    let indexed = if item.gone.is_none() { item.codes.clone() } else { trove_domain::code::Codes::default() };
    write_codes(txn, household, item.id, &indexed, true).await
}

/// Inserts rows in one multi-row statement and answers their ids in the order of `rows`. The ids are read
/// with RETURNING and sorted: both backends hand out increasing ids in the order of the VALUES list.
async fn insert_chunk<C: ConnectionTrait>(db: &C, rows: Vec<items::ActiveModel>) -> anyhow::Result<Vec<i64>> {
    let count = rows.len();
    let mut stmt = items::Entity::insert_many(rows).into_query();
    stmt.returning_col(items::Column::Id);
    let backend = db.get_database_backend();
    let answered = db.query_all_raw(backend.build(&stmt)).await.context("insert a chunk of items")?;
    let mut ids = answered
        .iter()
        .map(|r| r.try_get::<i64>("", "id"))
        .collect::<Result<Vec<_>, _>>()
        .context("read the ids of inserted items")?;
    if ids.len() != count {
        return Err(anyhow!("inserted {count} items but got {} ids back", ids.len()));
    }
    ids.sort_unstable();
    Ok(ids)
}

impl Store {
    /// SQLite's statistics, made again: `sqlite_stat1` (how many rows share a key of each index) and no
    /// `sqlite_stat4`. Without statistics SQLite lists a 100-item place of a 100,000-item inventory by walking
    /// the primary key (many times slower than through `idx_items_place`). The samples of `sqlite_stat4` (this
    /// build of SQLite has them) would make SQLite prepare a statement again at every run in which a value is
    /// bound to an indexed column, as sqlx binds every value anew at every run: the listing's statement was
    /// prepared again at each page (docs/perf/places-and-labels.md). One transaction, so no connection of
    /// the pool reads the samples in between; `ANALYZE sqlite_schema` loads what is left on this connection.
    pub(crate) async fn analyze_sqlite(&self) -> Result<(), RepoError> {
        let txn = self.begin_write().await.context("begin the statistics")?;
        for sql in ["ANALYZE", "DELETE FROM sqlite_stat4", "ANALYZE sqlite_schema"] {
            txn.execute_unprepared(sql).await.with_context(|| format!("refresh the statistics: {sql}"))?;
        }
        txn.commit().await.context("commit the statistics")?;
        Ok(())
    }
}

/// The items of `ids` in the household as their rows hold them (no cover, no place path), by id; missing ids are
/// left out. With `lock`, on PostgreSQL, their rows are locked until the caller's transaction ends, in id order (as
/// every writer of several items takes them, so none deadlocks); SQLite has one writer anyway.
pub(crate) async fn item_rows_by_id<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    ids: &[ItemId],
    lock: bool,
) -> anyhow::Result<Vec<Item>> {
    let lock = lock && db.get_database_backend() == DbBackend::Postgres;
    let mut wanted: Vec<i64> = ids.iter().map(|i| i.0).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut out = Vec::with_capacity(wanted.len());
    for chunk in wanted.chunks(CHUNK) {
        let mut query = items::Entity::find()
            .filter(items::Column::HouseholdId.eq(household.0))
            .filter(items::Column::Id.is_in(chunk.iter().copied()))
            .order_by_asc(items::Column::Id);
        if lock {
            query = query.lock_exclusive();
        }
        let rows = query.all(db).await.context("read items by id")?;
        out.extend(mapping::item_list(rows)?);
    }
    Ok(out)
}

#[async_trait]
impl InventoryRepo for Store {
    async fn insert(&self, household: HouseholdId, item: NewItem, rec: &Recording) -> Result<Item, RepoError> {
        let at = rec.at;
        // Always in a transaction, committed explicitly: see `Store::begin_write` on `RETURNING`. The household's
        // places are locked only for an item that names one (a plain item never waits for a move of places).
        let placed = item.place_id.is_some() || item.location.is_some();
        let txn = self.begin_write().await.context("begin the item insert")?;
        if placed {
            lock_places(&txn, household).await?;
        }
        let mut placing = Placing::default();
        let place = match placing.place_of(&txn, household, &item, at).await {
            Ok(p) => p,
            Err(e) => {
                txn.rollback().await.context("roll back the item insert")?;
                return Err(e);
            }
        };
        let row =
            new_row(household, &item, place, placing.text(place), at)?.insert(&txn).await.context("insert item")?;
        if let Some(media) = attach_pending(&txn, household, ItemId(row.id), &item.media_ids).await? {
            txn.rollback().await.context("roll back the item insert")?;
            return Err(RepoError::NotPending(media));
        }
        if let Err(e) = write_codes(&txn, household, ItemId(row.id), &item.codes, false).await {
            txn.rollback().await.context("roll back the item insert")?;
            return Err(e);
        }
        let mut items = vec![mapping::item(row)?];
        if placed || !item.media_ids.is_empty() {
            with_places(&txn, household, &mut items).await?;
        }
        // The item's event, then the media it took (pending, recorded by no one until now), then the places made
        // for its location.
        let mut events = vec![rec.item_created(&items[0])];
        for m in media_by_id(&txn, household, &item.media_ids).await? {
            events.extend(rec.object(ObjectKind::Media, m.id.0, None, Some(medium_fields(&m))));
        }
        events.extend(placing.created.iter().map(|p| rec.place_created(p)));
        insert_events(&txn, household, &events).await?;
        txn.commit().await.context("commit the item insert")?;
        Ok(items.remove(0))
    }

    async fn refs_held(&self, household: HouseholdId, refs: &[String]) -> Result<Vec<String>, RepoError> {
        let mut held = Vec::new();
        for chunk in refs.chunks(CHUNK) {
            let found: Vec<Option<String>> = items::Entity::find()
                .select_only()
                .column(items::Column::ImportRef)
                .filter(items::Column::HouseholdId.eq(household.0))
                .filter(items::Column::ImportRef.is_in(chunk.iter().map(String::as_str)))
                .into_tuple()
                .all(&self.db)
                .await
                .context("look up import references")?;
            held.extend(found.into_iter().flatten());
        }
        Ok(held)
    }

    async fn import(
        &self,
        household: HouseholdId,
        items: Vec<NewItem>,
        at: Timestamp,
        history: &ImportEvents,
    ) -> Result<ImportWritten, RepoError> {
        let backend = self.db.get_database_backend();
        let rows = items.len();
        // The history is written last, in the import's transaction: the items and their events commit together.
        // The sheet's items are dropped once their rows are written, before the events are made,
        // so the two are never held at once (docs/perf/search-totals-import.md).
        let written = if backend == DbBackend::Postgres {
            let txn = PgBulk::begin(self.db.get_postgres_connection_pool()).await?;
            let plan = plan_import(&txn, household, &items, at).await?;
            let fresh_ids = copy_fresh(&txn, household, &items, &plan, at).await?;
            write_fresh_codes(&txn, household, &items, &plan.fresh, &fresh_ids).await?;
            drop(items);
            let written = plan.written(&fresh_ids);
            drop(fresh_ids);
            copy_events(&txn, household, &history.events(&written)).await.context("write the import's history")?;
            txn.commit().await.context("commit the import")?;
            written
        } else {
            let txn = self.begin_write().await.context("begin the import transaction")?;
            let plan = plan_import(&txn, household, &items, at).await?;
            let mut fresh_ids: Vec<i64> = Vec::with_capacity(plan.fresh.len());
            for chunk in plan.fresh.chunks(CHUNK) {
                let rows = chunk
                    .iter()
                    .map(|&n| {
                        let place = plan.places[n];
                        new_row(household, &items[n], place, plan.placing.text(place), at)
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?;
                fresh_ids.extend(insert_chunk(&txn, rows).await?);
            }
            write_fresh_codes(&txn, household, &items, &plan.fresh, &fresh_ids).await?;
            drop(items);
            let fresh = fresh_ids.len();
            let written = plan.written(&fresh_ids);
            drop(fresh_ids);
            insert_events(&txn, household, &history.events(&written)).await.context("write the import's history")?;
            txn.commit().await.context("commit the import")?;
            if fresh >= REBUILD_FROM_ROWS {
                merge_sqlite_index(&self.db, fresh).await?;
            }
            written
        };
        if rows >= ANALYZE_FROM_ROWS {
            // Fresh statistics at once, rather than never (SQLite) or when autovacuum comes by (PostgreSQL): the
            // planner's choices for the listing and the search depend on them (docs/perf/search-totals-import.md). On
            // PostgreSQL `ANALYZE` reads a sample of the committed rows and takes no lock other writes wait for.
            // Best effort: the import and its history are committed, and an error would invite a second import.
            let analyzed = if backend == DbBackend::Postgres {
                let analyzed = self.db.execute_unprepared("ANALYZE items").await;
                analyzed.map(|_| ()).context("refresh the statistics of items").map_err(RepoError::from)
            } else {
                self.analyze_sqlite().await
            };
            if let Err(e) = analyzed {
                tracing::warn!(error = %e, "the statistics after an import could not be refreshed");
            }
        }
        Ok(written)
    }

    async fn get(&self, household: HouseholdId, id: ItemId) -> Result<Item, RepoError> {
        Ok(find_item(&self.db, household, id, Some(&self.counts)).await?.ok_or(RepoError::NotFound)?)
    }

    async fn get_many(&self, household: HouseholdId, ids: &[ItemId]) -> Result<Vec<Item>, RepoError> {
        let mut items = item_rows_by_id(&self.db, household, ids, false).await?;
        with_places(&self.db, household, &mut items).await?;
        Ok(items)
    }

    async fn list(&self, household: HouseholdId, query: &ItemQuery) -> Result<ItemPage, RepoError> {
        if let Some(key) = query.code.as_deref().filter(|_| query.q.is_some())
            && query.sort.is_none()
            && query.after.is_none()
        {
            let backend = self.db.get_database_backend();
            let holders: Vec<i64> = items::Entity::find()
                .select_only()
                .column(items::Column::Id)
                .filter(list_condition(backend, household, query))
                .filter(codes::holding(household, key))
                .order_by_asc(items::Column::Id)
                .into_tuple()
                .all(&self.db)
                .await
                .context("find the items carrying a code")?;
            if !holders.is_empty() {
                return self.code_first(household, query, &holders).await;
            }
        }
        self.listing(household, query, &[]).await
    }
    async fn type_counts(&self, household: HouseholdId) -> Result<Vec<(ItemType, u64)>, RepoError> {
        use items::Column as C;
        let rows: Vec<(String, i64)> = items::Entity::find()
            .select_only()
            .column(C::ItemType)
            .column_as(C::Id.count(), "items")
            .filter(C::HouseholdId.eq(household.0))
            .filter(C::GoneReason.is_null())
            .group_by(C::ItemType)
            .into_tuple()
            .all(&self.db)
            .await
            .context("count the items of each type")?;
        rows.into_iter()
            .map(|(t, n)| {
                let t = ItemType::new(&t).with_context(|| format!("stored item type {t:?}"))?;
                Ok((t, u64::try_from(n).unwrap_or_default()))
            })
            .collect()
    }

    async fn all_present(&self, household: HouseholdId) -> Result<Vec<Item>, RepoError> {
        let rows = items::Entity::find()
            .filter(items::Column::HouseholdId.eq(household.0))
            .filter(items::Column::GoneReason.is_null())
            .order_by_asc(items::Column::Id)
            .all(&self.db)
            .await
            .context("read present items")?;
        Ok(read_items(&self.db, household, rows).await?)
    }

    async fn lines(&self, household: HouseholdId) -> Result<Vec<ItemLine>, RepoError> {
        // Only the columns a line shows: a third of the row, so a listing of thousands reads a third as much.
        // Read a page at a time (by id, each page after the last): the driver holds every value of the rows
        // it answers apart, several times the lines they become, so 100,000 rows at once would weigh a
        // hundred MB or more for a moment.
        use items::Column as C;
        let mut out: Vec<ItemLine> = Vec::new();
        loop {
            let mut select = items::Entity::find()
                .select_only()
                .columns([
                    C::Id,
                    C::Name,
                    C::ItemType,
                    C::Profile,
                    C::Condition,
                    C::Intent,
                    C::Availability,
                    C::Measurements,
                    C::Quantity,
                    C::UnitsHeld,
                    C::UnitsLent,
                ])
                .filter(C::HouseholdId.eq(household.0))
                .filter(C::GoneReason.is_null());
            if let Some(last) = out.last() {
                select = select.filter(C::Id.gt(last.id.0));
            }
            let rows: Vec<mapping::LineRow> = select
                .order_by_asc(C::Id)
                .limit(LINES_PAGE as u64)
                .into_tuple()
                .all(&self.db)
                .await
                .context("read the lines of present items")?;
            let full = rows.len() == LINES_PAGE;
            for row in rows {
                out.push(mapping::item_line(row)?);
            }
            if !full {
                out.shrink_to_fit();
                return Ok(out);
            }
        }
    }

    async fn revision(&self, household: HouseholdId) -> Result<i64, RepoError> {
        Ok(Store::revision(self, household).await?.unwrap_or(0))
    }

    async fn update(&self, household: HouseholdId, item: &Item, event: &Event) -> Result<(Item, EventId), RepoError> {
        let txn = self.begin_write().await.context("begin the item update")?;
        if let Err(e) = write_item(&txn, household, item, &mut HashMap::new()).await {
            txn.rollback().await.context("roll back the item update")?;
            return Err(e);
        }
        // After the conditional write, in its transaction: an event's id is taken only once the write before it
        // committed (the row's lock, or SQLite's one writer), so the history is in the order of the writes.
        let event = insert_event(&txn, household, event).await?;
        let stored = find_item(&txn, household, item.id, None)
            .await?
            .ok_or_else(|| anyhow!("item {} vanished during its update", item.id))?;
        txn.commit().await.context("commit the item update")?;
        Ok((stored, event))
    }

    async fn update_many(&self, household: HouseholdId, items: &[Item], events: &[Event]) -> Result<u64, RepoError> {
        let txn = self.begin_write().await.context("begin the update of many items")?;
        let mut known = HashMap::new();
        for item in items {
            if let Err(e) = write_item(&txn, household, item, &mut known).await {
                txn.rollback().await.context("roll back the update of many items")?;
                return Err(e);
            }
        }
        insert_events(&txn, household, events).await?;
        txn.commit().await.context("commit the update of many items")?;
        Ok(items.len() as u64)
    }
}
