//! Items: what an owner has, in what state, meant for what, and measured how.
//!
//! `values.rs` holds what an item is made of (name, type, the condition/intent/availability words, text checks),
//! `details.rs` what a household records by hand (notes, tags, purchase, warranty, quantity), `records.rs` what is recorded on it over time (measurements, faults, tests, gone), and `rules.rs` the item
//! itself with its rules (buildable, current fields, gone, changes). Everything is used as `item::X`.

mod details;
mod records;
mod rules;
mod values;

pub use details::*;
pub use records::*;
pub use rules::*;
pub use values::*;

#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::Timestamp;
    use crate::ids::ItemId;
    use chrono::{TimeZone, Utc};

    pub fn at(day: u32) -> Timestamp {
        Utc.with_ymd_and_hms(2026, 1, day, 12, 0, 0).unwrap()
    }

    /// A buildable item with the given id, type and condition.
    pub fn item(id: i64, item_type: &str, condition: Condition) -> Item {
        let name = ItemName::new(&format!("item {id}")).unwrap();
        NewItem::new(name, ItemType::new(item_type).unwrap(), String::new(), condition, Intent::Keep)
            .stored(ItemId(id), at(1))
    }

    pub fn measure(item: &mut Item, key: &str, value: f64, unit: &str, day: u32) {
        item.measurements.push(Measurement::new(key, value, unit, at(day), MeasurementSource::Manual).unwrap());
    }
}
