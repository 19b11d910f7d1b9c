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
