//! Places: where things are. Places nest to any depth (house > garage > shelf B2 > box 4); an item is in at
//! most one place. The rules here keep the tree a tree (no place under itself or under one of its own
//! descendants), keep sibling names apart (ignoring case), build a place's path, and read a `location` text
//! such as "Garage / Shelf B2" as the path it names.

use crate::Timestamp;
use crate::ids::PlaceId;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;

/// Longest place name kept, in characters.
pub const NAME_MAX: usize = 100;
/// Longest note kept, in characters.
pub const NOTE_MAX: usize = 1000;
/// What joins the names of a path in a `location` text: "Garage / Shelf B2".
pub const SEPARATOR: &str = " / ";

/// Why a place's value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    #[error("place name must not be empty")]
    EmptyName,
    #[error("place name {0:?} is longer than {NAME_MAX} characters")]
    NameTooLong(String),
    #[error("place name {0:?} must not contain control characters")]
    ControlCharacter(String),
    #[error("place name {0:?} must not contain \" / \", which separates the places of a path")]
    Separator(String),
    #[error("place note is longer than {NOTE_MAX} characters")]
    NoteTooLong,
    #[error(transparent)]
    NoteControlCharacter(#[from] crate::text::ControlCharacter),
}

/// What the owner calls a place: trimmed, non-empty, at most [`NAME_MAX`] characters, no control characters,
/// and nothing that would read as the [`SEPARATOR`] of a path once joined ("a / b", "a /", "/ b").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PlaceName(String);

impl PlaceName {
    /// ```
    /// use trove_domain::place::PlaceName;
    /// assert_eq!(PlaceName::new("  Shelf B2 ").unwrap().as_str(), "Shelf B2");
    /// assert!(PlaceName::new("Garage / Shelf").is_err());
    /// ```
    ///
    /// # Errors
    /// The [`PlaceError`] naming what is wrong with the name.
    pub fn new(raw: &str) -> Result<Self, PlaceError> {
        let t = raw.trim();
        if t.is_empty() {
            return Err(PlaceError::EmptyName);
        }
        if t.chars().count() > NAME_MAX {
            return Err(PlaceError::NameTooLong(crate::text::clip(t, 40) + "..."));
        }
        if crate::text::check("place name", t, crate::text::Lines::One).is_err() {
            return Err(PlaceError::ControlCharacter(t.to_owned()));
        }
        if t.contains(SEPARATOR) || t.starts_with("/ ") || t.ends_with(" /") {
            return Err(PlaceError::Separator(t.to_owned()));
        }
        Ok(Self(t.to_owned()))
    }

    /// Makes a name of any text, never failing: a valid name is kept as it is; otherwise control characters
    /// become spaces, slashes and spaces at the ends go, separators inside become single slashes, and it is cut
    /// to [`NAME_MAX`] characters. `None` when nothing is left. For texts written before places existed (old `location` strings, imports), so
    /// nothing of them is lost.
    ///
    /// ```
    /// use trove_domain::place::PlaceName;
    /// assert_eq!(PlaceName::lenient(" box\t4 /").unwrap().as_str(), "box 4");
    /// assert_eq!(PlaceName::lenient(" \t "), None);
    /// ```
    pub fn lenient(raw: &str) -> Option<Self> {
        if let Ok(name) = Self::new(raw) {
            return Some(name);
        }
        let cleaned: String = raw.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        let mut t = cleaned.trim_matches(|c: char| c == '/' || c.is_whitespace()).to_owned();
        while t.contains(SEPARATOR) {
            t = t.replace(SEPARATOR, "/");
        }
        let t: String = t.chars().take(NAME_MAX).collect();
        let t = t.trim_matches(|c: char| c == '/' || c.is_whitespace());
        Self::new(t).ok()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// What sibling names are compared by: the name in lower case (all of Unicode, the same on every store).
    pub fn key(&self) -> String {
        self.0.to_lowercase()
    }
}

impl TryFrom<String> for PlaceName {
    type Error = PlaceError;
    fn try_from(s: String) -> Result<Self, PlaceError> {
        Self::new(&s)
    }
}

impl From<PlaceName> for String {
    fn from(n: PlaceName) -> String {
        n.0
    }
}

impl fmt::Display for PlaceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks a place's note: trimmed, at most [`NOTE_MAX`] characters; blank is none.
///
/// # Errors
/// [`PlaceError::NoteTooLong`], [`PlaceError::NoteControlCharacter`] (tab and line breaks are allowed).
pub fn note(raw: Option<&str>) -> Result<Option<String>, PlaceError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(t) if t.chars().count() > NOTE_MAX => Err(PlaceError::NoteTooLong),
        Some(t) => Ok(Some(crate::text::check("note", t, crate::text::Lines::Many).map(|()| t.to_owned())?)),
    }
}

