//! Test support (feature `testing`, and this crate's own tests): the fixed times and the plain items the tests of
//! every crate build on, so no crate writes them again.

use crate::Timestamp;
use crate::ids::ItemId;
use crate::item::{Condition, Intent, Item, ItemName, ItemType, Measurement, MeasurementSource, NewItem};
use chrono::{TimeZone, Utc};

/// The tests' "now": 2026-06-01 09:00 UTC.
pub fn now() -> Timestamp {
    Utc.with_ymd_and_hms(2026, 6, 1, 9, 0, 0).unwrap()
}

/// Noon of a day of January 2026.
pub fn at(day: u32) -> Timestamp {
    Utc.with_ymd_and_hms(2026, 1, day, 12, 0, 0).unwrap()
}

/// A buildable item kept, named "item ID", of the given type and condition, stored on January 1st.
pub fn item(id: i64, item_type: &str, condition: Condition) -> Item {
    named(id, &format!("item {id}"), item_type, condition)
}

/// A buildable item kept, of the given name, type and condition, stored on January 1st.
pub fn named(id: i64, name: &str, item_type: &str, condition: Condition) -> Item {
    NewItem::new(
        ItemName::new(name).unwrap(),
        ItemType::new(item_type).unwrap(),
        String::new(),
        condition,
        Intent::Keep,
    )
    .stored(ItemId(id), at(1))
}

/// Adds a measurement of `key` read by hand on January `day`.
pub fn measure(item: &mut Item, key: &str, value: f64, unit: &str, day: u32) {
    item.measurements.push(Measurement::new(key, value, unit, at(day), MeasurementSource::Manual).unwrap());
}

/// The path of a `location` text ("Garage / Shelf 2"), its places numbered from 1, read leniently as old texts
/// are; `None` for a blank text.
pub fn path(location: &str) -> Option<crate::place::PlacePath> {
    use crate::place::{PlacePath, PlaceStep, parse_location_lenient};
    let steps = parse_location_lenient(location)
        .into_iter()
        .zip(1..)
        .map(|(name, id)| PlaceStep { id: crate::PlaceId(id), name })
        .collect();
    PlacePath::new(steps)
}
