//! `InventoryRepo`: the items of each household.

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
use sea_orm::sea_query::{Expr, ExprTrait, JoinType, Order};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, QueryTrait, Statement,
};
use std::collections::HashMap;
use trove_application::ports::{
    ImportEvents, ImportWritten, InventoryRepo, InventoryStamp, ItemPage, ItemQuery, ItemSort, Reimported, SortKey,
};
use trove_application::{Conflict, RepoError};
use trove_domain::history::{Event, ObjectKind};
use trove_domain::history::{Recording, medium_fields};
use trove_domain::item::{Item, ItemLine, ItemType, NewItem};
use trove_domain::media::MediaKind;
use trove_domain::people::EventId;
use trove_domain::place::{self, Place, PlacePath};
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
        ..Default::default()
    })
}

/// What a re-import changes on the item that already holds the import reference.
fn reimport_changes(
    item: &NewItem,
    place: Option<PlaceId>,
    place_text: &str,
    at: Timestamp,
) -> anyhow::Result<items::ActiveModel> {
    Ok(items::ActiveModel {
        name: Set(item.name.as_str().to_owned()),
        item_type: Set(item.item_type.as_str().to_owned()),
        profile: Set(item.profile.clone()),
        condition: Set(item.condition.as_str().to_owned()),
        measurements: Set(to_json(&item.measurements, "measurements")?),
        faults: Set(to_json(&item.faults, "faults")?),
        tests_done: Set(to_json(&item.tests_done, "tests_done")?),
        accessories: Set(to_json(&item.accessories, "accessories")?),
        place_id: Set(place.map(|p| p.0)),
        updated_at: Set(at),
        search_place: Set(place_text.to_owned()),
        ..Default::default()
    })
}

/// The item `before` as a re-import from `from` leaves it: the fields [`reimport_changes`] writes, and the
/// version the update bumps.
fn reimported(before: &Item, from: &NewItem, place: Option<PlaceId>, at: Timestamp) -> Item {
    Item {
        name: from.name.clone(),
        item_type: from.item_type.clone(),
        profile: from.profile.clone(),
        condition: from.condition,
        measurements: from.measurements.clone(),
        faults: from.faults.clone(),
        tests_done: from.tests_done.clone(),
        accessories: from.accessories.clone(),
        place_id: place,
        updated_at: at,
        version: before.version + 1,
        ..before.clone()
    }
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
        ..Default::default()
    })
}

/// The WHERE of a listing: the household and the filters; the search is [`searched`]'s.
fn list_condition(backend: DbBackend, household: HouseholdId, query: &ItemQuery) -> sea_orm::Condition {
    let mut cond = sea_orm::Condition::all().add(items::Column::HouseholdId.eq(household.0));
    if let Some(intent) = query.intent {
        cond = cond.add(items::Column::Intent.eq(intent.as_str()));
    }
    if let Some(availability) = query.availability {
        cond = cond.add(items::Column::Availability.eq(availability.as_str()));
    }
    if let Some(item_type) = &query.item_type {
        cond = cond.add(items::Column::ItemType.eq(item_type.as_str()));
    }
    if !query.include_gone {
        cond = cond.add(items::Column::GoneReason.is_null());
    }
    if let Some(tag) = &query.tag {
        cond =
            cond.add(search::values_expr(backend, "LOWER(items.tags) LIKE ? ESCAPE '\\'", [tag_pattern(tag).into()]));
    }
    if query.low_stock {
        // `trove_domain::item::low_stock`, as SQL.
        cond = cond.add(Expr::cust("items.min_quantity IS NOT NULL AND items.quantity <= items.min_quantity"));
    }
    if let Some(filter) = query.place {
        let (h, p) = (household.0, filter.place.0);
        cond = cond.add(if filter.within {
            // The place and every place below it, in one recursive subquery; the depth bound ends the descent
            // even on a tree that somehow holds a cycle.
            // The place and household are bound, so one prepared statement serves every place.
            search::values_expr(
                backend,
                "items.place_id IN (WITH RECURSIVE within(id, depth) AS (\
                   SELECT id, 0 FROM places WHERE id = ? AND household_id = ? \
                   UNION ALL \
                   SELECT places.id, within.depth + 1 FROM places JOIN within ON places.parent_id = within.id \
                   WHERE within.depth < 10000) \
                 SELECT id FROM within)",
                [p.into(), h.into()],
            )
        } else {
            items::Column::PlaceId.eq(p)
        });
    }
    cond
}

