//! `PlaceRepo`: the tree of places of each household. Every write of a household's places runs in one
//! transaction that first takes the household's place lock (the row lock of the household on PostgreSQL, the
//! write lock on SQLite), so the rules of the tree checked inside it hold against concurrent writers.

use crate::Store;
use crate::entity::{items, places};
use crate::mapping;
use crate::repo::CHUNK;
use crate::repo::history::insert_events;
use anyhow::Context as _;
use async_trait::async_trait;
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Statement,
};
use std::collections::HashMap;
use trove_application::ports::{FoundPath, PlaceRepo};
use trove_application::{Conflict, RepoError};
use trove_domain::history::{ObjectKind, Recording, place_fields};
use trove_domain::place::{NewPlace, Place, PlaceChanges, PlaceName, PlacePath, PlaceStep, PlaceTree};
use trove_domain::{HouseholdId, PlaceId, Timestamp};

/// Takes the lock that serialises the writes of a household's places, until the transaction ends. On SQLite
/// the transaction already holds the database's write lock (`BEGIN IMMEDIATE`).
pub(crate) async fn lock_places<C: ConnectionTrait>(db: &C, household: HouseholdId) -> anyhow::Result<()> {
    if db.get_database_backend() == DbBackend::Postgres {
        // NO KEY UPDATE, not UPDATE: inserts of rows referencing the household (items, tokens) take KEY SHARE
        // on it for their foreign key and must not wait for this.
        db.execute_unprepared(&format!("SELECT id FROM households WHERE id = {} FOR NO KEY UPDATE", household.0))
            .await
            .context("take the lock of the household's places")?;
    }
    Ok(())
}

/// Every place of the household, ordered by id.
async fn all_places<C: ConnectionTrait>(db: &C, household: HouseholdId) -> anyhow::Result<Vec<Place>> {
    let rows = places::Entity::find()
        .filter(places::Column::HouseholdId.eq(household.0))
        .order_by_asc(places::Column::Id)
        .all(db)
        .await
        .context("read the places")?;
    rows.into_iter().map(mapping::place).collect()
}

/// The place of the household named `name` (ignoring case) directly in `parent`.
async fn find_child<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    parent: Option<PlaceId>,
    name: &PlaceName,
) -> anyhow::Result<Option<Place>> {
    let parent_cond = match parent {
        Some(p) => places::Column::ParentId.eq(p.0),
        None => places::Column::ParentId.is_null(),
    };
    let row = places::Entity::find()
        .filter(places::Column::HouseholdId.eq(household.0))
        .filter(parent_cond)
        .filter(places::Column::NameKey.eq(name.key()))
        .one(db)
        .await
        .with_context(|| format!("look up the place {name}"))?;
    row.map(mapping::place).transpose()
}

async fn insert_row<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    place: &NewPlace,
    at: Timestamp,
) -> anyhow::Result<Place> {
    let row = places::ActiveModel {
        household_id: Set(household.0),
        name: Set(place.name.as_str().to_owned()),
        name_key: Set(place.name.key()),
        parent_id: Set(place.parent_id.map(|p| p.0)),
        note: Set(place.note.clone()),
        created_at: Set(at),
        ..Default::default()
    }
    .insert(db)
    .await
    .with_context(|| format!("insert the place {}", place.name))?;
    mapping::place(row)
}

/// Finds the path `names` names, creating what is missing, inside the caller's transaction (which holds the
/// household's place lock, see [`lock_places`]); each place created is added to `created`. `None` for no names.
pub(crate) async fn find_or_create_path<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    names: &[PlaceName],
    at: Timestamp,
    created: &mut Vec<Place>,
) -> anyhow::Result<Option<PlacePath>> {
    let mut steps: Vec<PlaceStep> = Vec::with_capacity(names.len());
    let mut parent: Option<PlaceId> = None;
    for name in names {
        let place = match find_child(db, household, parent, name).await? {
            Some(p) => p,
            None => {
                let new = NewPlace { name: name.clone(), parent_id: parent, note: None };
                let place = insert_row(db, household, &new, at).await?;
                created.push(place.clone());
                place
            }
        };
        parent = Some(place.id);
        steps.push(PlaceStep { id: place.id, name: place.name });
    }
    Ok(PlacePath::new(steps))
}