/// A place, as the store holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub id: PlaceId,
    pub name: PlaceName,
    /// The place it is in; `None` at the top.
    pub parent_id: Option<PlaceId>,
    pub note: Option<String>,
    pub created_at: Timestamp,
}

/// A new place before the store gives it an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPlace {
    pub name: PlaceName,
    pub parent_id: Option<PlaceId>,
    pub note: Option<String>,
}

/// The changes an owner may make to a place at once; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlaceChanges {
    pub name: Option<PlaceName>,
    /// `Some(None)` moves the place to the top.
    pub parent_id: Option<Option<PlaceId>>,
    /// `Some(None)` clears the note.
    pub note: Option<Option<String>>,
}

/// One place of a path: its id and its name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlaceStep {
    pub id: PlaceId,
    pub name: PlaceName,
}

/// The way to a place from the top: root first, the place itself last; never empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlacePath(Vec<PlaceStep>);

impl PlacePath {
    /// `None` for no steps: a path always ends at its place.
    pub fn new(steps: Vec<PlaceStep>) -> Option<Self> {
        (!steps.is_empty()).then_some(Self(steps))
    }

    /// Root first, the place itself last.
    pub fn steps(&self) -> &[PlaceStep] {
        &self.0
    }

    /// The place the path leads to.
    pub fn place(&self) -> &PlaceStep {
        self.0.last().unwrap_or_else(|| unreachable!("a path is never empty"))
    }

    pub fn id(&self) -> PlaceId {
        self.place().id
    }

    /// The names joined with [`SEPARATOR`]: "Garage / Shelf B2", the `location` text of an item there.
    pub fn joined(&self) -> String {
        join(self.0.iter().map(|s| &s.name))
    }
}

impl fmt::Display for PlacePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.joined())
    }
}

/// Names joined with [`SEPARATOR`].
pub fn join<'a>(names: impl IntoIterator<Item = &'a PlaceName>) -> String {
    names.into_iter().map(PlaceName::as_str).collect::<Vec<_>>().join(SEPARATOR)
}

/// Reads a `location` text as the names of the path it gives, root first: split on [`SEPARATOR`], each part
/// trimmed, blank parts skipped. A blank text is no path (an empty list).
///
/// ```
/// use trove_domain::place::parse_location;
/// let names = parse_location("Garage / Shelf B2 ").unwrap();
/// assert_eq!(names.iter().map(|n| n.as_str()).collect::<Vec<_>>(), ["Garage", "Shelf B2"]);
/// ```
///
/// # Errors
/// The [`PlaceError`] of the first part that is not a place name (too long, control characters).
pub fn parse_location(text: &str) -> Result<Vec<PlaceName>, PlaceError> {
    text.split(SEPARATOR).filter(|s| !s.trim().is_empty()).map(PlaceName::new).collect()
}

/// Like [`parse_location`], but never failing: each part made a name by [`PlaceName::lenient`]. For texts
/// written before places existed, so that nothing of them is lost.
pub fn parse_location_lenient(text: &str) -> Vec<PlaceName> {
    text.split(SEPARATOR).filter_map(PlaceName::lenient).collect()
}

/// Why a change to the tree of places was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceRefused {
    #[error("place {0} cannot be moved under itself")]
    UnderItself(PlaceId),
    #[error("place {place} cannot be moved under place {parent}, which is inside it")]
    UnderDescendant { place: PlaceId, parent: PlaceId },
    #[error("there is already a place named {name:?} {}", where_words(*.parent))]
    DuplicateName { name: String, parent: Option<PlaceId> },
    #[error("no such place {0}")]
    NoSuchParent(PlaceId),
}

fn where_words(parent: Option<PlaceId>) -> String {
    match parent {
        Some(p) => format!("in place {p}"),
        None => "at the top".to_owned(),
    }
}

