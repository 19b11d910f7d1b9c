//! The places' use cases: create, list, read, rename or move, delete, and find or create the path a
//! `location` text names.

use crate::error::{Refusal, named};
use crate::ports::PlaceRepo;
use crate::recorder::{Actor, Recorder};
use crate::{Conflict, Error, RepoError};
use std::collections::HashMap;
use std::sync::Arc;
use trove_domain::history::{Action, ObjectKind};
use trove_domain::place::{self, NewPlace, Place, PlaceChanges, PlacePath, PlaceRefused, PlaceTree};
use trove_domain::{HouseholdId, PlaceId};

/// A place with the way to it and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceView {
    pub place: Place,
    /// Root first, the place itself last.
    pub path: PlacePath,
    /// Present items directly in it.
    pub items: u64,
    /// Present items in it and in every place below it.
    pub items_within: u64,
}

/// A place and the places directly in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceDetail {
    pub view: PlaceView,
    /// Ordered by id.
    pub children: Vec<PlaceView>,
}

/// A refused change of the tree: a move that would make a cycle or under a missing place is a rule (422); a
/// name a sibling already has is a conflict with the stored tree (409).
pub(crate) fn refused(e: PlaceRefused) -> Error {
    Error::Refused(Refusal::Place(e))
}

pub(crate) fn no_place(id: PlaceId) -> impl Fn(RepoError) -> Error {
    named(ObjectKind::Place, id.0)
}

/// The places use cases.
#[derive(Clone)]
pub struct Places {
    places: Arc<dyn PlaceRepo>,
    /// Where every change of a place is recorded, with who made it.
    recorder: Recorder,
}

impl std::fmt::Debug for Places {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Places").finish_non_exhaustive()
    }
}

/// Views of the places of `ids` over the whole tree and the counts of items directly in each place.
fn views(
    tree: &PlaceTree<'_>,
    direct: &HashMap<PlaceId, u64>,
    ids: impl IntoIterator<Item = PlaceId>,
) -> Vec<PlaceView> {
    let within = tree.within(direct);
    ids.into_iter()
        .filter_map(|id| {
            let place = tree.get(id)?;
            Some(PlaceView {
                place: place.clone(),
                path: tree.path(id)?,
                items: direct.get(&id).copied().unwrap_or(0),
                items_within: within.get(&id).copied().unwrap_or(0),
            })
        })
        .collect()
}

impl Places {
    pub fn new(places: Arc<dyn PlaceRepo>, recorder: Recorder) -> Self {
        Self { places, recorder }
    }

    /// The whole tree and the counts of items directly in each place: two queries.
    async fn tree_and_counts(&self, household: HouseholdId) -> Result<(Vec<Place>, HashMap<PlaceId, u64>), Error> {
        Ok((self.places.all(household).await?, self.places.item_counts(household).await?))
    }

    /// The view of one place.
    async fn view(&self, household: HouseholdId, id: PlaceId) -> Result<PlaceView, Error> {
        let (all, direct) = self.tree_and_counts(household).await?;
        views(&PlaceTree::new(&all), &direct, [id])
            .pop()
            .ok_or_else(|| Error::NotFound { what: ObjectKind::Place, id: id.0 })
    }

    /// Stores a new place; recorded as the event `create` of `actor`.
    ///
    /// # Errors
    /// [`Refusal::Place`] when the parent is not a place of the household; [`Refusal::Place`] (a name) or [`Refusal::StateChanged`] when a sibling
    /// already has the name (ignoring case). Nothing is written then.
    pub async fn create(&self, actor: Actor, new: NewPlace) -> Result<PlaceView, Error> {
        let household = actor.household;
        let all = self.places.all(household).await?;
        PlaceTree::new(&all).check_name(&new.name, new.parent_id, None).map_err(refused)?;
        let parent = new.parent_id;
        let rec = self.recorder.recording(actor, Action::Create);
        let stored = self.places.insert(household, new, &rec).await.map_err(|e| match e {
            RepoError::NotFound => refused(PlaceRefused::NoSuchParent(parent.unwrap_or(PlaceId(0)))),
            other => other.into(),
        })?;
        self.view(household, stored.id).await
    }