/// The paths of the places of `ids` in the household: one recursive query per [`CHUNK`] ids, climbing from
/// each place to the top.
pub(crate) async fn load_paths<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    ids: &[PlaceId],
) -> anyhow::Result<HashMap<PlaceId, PlacePath>> {
    let mut wanted: Vec<i64> = ids.iter().map(|i| i.0).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut out = HashMap::with_capacity(wanted.len());
    for chunk in wanted.chunks(CHUNK) {
        // Only integers are written into the text, so it needs no binding; the depth bound ends the climb even
        // on a tree that somehow holds a cycle.
        let list = chunk.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let sql = format!(
            "WITH RECURSIVE up(start, id, parent_id, name, depth) AS (\
               SELECT id, id, parent_id, name, 0 FROM places WHERE household_id = {h} AND id IN ({list}) \
               UNION ALL \
               SELECT up.start, p.id, p.parent_id, p.name, up.depth + 1 \
               FROM places p JOIN up ON p.id = up.parent_id WHERE up.depth < 10000) \
             SELECT start, id, name, depth FROM up ORDER BY start, depth DESC",
            h = household.0
        );
        let rows = db
            .query_all_raw(Statement::from_string(db.get_database_backend(), sql))
            .await
            .context("read the paths of places")?;
        let mut current: Option<(i64, Vec<PlaceStep>)> = None;
        let mut finish = |current: Option<(i64, Vec<PlaceStep>)>| {
            if let Some((start, steps)) = current
                && let Some(path) = PlacePath::new(steps)
            {
                out.insert(PlaceId(start), path);
            }
        };
        for row in rows {
            let start: i64 = row.try_get("", "start").context("read a path's place")?;
            let id: i64 = row.try_get("", "id").context("read a path's step")?;
            let name: String = row.try_get("", "name").context("read a path's step")?;
            let name = PlaceName::new(&name).with_context(|| format!("name of place {id}"))?;
            match &mut current {
                Some((s, steps)) if *s == start => steps.push(PlaceStep { id: PlaceId(id), name }),
                _ => {
                    finish(current.take());
                    current = Some((start, vec![PlaceStep { id: PlaceId(id), name }]));
                }
            }
        }
        finish(current);
    }
    Ok(out)
}

/// Writes the place text of the items in `places` (or in every place of the household): the names of each
/// place's path. Run after a place is renamed or moved, for it and every place below it, and by the migration.
pub(crate) async fn refresh_places<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    places: &[PlaceId],
) -> anyhow::Result<()> {
    let paths = load_paths(db, household, places).await?;
    let backend = db.get_database_backend();
    for (place, path) in paths {
        let stmt = Statement::from_sql_and_values(
            backend,
            match backend {
                DbBackend::Postgres => "UPDATE items SET search_place = $1 WHERE household_id = $2 AND place_id = $3",
                _ => "UPDATE items SET search_place = ? WHERE household_id = ? AND place_id = ?",
            },
            [path.joined().into(), household.0.into(), place.0.into()],
        );
        db.execute_raw(stmt).await.with_context(|| format!("index the place of the items in place {place}"))?;
    }
    Ok(())
}

/// The place and every place below it, for [`refresh_places`].
pub(crate) async fn places_within<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    place: PlaceId,
) -> anyhow::Result<Vec<PlaceId>> {
    // Only integers are written into the text; the depth bound ends the descent even on a tree with a cycle.
    let sql = format!(
        "WITH RECURSIVE within(id, depth) AS (\
           SELECT id, 0 FROM places WHERE id = {p} AND household_id = {h} \
           UNION ALL \
           SELECT places.id, within.depth + 1 FROM places JOIN within ON places.parent_id = within.id \
           WHERE within.depth < 10000) \
         SELECT id FROM within",
        p = place.0,
        h = household.0
    );
    let rows = db
        .query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .context("read the places within a place")?;
    rows.iter().map(|r| r.try_get::<i64>("", "id").map(PlaceId).context("read a place within")).collect()
}

