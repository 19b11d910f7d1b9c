//! The use cases the API serves, built by the composition root and shared by every route.

use std::sync::Arc;
use trove_application::auth::Auth;
use trove_application::catalogue::Catalogue;
use trove_application::exchange::Exchange;
use trove_application::history::History;
use trove_application::idempotency::Idempotency;
use trove_application::intake::Intake;
use trove_application::items::Inventory;
use trove_application::labels::Labels;
use trove_application::media::Media;
use trove_application::metered::Metered;
use trove_application::passkeys::Passkeys;
use trove_application::people::People;
use trove_application::photo::Photos;
use trove_application::places::Places;
use trove_application::ports::Clock;
use trove_application::price::Selling;
use trove_application::projects::Projects;
use trove_application::propose::ProposeProjects;
use trove_application::spend_report::Spend;
use trove_application::value::Valuation;

/// The use cases the API serves, built by the composition root.
#[derive(Clone)]
pub struct Services {
    pub inventory: Inventory,
    /// The tree of places: create, list, move, delete, and the paths items are shown with.
    pub places: Places,
    /// Looking a product code up: our labels, the household's items, the cache, the providers.
    pub lookup: trove_application::lookup::Lookup,
    /// Label PDFs and scans of labels (the PDF and the reading are CPU work, run on a blocking thread).
    pub labels: Labels,
    pub catalogue: Catalogue,
    /// The types a form suggests: the catalogue's and the household's own, with counts.
    pub item_types: trove_application::catalogue::ItemTypes,
    pub projects: Projects,
    pub propose: ProposeProjects,
    pub selling: Selling,
    pub spend: Spend,
    /// The model behind the budget and the ledger, asked only what it offers (`GET /api/capabilities`); the
    /// calls themselves go through the use cases above.
    pub backend: Metered,
    /// Reading labels, listings and voice notes into candidates with matches.
    pub intake: Intake,
    /// CSV export and import.
    pub exchange: Exchange,
    pub auth: Auth,
    /// Signing up and in with passkeys, and a member's own passkeys.
    pub passkeys: Passkeys,
    /// Members, invitations and personal API tokens.
    pub people: People,
    /// Single sign-on with the OpenID provider of `TROVE_OIDC_ISSUER`, when it is set.
    pub sso: Option<trove_application::sso::SingleSignOn>,
    /// Where the site is (`TROVE_PUBLIC_URL`): invitation links, the cookie's `Secure`, the page's origin.
    pub site: crate::site::Site,
    /// Runs a request carrying an `Idempotency-Key` at most once, and replays its answer.
    pub idempotency: Idempotency,
    pub clock: Arc<dyn Clock>,
    /// Splits intake photos into regions and measures them (CPU work, run on a blocking thread).
    pub photos: Photos,
    /// Photos, receipts and manuals kept on items.
    pub media: Media,
    /// Who changed what, and undoing a change.
    pub history: History,
    /// The value report, and values set by hand.
    pub value: Valuation,
    /// "Refresh values": pricing again what has no estimate or an old one, in the background.
    pub refresh: trove_application::refresh::ValueRefresh,
    /// The backups the server keeps, and a fresh one for an owner.
    pub backups: trove_application::backups::Backups,
    /// Loans, maintenance schedules and what falls due.
    pub lending: trove_application::lending::Lending,
    /// Each member's reminder channels, the delivery log, and calendar feeds.
    pub reminders: trove_application::reminders::Reminders,
    /// `GET /health/ready`: the database and the media store answer.
    pub readiness: trove_application::readiness::Readiness,
    /// What `GET /metrics` reads at each scrape.
    pub observed: trove_application::readiness::Observed,
    /// Whether `GET /metrics` is served (`TROVE_METRICS`), and its token.
    pub metrics: MetricsAccess,
}

/// Whether `/metrics` is served, and the token it asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetricsAccess {
    pub on: bool,
    /// `None`: anyone who reaches the port may read them.
    pub token: Option<String>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services").finish_non_exhaustive()
    }
}
