//! The repository ports, implemented on [`crate::Store`]: one module per port.

pub(crate) mod history;
mod households;
mod idempotency;
pub(crate) mod inventory;
mod lending;
pub(crate) mod media;
mod passkeys;
pub(crate) mod people;
pub(crate) mod places;
mod prices;
mod projects;
mod spend;
mod templates;
mod throttle;

/// Rows per multi-row statement: well under SQLite's and PostgreSQL's limits on bound parameters (about 22
/// columns times this), and large enough that a 100,000-item import takes a few hundred statements.
pub(crate) const CHUNK: usize = 500;