/// `select` in the order `sort`, then by id (a stable order, so offsets page it).
fn sorted(
    backend: DbBackend,
    mut select: sea_orm::Select<items::Entity>,
    sort: ItemSort,
) -> sea_orm::Select<items::Entity> {
    let order = if sort.descending { Order::Desc } else { Order::Asc };
    let value = match backend {
        DbBackend::Postgres => {
            "COALESCE((items.details::jsonb #>> '{asking_price,minor}')::bigint, \
             (items.details::jsonb #>> '{purchase,price,minor}')::bigint)"
        }
        _ => {
            "COALESCE(json_extract(items.details, '$.asking_price.minor'), \
              json_extract(items.details, '$.purchase.price.minor'))"
        }
    };
    let q = QueryTrait::query(&mut select);
    match sort.key {
        SortKey::Name => {
            q.order_by_expr(Expr::cust("LOWER(items.name)"), order);
        }
        SortKey::Updated => {
            q.order_by_expr(Expr::col((items::Entity, items::Column::UpdatedAt)), order);
        }
        SortKey::Place => {
            // Items in no place last, whichever way.
            q.order_by_expr(Expr::cust("items.search_place = ''"), Order::Asc);
            q.order_by_expr(Expr::cust("LOWER(items.search_place)"), order);
        }
        SortKey::Value => {
            q.order_by_expr(Expr::cust(format!("({value}) IS NULL")), Order::Asc);
            q.order_by_expr(Expr::cust(value), order);
        }
    }
    select.order_by_asc(items::Column::Id)
}

/// The `LIKE` pattern of a tag in the `tags` column (a JSON list of strings): the tag lower-cased, as a quoted
/// JSON string (so it matches a whole tag, never part of one), with `LIKE`'s own characters escaped.
fn tag_pattern(tag: &str) -> String {
    let quoted = serde_json::to_string(&tag.trim().to_lowercase()).unwrap_or_default();
    let escaped = quoted.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// The items of `filter` that match the full-text query `text` (see [`search`]).
fn searched(backend: DbBackend, filter: sea_orm::Condition, text: &str) -> sea_orm::Select<items::Entity> {
    let mut select = items::Entity::find().filter(filter).filter(search::values_expr(
        backend,
        search::match_condition(backend),
        [text.into()],
    ));
    if backend != DbBackend::Postgres {
        QueryTrait::query(&mut select).join(JoinType::InnerJoin, "items_search", Expr::cust(search::SQLITE_JOIN));
    }
    select
}

/// The filter of a listing written out, without its page: the key of its total in the count cache.
fn filter_key(query: &ItemQuery, text: Option<&str>) -> String {
    let filter = ItemQuery { q: None, limit: 0, offset: 0, after: None, ..query.clone() };
    format!("{filter:?} {text:?}")
}

/// Sets the `location` of each item to its place's path, read for all of them in one query; answers the paths.
/// Sets each item's `cover` too (`media::fill_covers`).
async fn with_locations<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    items: &mut [Item],
) -> anyhow::Result<HashMap<PlaceId, PlacePath>> {
    crate::repo::media::fill_covers(db, household, items).await?;
    let ids: Vec<PlaceId> = items.iter().filter_map(|i| i.place_id).collect();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let paths = load_paths(db, household, &ids).await?;
    for item in items.iter_mut() {
        item.location = item.place_id.and_then(|p| paths.get(&p)).map(PlacePath::joined);
    }
    Ok(paths)
}