/// A place of the household, inside a transaction or not.
async fn find_place<C: ConnectionTrait>(db: &C, household: HouseholdId, id: PlaceId) -> anyhow::Result<Option<Place>> {
    let row = places::Entity::find_by_id(id.0)
        .filter(places::Column::HouseholdId.eq(household.0))
        .one(db)
        .await
        .with_context(|| format!("read place {id}"))?;
    row.map(mapping::place).transpose()
}

#[async_trait]
impl PlaceRepo for Store {
    async fn insert(&self, household: HouseholdId, place: NewPlace, rec: &Recording) -> Result<Place, RepoError> {
        let txn = self.begin_write().await.context("begin the place insert")?;
        lock_places(&txn, household).await?;
        let all = all_places(&txn, household).await?;
        let tree = PlaceTree::new(&all);
        if let Some(parent) = place.parent_id
            && tree.get(parent).is_none()
        {
            txn.rollback().await.context("roll back the place insert")?;
            return Err(RepoError::NotFound);
        }
        if let Err(e) = tree.check_name(&place.name, place.parent_id, None) {
            txn.rollback().await.context("roll back the place insert")?;
            return Err(RepoError::Conflict(Conflict::Place(e)));
        }
        let stored = insert_row(&txn, household, &place, rec.at).await?;
        insert_events(&txn, household, &[rec.place_created(&stored)]).await?;
        txn.commit().await.context("commit the place insert")?;
        Ok(stored)
    }

    async fn get(&self, household: HouseholdId, id: PlaceId) -> Result<Place, RepoError> {
        find_place(&self.db, household, id).await?.ok_or(RepoError::NotFound)
    }

    async fn all(&self, household: HouseholdId) -> Result<Vec<Place>, RepoError> {
        Ok(all_places(&self.db, household).await?)
    }

    async fn item_counts(&self, household: HouseholdId) -> Result<HashMap<PlaceId, u64>, RepoError> {
        let rows: Vec<(Option<i64>, i64)> = items::Entity::find()
            .select_only()
            .column(items::Column::PlaceId)
            .column_as(Expr::col(items::Column::Id).count(), "n")
            .filter(items::Column::HouseholdId.eq(household.0))
            .filter(items::Column::GoneReason.is_null())
            .filter(items::Column::PlaceId.is_not_null())
            .group_by(items::Column::PlaceId)
            .into_tuple()
            .all(&self.db)
            .await
            .context("count the items in each place")?;
        Ok(rows.into_iter().filter_map(|(p, n)| Some((PlaceId(p?), u64::try_from(n).unwrap_or(0)))).collect())
    }

    async fn update(&self, household: HouseholdId, place: &Place, rec: &Recording) -> Result<Place, RepoError> {
        let txn = self.begin_write().await.context("begin the place update")?;
        lock_places(&txn, household).await?;
        let all = all_places(&txn, household).await?;
        let tree = PlaceTree::new(&all);
        let Some(stored) = tree.get(place.id) else {
            txn.rollback().await.context("roll back the place update")?;
            return Err(RepoError::NotFound);
        };
        let changes = PlaceChanges {
            name: Some(place.name.clone()),
            parent_id: Some(place.parent_id),
            note: Some(place.note.clone()),
        };
        let changed = match tree.apply(stored, &changes) {
            Ok(p) => p,
            Err(e) => {
                txn.rollback().await.context("roll back the place update")?;
                return Err(RepoError::Conflict(Conflict::Place(e)));
            }
        };
        places::Entity::update_many()
            .col_expr(places::Column::Name, Expr::val(changed.name.as_str()))
            .col_expr(places::Column::NameKey, Expr::val(changed.name.key()))
            .col_expr(places::Column::ParentId, Expr::val(changed.parent_id.map(|p| p.0)))
            .col_expr(places::Column::Note, Expr::val(changed.note.clone()))
            .filter(places::Column::Id.eq(place.id.0))
            .filter(places::Column::HouseholdId.eq(household.0))
            .exec(&txn)
            .await
            .with_context(|| format!("update place {}", place.id))?;
        if changed.name != stored.name || changed.parent_id != stored.parent_id {
            // The paths of this place and of every place below it changed: so did the place text of their
            // items in the search index.
            let within = places_within(&txn, household, place.id).await?;
            refresh_places(&txn, household, &within).await?;
        }
        let event = rec.object(ObjectKind::Place, place.id.0, Some(place_fields(stored)), Some(place_fields(&changed)));
        insert_events(&txn, household, event.as_slice()).await?;
        txn.commit().await.context("commit the place update")?;
        Ok(changed)
    }

