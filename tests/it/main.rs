//! The one integration-test binary: the whole app on port 0, on SQLite and on PostgreSQL, with the local
//! planner or a fake Model API (wiremock).

mod answers;
mod app;
mod architecture;
mod backup;
mod capabilities;
mod codes;
mod concurrency;
mod fake_model;
mod hardening;
mod history;
mod intake;
mod item_bounds;
mod item_record;
mod items;
mod lending;
mod lookup;
mod media;
mod model_check;
mod openapi_snapshot;
mod operations;
mod passkeys;
mod people;
mod photo;
mod places;
mod projects;
mod receipt;
mod search;
mod selling;
mod sign_in;
mod sso;
mod stock;
mod storage;
mod templates;
mod upgrade;
mod value;
