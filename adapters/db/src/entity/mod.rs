//! The sea-orm entities: one module per table. They are this crate's own; the repositories map them to and
//! from the domain types, and nothing outside the crate sees them.

pub(crate) mod events;
pub(crate) mod households;
pub(crate) mod idempotency;
pub(crate) mod instance_secrets;
pub(crate) mod invitations;
pub(crate) mod item_codes;
pub(crate) mod items;
pub(crate) mod loans;
pub(crate) mod lookup_cache;
pub(crate) mod maintenance;
pub(crate) mod media;
pub(crate) mod members;
pub(crate) mod notification_settings;
pub(crate) mod oidc_identities;
pub(crate) mod oidc_sign_ins;
pub(crate) mod passkey_ceremonies;
pub(crate) mod passkeys;
pub(crate) mod places;
pub(crate) mod price_reports;
pub(crate) mod projects;
pub(crate) mod reminders;
pub(crate) mod schedules;
pub(crate) mod sessions;
pub(crate) mod sign_in_failures;
pub(crate) mod spend_entries;
pub(crate) mod templates;
pub(crate) mod tokens;