    async fn delete(&self, household: HouseholdId, id: PlaceId, rec: &Recording) -> Result<(), RepoError> {
        let txn = self.begin_write().await.context("begin the place delete")?;
        lock_places(&txn, household).await?;
        let Some(found) = find_place(&txn, household, id).await? else {
            txn.rollback().await.context("roll back the place delete")?;
            return Err(RepoError::NotFound);
        };
        let children = places::Entity::find()
            .filter(places::Column::HouseholdId.eq(household.0))
            .filter(places::Column::ParentId.eq(id.0))
            .count(&txn)
            .await
            .context("count the places in a place")?;
        let present = items::Entity::find()
            .filter(items::Column::HouseholdId.eq(household.0))
            .filter(items::Column::PlaceId.eq(id.0))
            .filter(items::Column::GoneReason.is_null())
            .count(&txn)
            .await
            .context("count the items in a place")?;
        if children > 0 || present > 0 {
            txn.rollback().await.context("roll back the place delete")?;
            return Err(RepoError::Conflict(Conflict::StillHolds { place: id, items: present, places: children }));
        }
        // Gone items are history and cannot be moved: they lose their place, and their version moves on.
        items::Entity::update_many()
            .col_expr(items::Column::PlaceId, Expr::val(None::<i64>))
            .col_expr(items::Column::SearchPlace, Expr::val(""))
            .col_expr(items::Column::Version, Expr::col(items::Column::Version).add(1))
            .filter(items::Column::HouseholdId.eq(household.0))
            .filter(items::Column::PlaceId.eq(id.0))
            .exec(&txn)
            .await
            .with_context(|| format!("take gone items out of place {id}"))?;
        places::Entity::delete_many()
            .filter(places::Column::Id.eq(id.0))
            .filter(places::Column::HouseholdId.eq(household.0))
            .exec(&txn)
            .await
            .with_context(|| format!("delete place {id}"))?;
        let event = rec.object(ObjectKind::Place, id.0, Some(place_fields(&found)), None);
        insert_events(&txn, household, event.as_slice()).await?;
        txn.commit().await.context("commit the place delete")?;
        Ok(())
    }

    async fn find_or_create(
        &self,
        household: HouseholdId,
        names: &[PlaceName],
        rec: &Recording,
    ) -> Result<Option<FoundPath>, RepoError> {
        if names.is_empty() {
            return Ok(None);
        }
        let txn = self.begin_write().await.context("begin finding a path of places")?;
        lock_places(&txn, household).await?;
        let mut created = Vec::new();
        let path = find_or_create_path(&txn, household, names, rec.at, &mut created).await?;
        let events: Vec<_> = created.iter().map(|p| rec.place_created(p)).collect();
        insert_events(&txn, household, &events).await?;
        txn.commit().await.context("commit finding a path of places")?;
        Ok(path.map(|path| FoundPath { path, created }))
    }

    async fn paths(&self, household: HouseholdId, ids: &[PlaceId]) -> Result<HashMap<PlaceId, PlacePath>, RepoError> {
        Ok(load_paths(&self.db, household, ids).await?)
    }
}