/// The tree of a household's places as the rules read it: each place's parent and name.
#[derive(Debug, Clone, Default)]
pub struct PlaceTree<'a> {
    places: HashMap<PlaceId, &'a Place>,
}

impl<'a> PlaceTree<'a> {
    pub fn new(places: &'a [Place]) -> Self {
        Self { places: places.iter().map(|p| (p.id, p)).collect() }
    }

    pub fn get(&self, id: PlaceId) -> Option<&'a Place> {
        self.places.get(&id).copied()
    }

    /// The places above `id`, nearest first, `id` not included. Stops at the top, at a parent the tree does
    /// not hold, or after as many steps as there are places (so a tree that somehow holds a cycle still ends).
    pub fn ancestors(&self, id: PlaceId) -> impl Iterator<Item = &'a Place> + '_ {
        let mut next = self.get(id).and_then(|p| p.parent_id);
        let mut left = self.places.len();
        std::iter::from_fn(move || {
            let place = self.get(next?)?;
            if left == 0 {
                return None;
            }
            left -= 1;
            next = place.parent_id;
            Some(place)
        })
    }

    /// The path to `id`: root first, itself last. `None` when the tree does not hold `id`.
    ///
    /// ```
    /// # use trove_domain::place::*;
    /// # use trove_domain::PlaceId;
    /// # let at = chrono::Utc::now();
    /// let place = |id, name: &str, parent| Place {
    ///     id: PlaceId(id), name: PlaceName::new(name).unwrap(), parent_id: parent, note: None, created_at: at };
    /// let places = [place(1, "Garage", None), place(2, "Shelf B2", Some(PlaceId(1)))];
    /// let tree = PlaceTree::new(&places);
    /// assert_eq!(tree.path(PlaceId(2)).unwrap().joined(), "Garage / Shelf B2");
    /// ```
    pub fn path(&self, id: PlaceId) -> Option<PlacePath> {
        let place = self.get(id)?;
        let mut steps: Vec<PlaceStep> = std::iter::once(place)
            .chain(self.ancestors(id))
            .map(|p| PlaceStep { id: p.id, name: p.name.clone() })
            .collect();
        steps.reverse();
        PlacePath::new(steps)
    }

    /// The places directly in `parent` (`None`: at the top), by id.
    pub fn children(&self, parent: Option<PlaceId>) -> Vec<&'a Place> {
        let mut out: Vec<&Place> = self.places.values().copied().filter(|p| p.parent_id == parent).collect();
        out.sort_by_key(|p| p.id);
        out
    }

    /// How many items each place holds within it (itself and every place below), from the count directly in
    /// each place. Places holding nothing are left out.
    pub fn within(&self, direct: &HashMap<PlaceId, u64>) -> HashMap<PlaceId, u64> {
        let mut out: HashMap<PlaceId, u64> = HashMap::new();
        for (&id, &n) in direct {
            if n == 0 || self.get(id).is_none() {
                continue;
            }
            *out.entry(id).or_default() += n;
            for a in self.ancestors(id) {
                *out.entry(a.id).or_default() += n;
            }
        }
        out
    }

    /// **The** rule for putting a place named `name` under `parent`: the parent exists, and no sibling but
    /// `except` (the place itself, when it is renamed or moved) has the same name ignoring case.
    ///
    /// # Errors
    /// [`PlaceRefused::NoSuchParent`] or [`PlaceRefused::DuplicateName`].
    pub fn check_name(
        &self,
        name: &PlaceName,
        parent: Option<PlaceId>,
        except: Option<PlaceId>,
    ) -> Result<(), PlaceRefused> {
        if let Some(p) = parent
            && self.get(p).is_none()
        {
            return Err(PlaceRefused::NoSuchParent(p));
        }
        let key = name.key();
        if self.places.values().any(|s| s.parent_id == parent && Some(s.id) != except && s.name.key() == key) {
            return Err(PlaceRefused::DuplicateName { name: name.to_string(), parent });
        }
        Ok(())
    }

    /// **The** rule for moving `place` under `parent`: never under itself, never under one of its own
    /// descendants (the tree would get a cycle and lose the way to the top).
    ///
    /// # Errors
    /// [`PlaceRefused::UnderItself`], [`PlaceRefused::UnderDescendant`] or [`PlaceRefused::NoSuchParent`].
    pub fn check_move(&self, place: PlaceId, parent: Option<PlaceId>) -> Result<(), PlaceRefused> {
        let Some(parent) = parent else { return Ok(()) };
        if parent == place {
            return Err(PlaceRefused::UnderItself(place));
        }
        if self.get(parent).is_none() {
            return Err(PlaceRefused::NoSuchParent(parent));
        }
        if self.ancestors(parent).any(|a| a.id == place) {
            return Err(PlaceRefused::UnderDescendant { place, parent });
        }
        Ok(())
    }

    /// Checks `changes` to `place` against every rule of the tree, then answers the place as changed.
    ///
    /// # Errors
    /// The [`PlaceRefused`] that applies first: the move, then the name among its (new) siblings.
    pub fn apply(&self, place: &Place, changes: &PlaceChanges) -> Result<Place, PlaceRefused> {
        let mut out = place.clone();
        if let Some(parent) = changes.parent_id {
            self.check_move(place.id, parent)?;
            out.parent_id = parent;
        }
        if let Some(name) = &changes.name {
            out.name = name.clone();
        }
        if out.parent_id != place.parent_id || out.name.key() != place.name.key() {
            self.check_name(&out.name, out.parent_id, Some(place.id))?;
        }
        if let Some(note) = &changes.note {
            out.note = note.clone();
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use proptest::prelude::*;

    fn place(id: i64, name: &str, parent: Option<i64>) -> Place {
        Place {
            id: PlaceId(id),
            name: PlaceName::new(name).unwrap(),
            parent_id: parent.map(PlaceId),
            note: None,
            created_at: Utc.with_ymd_and_hms(2026, 1, 1, 12, 0, 0).unwrap(),
        }
    }

    /// House (1) > Garage (2) > Shelf B2 (3) > Box 4 (4); House > Attic (5); Shed (6) at the top.
    fn house() -> Vec<Place> {
        vec![
            place(1, "House", None),
            place(2, "Garage", Some(1)),
            place(3, "Shelf B2", Some(2)),
            place(4, "Box 4", Some(3)),
            place(5, "Attic", Some(1)),
            place(6, "Shed", None),
        ]
    }

    #[test]
    fn names_are_validated() {
        let check = |raw: &str, want: Result<&str, &str>| {
            assert_eq!(
                PlaceName::new(raw).map(|n| n.to_string()).map_err(|e| e.to_string()),
                want.map(str::to_owned).map_err(str::to_owned),
                "{raw:?}"
            );
        };
        check("  Shelf B2 ", Ok("Shelf B2"));
        check("AC/DC box", Ok("AC/DC box"));
        check("1/2", Ok("1/2"));
        check("Über-Regal", Ok("Über-Regal"));
        check("   ", Err("place name must not be empty"));
        check(&"x".repeat(101), Err(&format!("place name {:?} is longer than 100 characters", "x".repeat(40) + "...")));
        check(&"é".repeat(100), Ok(&"é".repeat(100)));
        check("box\u{7}", Err("place name \"box\\u{7}\" must not contain control characters"));
        check("a\nb", Err("place name \"a\\nb\" must not contain control characters"));
        check(
            "Garage / Shelf",
            Err("place name \"Garage / Shelf\" must not contain \" / \", which separates the places of a path"),
        );
        check(
            "Garage /",
            Err("place name \"Garage /\" must not contain \" / \", which separates the places of a path"),
        );
        check("/ Shelf", Err("place name \"/ Shelf\" must not contain \" / \", which separates the places of a path"));
        assert_eq!(PlaceName::new("Shelf").unwrap().key(), PlaceName::new("SHELF").unwrap().key());
        assert_eq!(PlaceName::new("Über").unwrap().key(), PlaceName::new("über").unwrap().key());
        assert_eq!(note(Some("  ")), Ok(None));
        assert_eq!(note(Some(" left side ")), Ok(Some("left side".into())));
        assert_eq!(note(Some(&"n".repeat(1001))), Err(PlaceError::NoteTooLong));
    }

    #[test]
    fn locations_read_as_paths() {
        let check = |text: &str, want: Result<&[&str], &str>| {
            let got = parse_location(text)
                .map(|v| v.iter().map(|n| n.as_str().to_owned()).collect::<Vec<_>>())
                .map_err(|e| e.to_string());
            assert_eq!(
                got,
                want.map(|w| w.iter().map(|s| (*s).to_owned()).collect()).map_err(str::to_owned),
                "{text:?}"
            );
        };
        check("Garage / Shelf B2", Ok(&["Garage", "Shelf B2"]));
        check(" Garage /  Shelf B2 / Box 4 ", Ok(&["Garage", "Shelf B2", "Box 4"]));
        check("box, shelf B2", Ok(&["box, shelf B2"]));
        check("Garage/Shelf 2", Ok(&["Garage/Shelf 2"]));
        check("Garage /  / Shelf", Ok(&["Garage", "Shelf"]));
        check("", Ok(&[]));
        check("  ", Ok(&[]));
        check("Garage / bad\u{1}", Err("place name \"bad\\u{1}\" must not contain control characters"));

        let lenient =
            |text: &str| parse_location_lenient(text).iter().map(|n| n.as_str().to_owned()).collect::<Vec<_>>();
        assert_eq!(lenient("Garage / bad\u{1}name"), ["Garage", "bad name"]);
        assert_eq!(lenient("a / / b"), ["a", "b"]);
        assert_eq!(lenient(" / "), Vec::<String>::new());
        assert_eq!(lenient(&"y".repeat(150)), ["y".repeat(100)]);
        assert_eq!(lenient("Garage / ///"), ["Garage", "///"]);
        assert_eq!(lenient("Garage / x /"), ["Garage", "x"]);
    }

    #[test]
    fn paths_run_from_the_top_to_the_place() {
        let places = house();
        let tree = PlaceTree::new(&places);
        let names =
            |id: i64| tree.path(PlaceId(id)).map(|p| p.steps().iter().map(|s| s.name.to_string()).collect::<Vec<_>>());
        assert_eq!(names(4).unwrap(), ["House", "Garage", "Shelf B2", "Box 4"]);
        assert_eq!(names(6).unwrap(), ["Shed"]);
        assert_eq!(names(99), None);
        let path = tree.path(PlaceId(3)).unwrap();
        assert_eq!((path.id(), path.joined()), (PlaceId(3), "House / Garage / Shelf B2".to_owned()));
        assert_eq!(
            parse_location(&path.joined()).unwrap(),
            path.steps().iter().map(|s| s.name.clone()).collect::<Vec<_>>()
        );
        assert_eq!(tree.children(Some(PlaceId(1))).iter().map(|p| p.id.0).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(tree.children(None).iter().map(|p| p.id.0).collect::<Vec<_>>(), [1, 6]);
    }

    #[test]
    fn counts_within_add_up_the_places_below() {
        let places = house();
        let tree = PlaceTree::new(&places);
        let direct: HashMap<PlaceId, u64> =
            [(PlaceId(4), 3), (PlaceId(2), 1), (PlaceId(5), 2), (PlaceId(99), 7)].into();
        let within = tree.within(&direct);
        let get = |id: i64| within.get(&PlaceId(id)).copied().unwrap_or(0);
        assert_eq!([get(1), get(2), get(3), get(4), get(5), get(6), get(99)], [6, 4, 3, 3, 2, 0, 0]);
    }

    #[test]
    fn moves_keep_the_tree_a_tree() {
        let places = house();
        let tree = PlaceTree::new(&places);
        let check = |place: i64, parent: Option<i64>, want: Result<(), &str>| {
            assert_eq!(
                tree.check_move(PlaceId(place), parent.map(PlaceId)).map_err(|e| e.to_string()),
                want.map_err(str::to_owned),
                "{place} under {parent:?}"
            );
        };
        check(3, Some(5), Ok(()));
        check(4, None, Ok(()));
        check(1, Some(6), Ok(()));
        check(2, Some(2), Err("place 2 cannot be moved under itself"));
        check(2, Some(3), Err("place 2 cannot be moved under place 3, which is inside it"));
        check(1, Some(4), Err("place 1 cannot be moved under place 4, which is inside it"));
        check(2, Some(42), Err("no such place 42"));
    }

    #[test]
    fn sibling_names_differ_ignoring_case() {
        let places = house();
        let tree = PlaceTree::new(&places);
        let check = |name: &str, parent: Option<i64>, except: Option<i64>, want: Result<(), &str>| {
            let name = PlaceName::new(name).unwrap();
            assert_eq!(
                tree.check_name(&name, parent.map(PlaceId), except.map(PlaceId)).map_err(|e| e.to_string()),
                want.map_err(str::to_owned),
            );
        };
        check("garage", Some(1), None, Err("there is already a place named \"garage\" in place 1"));
        check("SHED", None, None, Err("there is already a place named \"SHED\" at the top"));
        check("Garage", None, None, Ok(()));
        check("garage", Some(1), Some(2), Ok(()));
        check("Box", Some(7), None, Err("no such place 7"));

        // Renames and moves go through both rules; a refused change answers nothing.
        let garage = tree.get(PlaceId(2)).unwrap();
        let rename = |n: &str| PlaceChanges { name: Some(PlaceName::new(n).unwrap()), ..PlaceChanges::default() };
        assert_eq!(tree.apply(garage, &rename("GARAGE")).unwrap().name.as_str(), "GARAGE");
        assert_eq!(
            tree.apply(garage, &rename("attic")).unwrap_err().to_string(),
            "there is already a place named \"attic\" in place 1"
        );
        let to_top = PlaceChanges { parent_id: Some(None), ..PlaceChanges::default() };
        assert_eq!(tree.apply(garage, &to_top).unwrap().parent_id, None);
        let shed = tree.get(PlaceId(6)).unwrap();
        let under_house = PlaceChanges {
            parent_id: Some(Some(PlaceId(1))),
            name: Some(PlaceName::new("attic").unwrap()),
            ..PlaceChanges::default()
        };
        assert!(matches!(tree.apply(shed, &under_house), Err(PlaceRefused::DuplicateName { .. })));
        let under_box = PlaceChanges { parent_id: Some(Some(PlaceId(4))), ..PlaceChanges::default() };
        assert_eq!(
            tree.apply(tree.get(PlaceId(1)).unwrap(), &under_box),
            Err(PlaceRefused::UnderDescendant { place: PlaceId(1), parent: PlaceId(4) })
        );
    }

    /// A random forest: place `i` (1-based) hangs under a random earlier place or at the top.
    fn forest() -> impl Strategy<Value = Vec<Place>> {
        prop::collection::vec(any::<prop::sample::Index>(), 1..40).prop_map(|picks| {
            picks
                .iter()
                .enumerate()
                .map(|(i, pick)| {
                    let id = i as i64 + 1;
                    // Index i+1 choices: 0 is the top, k is place k.
                    let parent = pick.index(i + 1) as i64;
                    place(id, &format!("p{id}"), (parent > 0).then_some(parent))
                })
                .collect()
        })
    }

    proptest! {
        /// Whatever move the rule allows leaves every place with a way to the top; whatever it refuses would
        /// have made a cycle.
        #[test]
        fn allowed_moves_never_make_a_cycle(places in forest(), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
            let n = places.len();
            let place = PlaceId(a.index(n) as i64 + 1);
            let parent = PlaceId(b.index(n) as i64 + 1);
            let tree = PlaceTree::new(&places);
            let allowed = tree.check_move(place, Some(parent)).is_ok();
            let mut moved = places.clone();
            moved.iter_mut().find(|p| p.id == place).unwrap().parent_id = Some(parent);
            // After the move, walk up from every place with a step cap: a cycle never reaches the top.
            let by_id: HashMap<PlaceId, Option<PlaceId>> = moved.iter().map(|p| (p.id, p.parent_id)).collect();
            let reaches_top = |start: PlaceId| {
                let mut at = Some(start);
                for _ in 0..=n {
                    match at {
                        None => return true,
                        Some(id) => at = by_id[&id],
                    }
                }
                false
            };
            let acyclic = moved.iter().all(|p| reaches_top(p.id));
            prop_assert_eq!(allowed, acyclic);
        }

        /// A path joined and read back gives the same names.
        #[test]
        fn joined_paths_read_back(raw in prop::collection::vec("[ a-zA-Z0-9/é.,-]{1,12}", 1..5)) {
            let names: Vec<PlaceName> = raw.iter().filter_map(|r| PlaceName::new(r).ok()).collect();
            prop_assume!(!names.is_empty());
            prop_assert_eq!(parse_location(&join(&names)).unwrap(), names.clone());
            prop_assert_eq!(parse_location_lenient(&join(&names)), names);
        }

        /// Any text reads leniently as valid names, never failing.
        #[test]
        fn lenient_reading_never_fails(text in "(?s).{0,200}") {
            for name in parse_location_lenient(&text) {
                prop_assert_eq!(PlaceName::new(name.as_str()), Ok(name.clone()));
            }
        }
    }
}