    /// Every place of the household with its path and counts, ordered by id.
    ///
    /// # Errors
    /// `Unexpected` when the store fails.
    pub async fn list(&self, household: HouseholdId) -> Result<Vec<PlaceView>, Error> {
        let (all, direct) = self.tree_and_counts(household).await?;
        let ids: Vec<PlaceId> = all.iter().map(|p| p.id).collect();
        Ok(views(&PlaceTree::new(&all), &direct, ids))
    }

    /// One place with the places directly in it.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the place.
    pub async fn get(&self, household: HouseholdId, id: PlaceId) -> Result<PlaceDetail, Error> {
        let (all, direct) = self.tree_and_counts(household).await?;
        let tree = PlaceTree::new(&all);
        let view =
            views(&tree, &direct, [id]).pop().ok_or_else(|| Error::NotFound { what: ObjectKind::Place, id: id.0 })?;
        let children = views(&tree, &direct, tree.children(Some(id)).iter().map(|p| p.id));
        Ok(PlaceDetail { view, children })
    }

    /// Renames, moves or annotates a place; recorded as the event `patch` of `actor` with the fields changed.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Place`] for a move under itself, under one of its descendants or under a
    /// missing place; [`Refusal::Place`] (a name) or [`Refusal::StateChanged`] when a sibling already has the name, or another writer changed the
    /// tree in between so that the change no longer holds. Nothing is written then.
    pub async fn change(&self, actor: Actor, id: PlaceId, changes: PlaceChanges) -> Result<PlaceView, Error> {
        let household = actor.household;
        let all = self.places.all(household).await?;
        let tree = PlaceTree::new(&all);
        let place = tree.get(id).ok_or_else(|| Error::NotFound { what: ObjectKind::Place, id: id.0 })?;
        let changed = tree.apply(place, &changes).map_err(refused)?;
        let rec = self.recorder.recording(actor, Action::Patch);
        self.places.update(household, &changed, &rec).await.map_err(no_place(id))?;
        self.view(household, id).await
    }

    /// Deletes an empty place; recorded as the event `delete` of `actor` with the values it had.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Place`] (a name) or [`Refusal::StateChanged`] while items or places are in it.
    pub async fn delete(&self, actor: Actor, id: PlaceId) -> Result<(), Error> {
        let household = actor.household;
        let place = self.places.get(household, id).await.map_err(no_place(id))?;
        let rec = self.recorder.recording(actor, Action::Delete);
        self.places.delete(household, id, &rec).await.map_err(|e| match e {
            // Named as its owner calls it, not by its id.
            RepoError::Conflict(Conflict::StillHolds { items, places, .. }) => {
                Refusal::PlaceStillHolds { name: place.name.to_string(), items, places }.into()
            }
            other => no_place(id)(other),
        })?;
        Ok(())
    }

    /// The path of one place.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the place.
    pub async fn path(&self, household: HouseholdId, id: PlaceId) -> Result<PlacePath, Error> {
        self.places
            .paths(household, &[id])
            .await?
            .remove(&id)
            .ok_or_else(|| Error::NotFound { what: ObjectKind::Place, id: id.0 })
    }

    /// The paths of many places (those of a page of items) in one query; missing ids are left out.
    ///
    /// # Errors
    /// `Unexpected` when the store fails.
    pub async fn paths(&self, household: HouseholdId, ids: &[PlaceId]) -> Result<HashMap<PlaceId, PlacePath>, Error> {
        Ok(self.places.paths(household, ids).await?)
    }

    /// Finds or creates the path a `location` text names ("Garage / Shelf B2"); `None` for a blank text. Each
    /// place created is recorded as the event `create` of `actor`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when a part of the text is not a place name (nothing is written then).
    pub async fn find_or_create(&self, actor: Actor, location: &str) -> Result<Option<PlacePath>, Error> {
        resolve(self.places.as_ref(), &self.recorder, actor, location).await
    }
}

