//! The schema, as sea-orm-migration migrations. Run at start and by `trove migrate`.

use sea_orm_migration::prelude::*;

mod m0001_initial;
mod m0002_idempotency_reservations;
mod m0003_places;
mod m0004_spend_outcome;
mod m0005_media;
mod m0006_people;
mod m0007_passkeys;
mod m0008_search;
mod m0009_spend_member;
mod m0010_search_words;
mod m0011_media_revision;
mod m0012_item_statistics;
mod m0013_sign_in_failures;
mod m0014_invitation_revocations;
mod m0015_history_field_names;
mod m0016_item_record;
mod m0017_units_held;
mod m0018_no_stamp_index;
mod m0019_lending;
mod m0020_oidc;
mod m0021_item_codes;
mod m0022_lookup_cache;

/// Every migration, in order.
#[derive(Debug)]
pub(crate) struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m0001_initial::Migration),
            Box::new(m0002_idempotency_reservations::Migration),
            Box::new(m0003_places::Migration),
            Box::new(m0004_spend_outcome::Migration),
            Box::new(m0005_media::Migration),
            Box::new(m0006_people::Migration),
            Box::new(m0007_passkeys::Migration),
            Box::new(m0008_search::Migration),
            Box::new(m0009_spend_member::Migration),
            Box::new(m0010_search_words::Migration),
            Box::new(m0011_media_revision::Migration),
            Box::new(m0012_item_statistics::Migration),
            Box::new(m0013_sign_in_failures::Migration),
            Box::new(m0014_invitation_revocations::Migration),
            Box::new(m0015_history_field_names::Migration),
            Box::new(m0016_item_record::Migration),
            Box::new(m0017_units_held::Migration),
            Box::new(m0018_no_stamp_index::Migration),
            Box::new(m0019_lending::Migration),
            Box::new(m0020_oidc::Migration),
            Box::new(m0021_item_codes::Migration),
            Box::new(m0022_lookup_cache::Migration),
        ]
    }
}
