//! Trove's use cases and the ports they need.
//!
//! A use case takes its ports as `Arc<dyn Port>` and knows nothing of HTTP, SQL or the Model API's wire format.
//! The tool-calling loop lives here (`propose`); what it may write is decided by the rules in `trove_domain`.

pub mod auth;
pub mod backups;
pub mod catalogue;
pub mod contracts;
pub mod demo;
pub mod error;
pub mod exchange;
pub mod history;
pub mod idempotency;
pub mod intake;
pub mod items;
pub mod jobs;
pub mod labels;
pub mod lending;
pub mod lookup;
pub mod media;
pub mod media_exchange;
pub mod metered;
pub mod offer;
pub mod one_at_a_time;
pub mod passkeys;
pub mod people;
pub mod photo;
pub mod places;
pub mod ports;
pub mod price;
pub mod progress;
pub mod projects;
pub mod propose;
pub mod readiness;
pub mod recorder;
pub mod refresh;
pub mod reminders;
pub mod revision_cache;
pub mod spend_report;
pub mod sso;
pub mod tools;
pub mod value;

pub use error::{Conflict, Error, Forbidden, Refusal, RepoError, StorageFault};