/// Finds or creates the path a `location` text names, read strictly: a part that is not a place name is
/// refused, not repaired. The places created are recorded as `create` events of `actor`.
pub(crate) async fn resolve(
    places: &dyn PlaceRepo,
    recorder: &Recorder,
    actor: Actor,
    location: &str,
) -> Result<Option<PlacePath>, Error> {
    let names = place::parse_location(location).map_err(|e| Error::Invalid(format!("location: {e}")))?;
    let rec = recorder.recording(actor, Action::Create);
    let Some(found) = places.find_or_create(actor.household, &names, &rec).await? else { return Ok(None) };
    Ok(Some(found.path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::FoundPath;
    use crate::ports::clock::MockClock;
    use crate::ports::places::MockPlaceRepo;
    use chrono::{TimeZone, Utc};
    use trove_domain::place::{PlaceName, PlaceStep};

    const H: HouseholdId = HouseholdId(1);
    const A: Actor = Actor { household: H, member: Some(trove_domain::people::MemberId(4)) };

    fn place(id: i64, name: &str, parent: Option<i64>) -> Place {
        Place {
            id: PlaceId(id),
            name: PlaceName::new(name).unwrap(),
            parent_id: parent.map(PlaceId),
            note: None,
            created_at: Utc.with_ymd_and_hms(2026, 1, 1, 12, 0, 0).unwrap(),
        }
    }

    fn tree() -> Vec<Place> {
        vec![
            place(1, "House", None),
            place(2, "Garage", Some(1)),
            place(3, "Shelf B2", Some(2)),
            place(4, "Shed", None),
        ]
    }

    fn places(repo: MockPlaceRepo) -> Places {
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| Utc.with_ymd_and_hms(2026, 2, 1, 12, 0, 0).unwrap());
        Places::new(Arc::new(repo), crate::recorder::capturing())
    }

    fn reading(repo: &mut MockPlaceRepo) {
        repo.expect_all().returning(|_| Ok(tree()));
        repo.expect_item_counts().returning(|_| Ok([(PlaceId(3), 2), (PlaceId(2), 1), (PlaceId(4), 5)].into()));
    }

    #[tokio::test]
    async fn views_carry_paths_and_counts_within() {
        let mut repo = MockPlaceRepo::new();
        reading(&mut repo);
        let p = places(repo);
        let list = p.list(H).await.unwrap();
        let got: Vec<(i64, String, u64, u64)> =
            list.iter().map(|v| (v.place.id.0, v.path.joined(), v.items, v.items_within)).collect();
        assert_eq!(
            got,
            vec![
                (1, "House".into(), 0, 3),
                (2, "House / Garage".into(), 1, 3),
                (3, "House / Garage / Shelf B2".into(), 2, 2),
                (4, "Shed".into(), 5, 5),
            ]
        );
        let detail = p.get(H, PlaceId(1)).await.unwrap();
        assert_eq!(detail.children.iter().map(|c| c.place.id.0).collect::<Vec<_>>(), [2]);
        assert_eq!(p.get(H, PlaceId(9)).await.unwrap_err().to_string(), "no such place 9");
    }

    #[tokio::test]
    async fn moves_under_a_descendant_are_refused_before_writing() {
        let mut repo = MockPlaceRepo::new();
        reading(&mut repo);
        repo.expect_update().never();
        let p = places(repo);
        let under = |parent| PlaceChanges { parent_id: Some(Some(PlaceId(parent))), ..PlaceChanges::default() };
        let err = p.change(A, PlaceId(1), under(3)).await.unwrap_err();
        assert!(
            matches!(&err, Error::Refused(_))
                && err.to_string() == "place 1 cannot be moved under place 3, which is inside it",
            "{err:?}"
        );
        let err = p.change(A, PlaceId(2), under(2)).await.unwrap_err();
        assert!(matches!(err, Error::Refused(_)));
        let err = p.change(A, PlaceId(9), under(1)).await.unwrap_err();
        assert!(matches!(&err, Error::NotFound { .. } if err.to_string() == "no such place 9"), "{err:?}");
        let rename = PlaceChanges { name: Some(PlaceName::new("house").unwrap()), ..PlaceChanges::default() };
        let err = p.change(A, PlaceId(4), rename).await.unwrap_err();
        assert!(
            matches!(&err, Error::Refused(_))
                && err.to_string() == "there is already a place named \"house\" at the top",
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn a_move_writes_the_changed_place() {
        let mut repo = MockPlaceRepo::new();
        reading(&mut repo);
        repo.expect_update()
            .withf(|h, p, _| *h == H && p.id == PlaceId(3) && p.parent_id == Some(PlaceId(4)))
            .times(1)
            .returning(|_, p, _| Ok(p.clone()));
        let p = places(repo);
        let changes = PlaceChanges { parent_id: Some(Some(PlaceId(4))), ..PlaceChanges::default() };
        p.change(A, PlaceId(3), changes).await.unwrap();
    }

    #[tokio::test]
    async fn changes_are_recorded_with_who_made_them_and_what_changed() {
        let mut repo = MockPlaceRepo::new();
        reading(&mut repo);
        // The store writes each event in the write's transaction by the recording it is given: kept here.
        type Recs = Arc<std::sync::Mutex<Vec<(String, Option<i64>, i64)>>>;
        let recs: Recs = Arc::default();
        let into = recs.clone();
        repo.expect_update().returning(move |_, p, rec| {
            into.lock().unwrap().push((rec.action.to_string(), rec.member.map(|m| m.0), p.id.0));
            Ok(p.clone())
        });
        let into = recs.clone();
        repo.expect_insert().returning(move |_, new, rec| {
            into.lock().unwrap().push((rec.action.to_string(), rec.member.map(|m| m.0), 0));
            Ok(Place { id: PlaceId(5), name: new.name, parent_id: new.parent_id, note: new.note, created_at: rec.at })
        });
        repo.expect_get().returning(|_, id| tree().into_iter().find(|p| p.id == id).ok_or(RepoError::NotFound));
        let into = recs.clone();
        repo.expect_delete().returning(move |_, id, rec| {
            into.lock().unwrap().push((rec.action.to_string(), rec.member.map(|m| m.0), id.0));
            Ok(())
        });
        let recorder = crate::recorder::capturing();
        let p = Places::new(Arc::new(repo), recorder);

        let changes = PlaceChanges { parent_id: Some(Some(PlaceId(1))), ..PlaceChanges::default() };
        p.change(A, PlaceId(4), changes).await.unwrap();
        let new = NewPlace { name: PlaceName::new("Loft").unwrap(), parent_id: Some(PlaceId(1)), note: None };
        // The view of the new place is not in the mocked tree: the create is written before it is read.
        let _ = p.create(A, new).await;
        p.delete(Actor::command_line(H), PlaceId(3)).await.unwrap();
        assert_eq!(
            *recs.lock().unwrap(),
            [("patch".to_owned(), Some(4), 4), ("create".to_owned(), Some(4), 0), ("delete".to_owned(), None, 3)]
        );
    }

    #[tokio::test]
    async fn create_checks_siblings_and_parent() {
        let mut repo = MockPlaceRepo::new();
        repo.expect_all().returning(|_| Ok(tree()));
        repo.expect_insert().never();
        let p = places(repo);
        let new = |name: &str, parent: Option<i64>| NewPlace {
            name: PlaceName::new(name).unwrap(),
            parent_id: parent.map(PlaceId),
            note: None,
        };
        assert!(matches!(p.create(A, new("GARAGE", Some(1))).await, Err(Error::Refused(_))));
        let err = p.create(A, new("Box", Some(77))).await.unwrap_err();
        assert!(matches!(&err, Error::Refused(_)) && err.to_string() == "no such place 77", "{err:?}");
    }

    #[tokio::test]
    async fn location_texts_are_read_strictly_and_the_places_made_are_recorded() {
        let mut repo = MockPlaceRepo::new();
        repo.expect_find_or_create()
            // The places it makes are recorded by the store as `create`s of the actor.
            .withf(|_, names, rec| {
                names.iter().map(PlaceName::as_str).collect::<Vec<_>>() == ["Garage", "Shelf B2"]
                    && (rec.action.as_str(), rec.member) == ("create", A.member)
            })
            .times(1)
            .returning(|_, _, _| {
                let (garage, shelf) = (place(2, "Garage", None), place(7, "Shelf B2", Some(2)));
                let path = PlacePath::new(vec![
                    PlaceStep { id: garage.id, name: garage.name.clone() },
                    PlaceStep { id: shelf.id, name: shelf.name.clone() },
                ])
                .unwrap();
                // The garage was there; the shelf is made.
                Ok(Some(FoundPath { path, created: vec![shelf] }))
            });
        let recorder = crate::recorder::capturing();
        let p = Places::new(Arc::new(repo), recorder);
        let path = p.find_or_create(A, "Garage / Shelf B2").await.unwrap().unwrap();
        assert_eq!(path.joined(), "Garage / Shelf B2");
        let err = p.find_or_create(A, "Garage / a\u{1}").await.unwrap_err();
        assert!(matches!(&err, Error::Invalid(m) if m.starts_with("location: place name")), "{err:?}");
    }
}
