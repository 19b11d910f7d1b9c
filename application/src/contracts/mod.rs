//! The model contracts: for each model call, everything the model is told and everything it may answer, in one
//! place.
//!
//! A contract holds the call's instructions, the strict JSON schema of its answer (a `.json` file beside the
//! module, sent as `text.format`), and the answer's wire types: serde structs that refuse any field the schema
//! does not name. A wire type is converted at once into the domain's type of the same answer, which the rules in
//! `trove_domain` judge; nothing of the wire shape goes further than this module.
//!
//! - [`proposal`]: the tool loop's final answer (`ProposalSet`), its three function tools and their arguments;
//! - [`reading`]: a label photo, a listing's text or a voice note read into candidate items (`Reading`);
//! - [`comparables`]: the web-searched comparables of a price call (`Comparables`);
//! - [`receipt`]: a photo or a PDF of a receipt read into its lines (`Receipt`).
//!
//! Every schema is strict: each object lists all its properties in `required` and sets `additionalProperties`
//! to false; an optional value is nullable instead. The tests below check that of every schema file, and that
//! the schema and the wire types describe the same document.

pub mod comparables;
pub mod proposal;
pub mod reading;
pub mod receipt;

use crate::ports::model::OutputSchema;

/// The `text.format` of a call: the schema's name and its text.
fn output_schema(name: &str, schema: &str) -> OutputSchema {
    OutputSchema { name: name.into(), schema: schema.into() }
}

#[cfg(test)]
mod tests;
