//! The import of a sheet of items: the plan (new rows and updates of the items holding a row's reference), the
//! `COPY` of fresh rows on PostgreSQL with their search vectors, and the index upkeep after a large import.

use super::*;

/// What a re-import changes on the item that already holds the import reference.
pub(super) fn reimport_changes(
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
pub(super) fn reimported(before: &Item, from: &NewItem, place: Option<PlaceId>, at: Timestamp) -> Item {
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

/// Where an imported item ends up: an item that already held its reference, or a new row.
pub(super) enum Slot {
    Existing(i64),
    New(usize),
}

/// What an import writes, once the items holding its references are known and updated: the places of every
/// item, the positions of the items that become new rows, and where each item of the import ended up.
pub(super) struct ImportPlan {
    pub(super) places: Vec<Option<PlaceId>>,
    pub(super) placing: Placing,
    slots: Vec<Slot>,
    /// The positions in the import of the items written as new rows, in the order they are written.
    pub(super) fresh: Vec<usize>,
    /// What each update of an item holding a reference changed.
    updated: Vec<Reimported>,
}

impl ImportPlan {
    /// What the import wrote, given the ids of the new rows in the order of `fresh`.
    pub(super) fn written(self, fresh_ids: &[i64]) -> ImportWritten {
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
pub(super) async fn plan_import<C: ConnectionTrait>(
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
pub(super) const REBUILD_FROM_ROWS: usize = bulk::SET_ASIDE_FROM_ROWS;

/// After an import on SQLite of `fresh` new rows, at least half the items stored: the full-text index merged
/// into one segment (FTS5's `optimize`). A large import leaves the index in many segments, and every lookup of a
/// word (a search, a typo's candidates in `fts5vocab`) seeks in each: on 100,000 imported rows a typo's
/// candidates were found tens of times faster after the merge (docs/perf/search-totals-import.md).
pub(super) async fn merge_sqlite_index<C: ConnectionTrait>(db: &C, fresh: usize) -> Result<(), RepoError> {
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
/// One fresh row of an import as `COPY` writes it.
pub(super) struct CopyRow<'a> {
    id: i64,
    household: HouseholdId,
    item: &'a NewItem,
    place: Option<PlaceId>,
    place_text: &'a str,
    notes: &'a str,
    at_text: &'a str,
    /// The row's search vector, or `None` to leave it to the row trigger.
    search: Option<&'a str>,
}

/// A text cell of a `COPY` row.
fn text(out: &mut Vec<u8>, value: &str) -> anyhow::Result<()> {
    bulk::copy_text(out, value);
    Ok(())
}

/// A cell that may be NULL.
fn maybe(out: &mut Vec<u8>, value: Option<&str>) -> anyhow::Result<()> {
    bulk::copy_opt(out, value);
    Ok(())
}

/// A JSON document's cell.
fn json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T, what: &str) -> anyhow::Result<()> {
    bulk::copy_text(out, &to_json(value, what)?);
    Ok(())
}

/// The columns of a fresh row and how each is written, declared once: the `COPY` statement names them in this
/// order, and [`write_copy_row`] writes the cells in it.
macro_rules! copy_columns {
    ($r:ident, $out:ident; $first:literal => $write_first:expr, $($column:literal => $write:expr,)+) => {
        pub(super) const COPY_ITEMS: &str =
            concat!("COPY items (", $first, $(", ", $column,)+ ") FROM STDIN");

        /// Writes `r` as one line of the `COPY` (tab-separated, in [`COPY_ITEMS`]' order).
        fn write_copy_row($out: &mut Vec<u8>, $r: &CopyRow<'_>) -> anyhow::Result<()> {
            $write_first?;
            $(
                $out.push(b'\t');
                $write?;
            )+
            $out.push(b'\n');
            Ok(())
        }
    };
}

copy_columns! { r, out;
    "id" => text(out, &r.id.to_string()),
    "household_id" => text(out, &r.household.0.to_string()),
    "name" => text(out, r.item.name.as_str()),
    "item_type" => text(out, r.item.item_type.as_str()),
    "profile" => text(out, &r.item.profile),
    "condition" => text(out, r.item.condition.as_str()),
    "intent" => text(out, r.item.intent.as_str()),
    "availability" => text(out, r.item.availability.as_str()),
    "measurements" => json(out, &r.item.measurements, "measurements"),
    "faults" => json(out, &r.item.faults, "faults"),
    "tests_done" => json(out, &r.item.tests_done, "tests_done"),
    "accessories" => json(out, &r.item.accessories, "accessories"),
    "components" => json(out, &r.item.components, "components"),
    "place_id" => maybe(out, r.place.map(|p| p.0.to_string()).as_deref()),
    "import_ref" => maybe(out, r.item.import_ref.as_deref()),
    "created_at" => text(out, r.at_text),
    "updated_at" => text(out, r.at_text),
    "version" => text(out, "1"),
    "search_place" => text(out, r.place_text),
    "search_notes" => text(out, r.notes),
    "quantity" => text(out, &r.item.quantity.to_string()),
    "min_quantity" => maybe(out, r.item.min_quantity.map(|q| q.to_string()).as_deref()),
    "tags" => json(out, &r.item.tags, "tags"),
    "details" => json(out, &r.item.details, "details"),
    "codes" => json(out, &r.item.codes, "codes"),
    "search" => maybe(out, r.search),
}

/// Writes the new rows of an import on PostgreSQL by one `COPY`, inside the import's transaction: their ids
/// taken from the sequence first, each row's search index made here (`search::pg_tsvector`, or left to the
/// row trigger), and the words of the rows added to the household's vocabulary. Answers the ids in the order
/// of `plan.fresh`.
pub(super) async fn copy_fresh(
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
        let texts = [item.name.as_str(), item.item_type.as_str(), item.profile.as_str(), place_text, notes.as_str()];
        let vector = search::pg_tsvector(texts, |w| {
            if !words.contains(w) {
                words.insert(w.to_owned());
            }
        });
        if vector.is_none() {
            left_to_trigger.push(id);
        }
        let row = CopyRow {
            id,
            household,
            item,
            place,
            place_text,
            notes: &notes,
            at_text: &at_text,
            search: vector.as_deref(),
        };
        write_copy_row(out, &row)?;
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