/// Item rows as items with their locations.
async fn read_items<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    rows: Vec<items::Model>,
) -> anyhow::Result<(Vec<Item>, HashMap<PlaceId, PlacePath>)> {
    let mut items = mapping::item_list(rows)?;
    let paths = with_locations(db, household, &mut items).await?;
    Ok((items, paths))
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
    let select = select.columns(mapping::ITEM_ROW_COLUMNS).column_as(cover_column(backend, household), "cover");
    let mut statement = select.build(backend);
    if let Some((limit, offset)) = page {
        statement.sql.push_str(&format!(" LIMIT {limit} OFFSET {offset}"));
    }
    statement
}

/// One item of the household with the path of its place, inside a transaction or not. The household's item
/// revision comes with the row, so a path kept in `kept` at that revision needs no second query.
async fn find_item<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    id: ItemId,
    kept: Option<&CountCache>,
) -> anyhow::Result<Option<(Item, Option<PlacePath>)>> {
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
    let mut item = mapping::item_result(row)?;
    let Some(place) = item.place_id else { return Ok(Some((item, None))) };
    let (mut paths, missing) = match kept {
        Some(kept) => kept.paths(household.0, revision, [place]),
        None => (HashMap::new(), vec![place]),
    };
    if !missing.is_empty() {
        let read = load_paths(db, household, &missing).await?;
        if let Some(kept) = kept {
            kept.put_paths(household.0, revision, &read);
        }
        paths.extend(read);
    }
    let path = paths.remove(&place);
    item.location = path.as_ref().map(PlacePath::joined);
    Ok(Some((item, path)))
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
    Ok(())
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

/// Where an imported item ends up: an item that already held its reference, or a new row.
enum Slot {
    Existing(i64),
    New(usize),
}

/// What an import writes, once the items holding its references are known and updated: the places of every
/// item, the positions of the items that become new rows, and where each item of the import ended up.
struct ImportPlan {
    places: Vec<Option<PlaceId>>,
    placing: Placing,
    slots: Vec<Slot>,
    /// The positions in the import of the items written as new rows, in the order they are written.
    fresh: Vec<usize>,
    /// What each update of an item holding a reference changed.
    updated: Vec<Reimported>,
}

impl ImportPlan {
    /// What the import wrote, given the ids of the new rows in the order of `fresh`.
    fn written(self, fresh_ids: &[i64]) -> ImportWritten {
        let ids = self
            .slots
            .into_iter()
            .map(|s| match s {
                Slot::Existing(id) => ItemId(id),
                Slot::New(index) => ItemId(fresh_ids[index]),
            })
            .collect();
        ImportWritten { ids, updated: self.updated, places: self.placing.created }
    }
}

/// The first part of an import, inside the caller's transaction: takes the household's place lock, finds or
/// creates the places, updates the items that already hold a reference of the import, and answers what is
/// left to write (the new rows).
async fn plan_import<C: ConnectionTrait>(
    txn: &C,
    household: HouseholdId,
    items: &[NewItem],
    at: Timestamp,
) -> Result<ImportPlan, RepoError> {
    let backend = txn.get_database_backend();
    lock_places(txn, household).await?;
    let mut placing = Placing::default();
    let mut places: Vec<Option<PlaceId>> = Vec::with_capacity(items.len());
    for item in items {
        places.push(placing.place_of(txn, household, item, at).await?);
    }

    // The items that already hold one of the references, looked up in chunks; none to look up in a
    // household that holds no reference yet (a first import).
    let holds_refs: Option<i64> = items::Entity::find()
        .select_only()
        .column(items::Column::Id)
        .filter(items::Column::HouseholdId.eq(household.0))
        .filter(items::Column::ImportRef.is_not_null())
        .limit(1)
        .into_tuple()
        .one(txn)
        .await
        .context("look for import references")?;
    let mut refs: Vec<&str> = Vec::new();
    if holds_refs.is_some() {
        refs.extend(items.iter().filter_map(|i| i.import_ref.as_deref()));
        refs.sort_unstable();
        refs.dedup();
    }
    let mut existing: HashMap<String, i64> = HashMap::new();
    for chunk in refs.chunks(CHUNK) {
        let found: Vec<(i64, Option<String>)> = items::Entity::find()
            .select_only()
            .column(items::Column::Id)
            .column(items::Column::ImportRef)
            .filter(items::Column::HouseholdId.eq(household.0))
            .filter(items::Column::ImportRef.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(txn)
            .await
            .context("look up import references")?;
        existing.extend(found.into_iter().filter_map(|(id, r)| r.map(|r| (r, id))));
    }
    drop(refs);

    // Each item updates the holder of its reference, or becomes a new row; a reference repeated within
    // the import is one item, the later row winning. Only the items' positions are kept here: each row is
    // built as it is written, so the import never holds every row at once besides the items.
    let mut slots: Vec<Slot> = Vec::with_capacity(items.len());
    let mut fresh: Vec<usize> = Vec::new();
    let mut fresh_by_ref: HashMap<&str, usize> = HashMap::new();
    let mut updates: Vec<(i64, usize)> = Vec::new();
    for (n, item) in items.iter().enumerate() {
        match item.import_ref.as_deref() {
            Some(r) if existing.contains_key(r) => {
                let id = existing[r];
                updates.push((id, n));
                slots.push(Slot::Existing(id));
            }
            Some(r) if fresh_by_ref.contains_key(r) => {
                let index = fresh_by_ref[r];
                fresh[index] = n;
                slots.push(Slot::New(index));
            }
            r => {
                if let Some(r) = r {
                    fresh_by_ref.insert(r, fresh.len());
                }
                slots.push(Slot::New(fresh.len()));
                fresh.push(n);
            }
        }
    }
    drop(fresh_by_ref);

    // Each chunk of updates reads its items first (in the import's transaction, so an item an earlier chunk
    // updated is read as it left it), to tell what each update changes: one more read per chunk of updates.
    let mut updated: Vec<Reimported> = Vec::with_capacity(updates.len());
    for chunk in updates.chunks(CHUNK) {
        let mut wanted: Vec<i64> = chunk.iter().map(|(id, _)| *id).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let rows = items::Entity::find()
            .filter(items::Column::HouseholdId.eq(household.0))
            .filter(items::Column::Id.is_in(wanted))
            .all(txn)
            .await
            .context("read the items an import updates")?;
        let mut current: HashMap<i64, Item> = mapping::item_list(rows)?.into_iter().map(|i| (i.id.0, i)).collect();
        for &(id, n) in chunk {
            let (item, place) = (&items[n], places[n]);
            // A sheet's row leaves what was recorded by hand (notes, tags, serial) as it is, and indexed.
            let kept = current.get(&id);
            let notes = search::notes_text(
                None,
                &item.faults,
                &item.tests_done,
                kept.map_or(&item.details, |k| &k.details),
                kept.map_or(&item.tags, |k| &k.tags),
            );
            items::Entity::update_many()
                .set(reimport_changes(item, place, placing.text(place), at)?)
                .col_expr(items::Column::Version, Expr::col(items::Column::Version).add(1))
                // A sheet has no gone note: the item's own stays, and stays indexed.
                .col_expr(
                    items::Column::SearchNotes,
                    search::values_expr(
                        backend,
                        "COALESCE(gone_note || ?, '') || ?",
                        ["\n".to_owned().into(), notes.into()],
                    ),
                )
                .filter(items::Column::Id.eq(id))
                .filter(items::Column::HouseholdId.eq(household.0))
                .exec(txn)
                .await
                .with_context(|| format!("update item {id} from the import"))?;
            if let Some(before) = current.remove(&id) {
                let after = reimported(&before, item, place, at);
                let changes = trove_domain::history::diff(&before, &after);
                updated.push(Reimported { id: ItemId(id), changes, version: after.version });
                current.insert(id, after);
            }
        }
    }
    Ok(ImportPlan { places, placing, slots, fresh, updated })
}

/// SQLite imports of at least this many new rows merge the search index after them (`merge_sqlite_index`), as
/// PostgreSQL imports of as many set the table's checks aside (`bulk::SetAside::for_load`).
const REBUILD_FROM_ROWS: usize = bulk::SET_ASIDE_FROM_ROWS;

/// After an import on SQLite of `fresh` new rows, at least half the items stored: the full-text index merged
/// into one segment (FTS5's `optimize`). A large import leaves the index in many segments, and every lookup of a
/// word (a search, a typo's candidates in `fts5vocab`) seeks in each: on 100,000 imported rows a typo's
/// candidates were found tens of times faster after the merge (docs/perf/search-totals-import.md).
async fn merge_sqlite_index<C: ConnectionTrait>(db: &C, fresh: usize) -> Result<(), RepoError> {
    let total: Option<i64> = items::Entity::find()
        .select_only()
        .column_as(Expr::col(items::Column::Id).count(), "n")
        .into_tuple()
        .one(db)
        .await
        .context("count the items")?;
    if (fresh as i64) * 2 >= total.unwrap_or(0) {
        db.execute_unprepared("INSERT INTO items_search(items_search) VALUES ('optimize')")
            .await
            .context("merge the search index")?;
    }
    Ok(())
}

/// The columns an import's `COPY` writes, in the order [`copy_fresh`] writes each row's fields.
const COPY_ITEMS: &str = "COPY items (id, household_id, name, item_type, profile, condition, intent, availability, \
     measurements, faults, tests_done, accessories, components, place_id, import_ref, created_at, updated_at, \
     version, search_place, search_notes, quantity, min_quantity, tags, details, search) FROM STDIN";

/// Writes the new rows of an import on PostgreSQL by one `COPY`, inside the import's transaction: their ids
/// taken from the sequence first, each row's search index made here (`search::pg_tsvector`, or left to the
/// row trigger), and the words of the rows added to the household's vocabulary. Answers the ids in the order
/// of `plan.fresh`.
async fn copy_fresh(
    txn: &PgBulk,
    household: HouseholdId,
    items: &[NewItem],
    plan: &ImportPlan,
    at: Timestamp,
) -> Result<Vec<i64>, RepoError> {
    let count = plan.fresh.len();
    if count == 0 {
        return Ok(Vec::new());
    }
    let set_aside = bulk::SetAside::for_load(txn, "items", count).await?;
    let ids = if set_aside.is_some() {
        // The table locked against everyone else (`SetAside`) until the import commits, so the ids are
        // taken as one range: no other writer of `items` can take one from the sequence in between (every
        // writer holds at least a ROW EXCLUSIVE lock on `items` while it takes one, below as in an INSERT).
        // The search index is one of the indexes set aside: built after the rows are in.
        let last = txn
            .query_one_raw(Statement::from_string(
                DbBackend::Postgres,
                format!(
                    "SELECT setval(pg_get_serial_sequence('items', 'id'), \
                     nextval(pg_get_serial_sequence('items', 'id')) + {count} - 1) AS id"
                ),
            ))
            .await
            .context("take ids for the imported items")?
            .ok_or_else(|| anyhow!("no id range for the imported items"))?
            .try_get::<i64>("", "id")
            .context("read ids")?;
        let first = last - count as i64 + 1;
        (first..=last).collect::<Vec<i64>>()
    } else {
        txn.execute_unprepared("LOCK TABLE items IN ROW EXCLUSIVE MODE").await.context("lock items")?;
        let rows = txn
            .query_all_raw(Statement::from_string(
                DbBackend::Postgres,
                format!("SELECT nextval(pg_get_serial_sequence('items', 'id')) AS id FROM generate_series(1, {count})"),
            ))
            .await
            .context("take ids for the imported items")?;
        let mut ids =
            rows.iter().map(|r| r.try_get::<i64>("", "id")).collect::<Result<Vec<_>, _>>().context("read ids")?;
        ids.sort_unstable();
        ids
    };
    // The rows' words are written below, once each: the statement trigger need not gather them.
    txn.execute_unprepared("SET LOCAL trove.words_written = 'on'").await.context("mark the words as written")?;

    let at_text = at.format("%Y-%m-%d %H:%M:%S%.6f+00").to_string();
    let mut words: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut left_to_trigger: Vec<i64> = Vec::new();
    let mut next = 0usize;
    txn.copy_in(COPY_ITEMS, |out| {
        let Some(&n) = plan.fresh.get(next) else { return Ok(false) };
        let id = ids[next];
        next += 1;
        let (item, place) = (&items[n], plan.places[n]);
        let place_text = plan.placing.text(place);
        let notes = search::notes_text(None, &item.faults, &item.tests_done, &item.details, &item.tags);
        let field = |out: &mut Vec<u8>, text: &str| {
            bulk::copy_text(out, text);
            out.push(b'\t');
        };
        field(out, &id.to_string());
        field(out, &household.0.to_string());
        field(out, item.name.as_str());
        field(out, item.item_type.as_str());
        field(out, &item.profile);
        field(out, item.condition.as_str());
        field(out, item.intent.as_str());
        field(out, item.availability.as_str());
        field(out, &to_json(&item.measurements, "measurements")?);
        field(out, &to_json(&item.faults, "faults")?);
        field(out, &to_json(&item.tests_done, "tests_done")?);
        field(out, &to_json(&item.accessories, "accessories")?);
        field(out, &to_json(&item.components, "components")?);
        bulk::copy_opt(out, place.map(|p| p.0.to_string()).as_deref());
        out.push(b'\t');
        bulk::copy_opt(out, item.import_ref.as_deref());
        out.push(b'\t');
        field(out, &at_text);
        field(out, &at_text);
        field(out, "1");
        field(out, place_text);
        field(out, &notes);
        field(out, &item.quantity.to_string());
        bulk::copy_opt(out, item.min_quantity.map(|q| q.to_string()).as_deref());
        out.push(b'\t');
        field(out, &to_json(&item.tags, "tags")?);
        field(out, &to_json(&item.details, "details")?);
        let texts = [item.name.as_str(), item.item_type.as_str(), item.profile.as_str(), place_text, notes.as_str()];
        let vector = search::pg_tsvector(texts, |w| {
            if !words.contains(w) {
                words.insert(w.to_owned());
            }
        });
        if vector.is_none() {
            left_to_trigger.push(id);
        }
        bulk::copy_opt(out, vector.as_deref());
        out.push(b'\n');
        Ok(true)
    })
    .await?;
    txn.execute_unprepared("SET LOCAL trove.words_written = 'off'").await.context("end the import's words")?;

    if let Some(set_aside) = set_aside {
        set_aside.restore(txn).await?;
        // What `items_revision_insert`, set aside, would have done.
        txn.execute_unprepared(&format!(
            "UPDATE households SET item_revision = item_revision + 1 WHERE id = {}",
            household.0
        ))
        .await
        .context("move the item revision")?;
    }
    let mut words: Vec<String> = words.into_iter().collect();
    words.sort_unstable();
    txn.add_words(household, &words, &left_to_trigger).await?;
    Ok(ids)
}

/// The page of a household that does not exist: empty.
fn no_page() -> ItemPage {
    ItemPage { items: Vec::new(), total: 0, places: HashMap::new(), more: false }
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

    /// The household's item revision (`None`: no such household), as of a moment after this call began: read
    /// by this call or by one that started after it, shared with the calls that arrive while it runs
    /// (`revisions`). Read with `all`, not `one`: `one` adds a bound `LIMIT`, which makes SQLite prepare the
    /// statement again at every run.
    async fn revision(&self, household: HouseholdId) -> Result<Option<i64>, RepoError> {
        let read = || async {
            let revision: Vec<i64> = households::Entity::find_by_id(household.0)
                .select_only()
                .column_as(Expr::cust("item_revision"), "item_revision")
                .into_tuple()
                .all(&self.db)
                .await
                .context("read the item revision")?;
            Ok::<_, RepoError>(revision.into_iter().next())
        };
        self.revisions.read(household.0, read).await
    }

    /// The total of a listing and the revision it is current at: kept by the count cache while the household's
    /// item revision is unchanged, counted otherwise. The revision is read before the count, so a total is never
    /// older than its revision. `None` for no such household.
    async fn total(
        &self,
        household: HouseholdId,
        key: String,
        all: sea_orm::Select<items::Entity>,
    ) -> Result<Option<(u64, i64)>, RepoError> {
        let Some(revision) = self.revision(household).await? else { return Ok(None) };
        Ok(Some((self.total_at(household, key, all, revision).await?, revision)))
    }

    /// The total of a listing at `revision`, read before: kept, or counted and kept.
    async fn total_at(
        &self,
        household: HouseholdId,
        key: String,
        all: sea_orm::Select<items::Entity>,
        revision: i64,
    ) -> Result<u64, RepoError> {
        if let Some(total) = self.counts.get(household.0, &key, revision) {
            return Ok(total);
        }
        let total = all.count(&self.db).await.context("count items")?;
        self.counts.put(household.0, key, revision, total);
        Ok(total)
    }

    /// The rows of a page of the ordered listing `ordered` (offset and limit of `query`), with one row past it
    /// to tell whether more follow.
    async fn page_rows(
        &self,
        household: HouseholdId,
        ordered: sea_orm::Select<items::Entity>,
        query: &ItemQuery,
    ) -> Result<Vec<sea_orm::QueryResult>, RepoError> {
        let backend = self.db.get_database_backend();
        let page = Some((u64::from(query.limit) + 1, query.offset));
        let statement = item_rows_statement(backend, household, ordered, page);
        Ok(self.db.query_all_raw(statement).await.context("list items")?)
    }

    /// A page of the listing `all` in the order `ordered` (no search): the rows read first, with the household's
    /// item revision in the same statement, then the total kept at that revision or counted. A repeated page
    /// costs one statement.
    async fn plain_page(
        &self,
        household: HouseholdId,
        all: sea_orm::Select<items::Entity>,
        ordered: sea_orm::Select<items::Entity>,
        query: &ItemQuery,
    ) -> Result<ItemPage, RepoError> {
        // The household's id written as a number (an integer only), so the subquery is read once, not per row.
        let revision = Expr::cust(format!(
            "(SELECT households.item_revision FROM households WHERE households.id = {})",
            household.0
        ));
        let rows = self.page_rows(household, ordered.select_only().column_as(revision, "revision"), query).await?;
        let revision = match rows.first() {
            Some(row) => Some(row.try_get::<i64>("", "revision").context("read the item revision")?),
            None => self.revision(household).await?,
        };
        let Some(revision) = revision else { return Ok(no_page()) };
        let total = self.total_at(household, filter_key(query, None), all, revision).await?;
        self.page_of(household, rows, query, (total, revision)).await
    }

    /// A page of the ordered listing `ordered` at the total and revision `counted` (`None`: no such household,
    /// an empty page).
    async fn page(
        &self,
        household: HouseholdId,
        ordered: sea_orm::Select<items::Entity>,
        query: &ItemQuery,
        counted: Option<(u64, i64)>,
    ) -> Result<ItemPage, RepoError> {
        let Some(counted) = counted else { return Ok(no_page()) };
        let rows = self.page_rows(household, ordered.select_only(), query).await?;
        self.page_of(household, rows, query, counted).await
    }

    /// The page of `rows` (read with one past the page) at the total and revision `counted`, the paths of its
    /// places kept at that revision, or read once and kept.
    async fn page_of(
        &self,
        household: HouseholdId,
        mut rows: Vec<sea_orm::QueryResult>,
        query: &ItemQuery,
        counted: (u64, i64),
    ) -> Result<ItemPage, RepoError> {
        let (total, revision) = counted;
        let more = rows.len() > query.limit as usize;
        rows.truncate(query.limit as usize);
        let mut items = mapping::item_results(&rows)?;
        let (mut places, missing) = self.counts.paths(household.0, revision, items.iter().filter_map(|i| i.place_id));
        if !missing.is_empty() {
            let read = load_paths(&self.db, household, &missing).await?;
            self.counts.put_paths(household.0, revision, &read);
            places.extend(read);
        }
        for item in &mut items {
            item.location = item.place_id.and_then(|p| places.get(&p)).map(PlacePath::joined);
        }
        Ok(ItemPage { items, total, places, more })
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
        let mut items = vec![mapping::item(row)?];
        if placed || !item.media_ids.is_empty() {
            with_locations(&txn, household, &mut items).await?;
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
        Ok(find_item(&self.db, household, id, Some(&self.counts)).await?.ok_or(RepoError::NotFound)?.0)
    }

    async fn get_placed(&self, household: HouseholdId, id: ItemId) -> Result<(Item, Option<PlacePath>), RepoError> {
        find_item(&self.db, household, id, Some(&self.counts)).await?.ok_or(RepoError::NotFound)
    }

    async fn get_many(&self, household: HouseholdId, ids: &[ItemId]) -> Result<Vec<Item>, RepoError> {
        let mut items = item_rows_by_id(&self.db, household, ids, false).await?;
        with_locations(&self.db, household, &mut items).await?;
        Ok(items)
    }

    async fn list(&self, household: HouseholdId, query: &ItemQuery) -> Result<ItemPage, RepoError> {
        let backend = self.db.get_database_backend();
        let filter = list_condition(backend, household, query);
        let Some(mut search) = query.q.as_deref().and_then(Search::parse) else {
            let all = items::Entity::find().filter(filter);
            if let Some(sort) = query.sort {
                let page = sorted(backend, all.clone(), sort);
                return self.plain_page(household, all, page, query).await;
            }
            let mut page = all.clone();
            if let Some(after) = query.after {
                page = page.filter(items::Column::Id.gt(after.0));
            }
            return self.plain_page(household, all, page.order_by_asc(items::Column::Id), query).await;
        };

        // A search: relevance first, then the id. A word that starts no word of the household's items is
        // given its one typo, only when the search as typed finds nothing.
        let mut text = search.query(backend);
        let mut total =
            self.total(household, filter_key(query, Some(&text)), searched(backend, filter.clone(), &text)).await?;
        if total.is_some_and(|(total, _)| total == 0)
            && let Some(corrected) = search.corrected(&self.db, household).await?
        {
            search = corrected;
            text = search.query(backend);
            total =
                self.total(household, filter_key(query, Some(&text)), searched(backend, filter.clone(), &text)).await?;
        }
        let mut page = searched(backend, filter, &text);
        let relevance = || -> Expr {
            match backend {
                DbBackend::Postgres => search::values_expr(backend, search::relevance(backend), [text.clone().into()]),
                _ => Expr::cust(search::relevance(backend)),
            }
        };
        if let Some(after) = query.after {
            // The items after the cursor's item in this order: ranked below it, or level with it and a greater
            // id. A cursor whose item no longer matches the search ends the walk (an empty page).
            let of = search::relevance_of(backend);
            let (t, a) = (text.clone(), after.0);
            let keyset = match backend {
                DbBackend::Postgres => search::values_expr(
                    backend,
                    &format!("({}, items.id) > ({of}, ?)", search::relevance(backend)),
                    [t.clone().into(), t.clone().into(), sea_orm::Value::from(a), t.into(), a.into()],
                ),
                _ => Expr::cust_with_values(
                    format!("({}, items.id) > ({of}, ?)", search::relevance(backend)),
                    [sea_orm::Value::from(t), a.into(), a.into()],
                ),
            };
            page = page.filter(keyset);
        }
        if let Some(sort) = query.sort {
            // Sorted by a key: paged by offset (the cursor skips), never by the relevance keyset.
            return self.page(household, sorted(backend, page, sort), query, total).await;
        }
        QueryTrait::query(&mut page).order_by_expr(relevance(), Order::Asc);
        self.page(household, page.order_by_asc(items::Column::Id), query, total).await
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
        Ok(read_items(&self.db, household, rows).await?.0)
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

    async fn stamp(&self, household: HouseholdId) -> Result<InventoryStamp, RepoError> {
        // SUM over a BIGINT is NUMERIC on PostgreSQL: cast it back so both backends answer a 64-bit integer.
        let row: Option<(i64, i64)> = items::Entity::find()
            .select_only()
            .column_as(Expr::col(items::Column::Id).count(), "items")
            .column_as(Expr::cust("CAST(COALESCE(SUM(version), 0) AS BIGINT)"), "versions")
            .filter(items::Column::HouseholdId.eq(household.0))
            .into_tuple()
            .one(&self.db)
            .await
            .context("read the inventory stamp")?;
        let (items, versions) = row.unwrap_or_default();
        Ok(InventoryStamp { items: u64::try_from(items).unwrap_or_default(), versions })
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
        let (stored, _) = find_item(&txn, household, item.id, None)
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
