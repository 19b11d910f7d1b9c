//! The `/api` routes, one file per feature. A feature file holds, top to bottom: its tag, its DTOs (request
//! bodies `#[oai(deny_unknown_fields)]` with a `try_into_domain`, answers with a `From<&DomainType>`), and one
//! `#[OpenApi]` impl whose routes take a [`Member`](crate::auth::Member), call one use case of
//! [`Services`](crate::services::Services) and turn its error into an answer with `ApiError::from` (the status of
//! each error lives in `crate::error`, nowhere else). A route taking an `Idempotency-Key` hands its work to
//! `Idempotency::once`. Feature files import [`crate::shared`], `crate::error`, `crate::auth` and `crate::services`,
//! never each other.

pub mod backups;
pub mod capabilities;
pub mod exchange;
pub mod history;
pub mod intake;
pub mod items;
pub mod labels;
pub mod lending;
pub mod lookup;
pub mod media;
pub mod people;
pub mod photo;
pub mod places;
pub mod projects;
pub mod reminders;
pub mod selling;
pub mod spend;
pub mod templates;
pub mod value;

use crate::services::Services;

/// Every route group of the API, in the order the OpenAPI document lists them.
pub type Apis = (
    items::ItemsApi,
    places::PlacesApi,
    labels::LabelsApi,
    templates::TemplatesApi,
    projects::ProjectsApi,
    selling::SellingApi,
    spend::SpendApi,
    intake::IntakeApi,
    exchange::ExchangeApi,
    photo::PhotoApi,
    media::MediaApi,
    people::PeopleApi,
    // Tuples of route groups go up to 13: the last ones make a tuple of their own.
    (
        history::HistoryApi,
        capabilities::CapabilitiesApi,
        value::ValueApi,
        backups::BackupsApi,
        lending::LendingApi,
        reminders::RemindersApi,
        lookup::LookupApi,
    ),
);

/// All the API's route groups.
pub fn apis(s: Services) -> Apis {
    (
        items::ItemsApi(s.clone(), std::sync::Arc::default()),
        places::PlacesApi(s.clone()),
        labels::LabelsApi(s.clone()),
        templates::TemplatesApi(s.clone()),
        projects::ProjectsApi(s.clone()),
        selling::SellingApi(s.clone()),
        spend::SpendApi(s.clone()),
        intake::IntakeApi(s.clone()),
        exchange::ExchangeApi(s.clone()),
        photo::PhotoApi(s.clone()),
        media::MediaApi(s.clone()),
        people::PeopleApi(s.clone()),
        (
            history::HistoryApi(s.clone()),
            capabilities::CapabilitiesApi(s.clone()),
            value::ValueApi(s.clone()),
            backups::BackupsApi(s.clone()),
            lending::LendingApi(s.clone()),
            reminders::RemindersApi(s.clone()),
            lookup::LookupApi(s),
        ),
    )
}
