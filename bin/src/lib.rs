//! The `trove` binary as a library: configuration, the composition root and the command line, so that tests
//! can start the whole app.

pub mod arenas;
pub mod check;
pub mod cli;
pub mod config;
pub mod data_dir;
pub mod exchange;
pub mod password;

use anyhow::Context;
use std::sync::Arc;
use trove_application::auth::{Auth, PeoplePorts, TokenChecks};
use trove_application::catalogue::Catalogue;
use trove_application::exchange::Exchange;
use trove_application::history::History;
use trove_application::idempotency::Idempotency;
use trove_application::intake::Intake;
use trove_application::items::Inventory;
use trove_application::jobs::Jobs;
use trove_application::labels::Labels;
use trove_application::recorder::Recorder;

use trove_application::media::Media;
use trove_application::metered::Metered;
use trove_application::passkeys::Passkeys;
use trove_application::people::People;
use trove_application::photo::Photos;
use trove_application::places::Places;
use trove_application::ports::{
    Clock, HouseholdRepo, IdempotencyStore, InstanceSecrets, InventoryRepo, ItemSheet, ModelImages, ModelPort,
    PlaceRepo, PriceRepo, ProjectRepo, SpendLedger, TemplateRepo,
};
use trove_application::price::Selling;
use trove_application::projects::Projects;
use trove_application::propose::ProposeProjects;
use trove_application::spend_report::Spend;
use trove_db::Store;
use trove_domain::Timestamp;
use trove_http::Services;

pub use config::Config;

/// The clock of the running process.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        trove_domain::kept_time(chrono::Utc::now())
    }
}

/// The wired application: the store and the use cases over it.
#[derive(Debug, Clone)]
pub struct App {
    pub store: Arc<Store>,
    pub services: Services,
    /// Which model backend answers ("muse-spark-1.3" or "local-planner").
    pub model_name: String,
    /// The token checks the use cases keep, forgotten by [`App::hear_access_changes`].
    token_checks: Arc<TokenChecks>,
}

impl App {
    /// Listens, for as long as the returned task runs, for access changes made by every process on the database
    /// (a token revoked, a member removed or given another role; PostgreSQL's NOTIFY) and forgets the token
    /// checks they end. Only a serving process needs it: a command of the command line ends before a check it
    /// kept could go stale.
    pub fn hear_access_changes(&self) -> tokio::task::JoinHandle<()> {
        let heard = self.token_checks.clone();
        let hearing = self.store.clone();
        tokio::spawn(async move {
            hearing
                .hear_access_changes(move |h| match h {
                    trove_db::Heard::Change(change) => heard.forget(change),
                    trove_db::Heard::Everything => heard.forget_all(),
                })
                .await;
        })
    }
}

/// The composition root, top to bottom: open the database and migrate it, seed the catalogue, build the model
/// backend, build the use cases.
///
/// # Errors
/// When the database cannot be opened or migrated.
pub async fn build(config: &Config) -> anyhow::Result<App> {
    // What an older version wrote readable by others under the data directory becomes the owner's only.
    data_dir::tighten(&config.data_dir).await;
    let store = Store::connect(&config.database()).await.context("opening the database")?;
    store.migrate().await.context("migrating the database")?;
    let store = Arc::new(store);
    let items: Arc<dyn InventoryRepo> = store.clone();
    let templates: Arc<dyn TemplateRepo> = store.clone();
    let projects: Arc<dyn ProjectRepo> = store.clone();
    let ledger: Arc<dyn SpendLedger> = store.clone();
    let households: Arc<dyn HouseholdRepo> = store.clone();
    let idempotency: Arc<dyn IdempotencyStore> = store.clone();
    let prices: Arc<dyn PriceRepo> = store.clone();
    let places: Arc<dyn PlaceRepo> = store.clone();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let blobs = config.media.open().with_context(|| format!("opening the media store {}", config.media.describe()))?;
    // Token checks are kept a moment; a revocation, or a member removed or given another role, ends them here at
    // once and, through the store (PostgreSQL's NOTIFY), on every other process on the database as it hears it.
    let token_checks = Arc::new(TokenChecks::announced_by(store.clone()));
    let people = PeoplePorts {
        households: households.clone(),
        members: store.clone(),
        invitations: store.clone(),
        sessions: store.clone(),
        tokens: store.clone(),
        hasher: Arc::new(password::Argon2Hasher::default()),
        secrets: Arc::new(password::OsSecrets),
        clock: clock.clone(),
        token_checks: token_checks.clone(),
        failures: store.clone(),
        // Password hashes (Argon2id, 19 MiB each) under their own limit, one per two cores, so a flood of
        // sign-ins waits in a short queue or is refused (503 with Retry-After) instead of exhausting memory, and
        // the other requests keep cores of their own.
        hashing: Jobs::for_half_the_cores().doing("sign-ins"),
    };

    let catalogue = Catalogue::new(templates.clone());
    catalogue.seed().await.context("seeding the template catalogue")?;

    let model: Arc<dyn ModelPort> = match config.model_api() {
        Some(c) => Arc::new(trove_model::ModelApi::new(c).context("building the Model API client")?),
        None => Arc::new(trove_planner::LocalPlanner::new(items.clone(), templates.clone())),
    };
    let model_name = model.model_name(trove_domain::spend::CallKind::Propose);
    let metered = Metered::new(model, ledger.clone(), clock.clone(), config.spend)
        .with_output_budgets(config.output_budgets.iter().copied().collect());
    let sheet: Arc<dyn ItemSheet> = Arc::new(trove_csv::CsvSheet);
    // One limit of concurrent CPU-heavy jobs (images) for the whole server, sized to the cores.
    let jobs = Jobs::for_cores();
    let model_images: Arc<dyn ModelImages> = Arc::new(trove_vision::ModelImageEncoder);

    let labels = Labels::new(
        items.clone(),
        places.clone(),
        Arc::new(trove_labels::PdfLabels::new()),
        Arc::new(trove_labels::QrReader::new()),
        config.public_url.clone(),
        jobs.clone(),
    );

    let lookup = product_lookup(config, labels.clone(), items.clone(), store.clone(), clock.clone())?;

    // Every change through a use case is recorded in the household's history by this one recorder.
    let recorder = Recorder::new(clock.clone());
    let pictures = Arc::new(trove_vision::pictures::PictureWork::new());
    let backups = trove_application::backups::Backups::new(
        Arc::new(trove_backup::TarBackups::new(store.clone(), blobs.clone(), store.backend_name())),
        store.clone(),
        clock.clone(),
        config.backups.clone(),
    );
    let readiness_blobs = blobs.clone();
    let media = Media::new(store.clone(), blobs, pictures, items.clone(), clock.clone(), recorder.clone());

    let inventory = Inventory::new(items.clone(), places.clone(), projects.clone(), clock.clone(), recorder.clone());
    let history = History::new(store.clone(), store.clone(), inventory.clone(), places.clone());

    // Passkeys: the relying party is TROVE_PUBLIC_URL's host; the key of the made-up credentials (for names
    // without passkeys) is a secret kept in the database, so every process and every restart make the same ones
    // and none tells who has passkeys.
    let candidate = trove_application::ports::SecretSource::new_secret(&password::OsSecrets)?;
    let fake_key = InstanceSecrets::instance_secret(&*store, FAKE_CREDENTIALS_SECRET, candidate)
        .await
        .context("reading the key of made-up passkey credentials")?;
    let passkey_ceremonies = Arc::new(
        trove_passkeys::WebauthnPasskeys::new(config.public_url.as_str(), fake_key.as_bytes())
            .context("building the passkey relying party")?,
    );
    // One `Auth` for passwords and passkeys, so failures of both count toward one throttle.
    let passwords_off = config.oidc.as_ref().is_some_and(|o| o.only);
    let auth = Auth::new(&people).with_passwords(!passwords_off);
    let sso = match &config.oidc {
        Some(o) => Some(single_sign_on(o, config.public_url.as_str(), &people, store.clone())?),
        None => None,
    };
    let value = trove_application::value::Valuation::new(
        trove_application::value::ValuationPorts {
            items: items.clone(),
            places: places.clone(),
            prices: prices.clone(),
            media_rows: store.clone(),
            members: store.clone(),
            printer: Arc::new(trove_labels::PdfValueReport),
            sheet: Arc::new(trove_csv::CsvValueSheet),
            clock: clock.clone(),
        },
        media.clone(),
        jobs.clone(),
    );

    let selling = Selling::new(metered.clone(), items.clone(), prices.clone(), clock.clone(), config.price.clone());
    let refresh = trove_application::refresh::ValueRefresh::new(
        selling.clone(),
        metered.clone(),
        items.clone(),
        prices.clone(),
        ledger.clone(),
        clock.clone(),
    );

    let lending = trove_application::lending::Lending::new(
        items.clone(),
        store.clone(),
        store.clone(),
        recorder.clone(),
        clock.clone(),
    );
    let mail = match &config.reminders.smtp_url {
        Some(url) => Some(trove_reminders::Mail::new(url, &config.reminders.mail_from)?),
        None => None,
    };
    let reminders = trove_application::reminders::Reminders::new(
        trove_application::reminders::ReminderPorts {
            repo: store.clone(),
            members: store.clone(),
            notifier: Arc::new(
                trove_reminders::Deliveries::new(mail, config.reminders.allow_private)
                    .context("building the reminders' HTTP client")?,
            ),
            calendar: Arc::new(trove_reminders::IcsCalendar),
            secrets: Arc::new(password::OsSecrets),
            clock: clock.clone(),
        },
        lending.clone(),
        trove_application::reminders::ReminderConfig {
            every: config.reminders.every,
            allow_private: config.reminders.allow_private,
        },
    );

    let observed = trove_application::readiness::Observed::new(
        vec![jobs.clone(), people.hashing.clone()],
        store.clone(),
        ledger.clone(),
    );
    let services = Services {
        lookup,
        inventory,
        history,
        places: Places::new(places, recorder.clone()),
        labels,
        catalogue,
        item_types: trove_application::catalogue::ItemTypes::new(items.clone(), templates.clone()),
        projects: Projects::new(projects.clone(), items.clone(), templates.clone(), recorder.clone()),
        propose: ProposeProjects::new(metered.clone(), items.clone(), templates, projects, recorder.clone()),
        backend: metered.clone(),
        intake: Intake::new(metered.clone(), items.clone(), clock.clone(), model_images, jobs.clone()),
        exchange: Exchange::new(items.clone(), sheet, clock.clone(), recorder.clone()),
        selling,
        spend: Spend::new(ledger, clock.clone(), config.spend, store.clone()),
        auth: auth.clone(),
        passkeys: Passkeys::new(&people, &auth, passkey_ceremonies, store.clone()),
        people: People::new(&people, recorder).with_passwords(!passwords_off),
        sso,
        site: trove_http::site::Site::new(config.public_url.as_str())
            .behind(config.trusted_proxies.clone())
            .logging_requests(config.access_log),
        idempotency: Idempotency::new(idempotency, clock.clone()),
        clock,
        photos: Photos::new(Arc::new(trove_vision::Segmenter::new()), jobs),
        media,
        value,
        refresh,
        backups,
        lending,
        reminders,
        readiness: trove_application::readiness::Readiness::new(store.clone(), readiness_blobs),
        observed,
        metrics: trove_http::services::MetricsAccess { on: config.metrics, token: config.metrics_token.clone() },
    };
    Ok(App { store, services, model_name, token_checks })
}

/// The lookup of product codes: the providers `TROVE_LOOKUP` allows, each at its URL, behind one polite client,
/// and the cache (in the database, shared by every process on it).
fn product_lookup(
    config: &Config,
    labels: Labels,
    items: Arc<dyn InventoryRepo>,
    cache: Arc<dyn trove_application::ports::LookupCache>,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<trove_application::lookup::Lookup> {
    use trove_application::ports::ProductSource;
    let l = &config.lookup;
    let http = trove_lookup::Polite::new(&l.contact)?;
    let mut sources: Vec<Arc<dyn ProductSource>> = Vec::new();
    if l.mode != config::LookupMode::Off {
        sources.push(Arc::new(trove_lookup::OpenFacts::food(&l.food_url, &l.language, http.clone())));
        sources.push(Arc::new(trove_lookup::OpenFacts::products(&l.products_url, &l.language, http.clone())));
        sources.push(Arc::new(trove_lookup::OpenFacts::beauty(&l.beauty_url, &l.language, http.clone())));
        sources.push(Arc::new(trove_lookup::OpenLibrary::new(&l.library_url, http.clone())));
    }
    if l.mode == config::LookupMode::All {
        sources.push(Arc::new(trove_lookup::UpcItemDb::new(&l.upcitemdb_url, http)));
    }
    Ok(trove_application::lookup::Lookup::new(labels, config.public_url.clone(), items, cache, sources, clock)
        .with_budget(l.budget))
}

/// The name of the instance secret that keys the made-up passkey credentials.
const FAKE_CREDENTIALS_SECRET: &str = "passkey_fake_credentials";

/// How often the media sweep runs while serving.
pub const MEDIA_SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(60 * 60);

/// Writes a backup whenever one is due (`TROVE_BACKUP_EVERY` after the newest in `TROVE_BACKUP_DIR`, at once
/// when there is none), until the task is dropped. A failed backup is logged and tried again an hour later, or
/// at the next period if that is sooner.
/// Single sign-on with the provider of `o`: it sends the browser back to `public_url`'s callback.
fn single_sign_on(
    o: &config::OidcConfig,
    public_url: &str,
    people: &PeoplePorts,
    store: Arc<Store>,
) -> anyhow::Result<trove_application::sso::SingleSignOn> {
    let provider = trove_oidc::OpenIdConnect::new(trove_oidc::OidcSettings {
        issuer: o.issuer.clone(),
        client_id: o.client_id.clone(),
        client_secret: o.client_secret.clone(),
        redirect_url: format!("{}/api/session/oidc/callback", public_url.trim_end_matches('/')),
        scopes: o.scopes.clone(),
        groups_claim: o.groups_claim.clone(),
        display_name: o.name.clone(),
    })
    .map_err(anyhow::Error::msg)?;
    let rules = trove_application::sso::SsoRules { household: o.household.clone(), groups: o.groups.clone() };
    Ok(trove_application::sso::SingleSignOn::new(people, Arc::new(provider), store, rules))
}

pub async fn scheduled_backups(backups: trove_application::backups::Backups, clock: Arc<dyn Clock>) {
    let Some(every) = backups.settings().every else { return };
    let dir = backups.settings().dir.clone();
    loop {
        let last = backups.last_made().unwrap_or_else(|e| {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot list the backups");
            None
        });
        let due =
            last.map_or(clock.now(), |at| at + chrono::Duration::from_std(every).unwrap_or(chrono::Duration::days(1)));
        let wait = (due - clock.now()).to_std().unwrap_or_default();
        tokio::time::sleep(wait).await;
        match backups.write().await {
            Ok(made) => tracing::info!(name = %made.name, bytes = made.bytes, "backup written"),
            Err(e) => {
                tracing::error!(dir = %dir.display(), error = %e, "the scheduled backup failed");
                tokio::time::sleep(every.min(std::time::Duration::from_secs(3600))).await;
            }
        }
    }
}

/// Sends reminders: a tick (`Reminders::tick`) at once and then every `TROVE_REMINDERS_EVERY`, until the task is
/// dropped. A failed tick (the store unreachable) is logged and tried at the next; a failed delivery is the tick's
/// own business (logged, tried again later).
pub async fn send_reminders(reminders: trove_application::reminders::Reminders) {
    let mut every = tokio::time::interval(reminders.config().every);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        match reminders.tick().await {
            Ok(t) if t.written + t.sent + t.failed > 0 => {
                tracing::info!(written = t.written, sent = t.sent, failed = t.failed, "reminders");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "the reminders' tick failed; trying again at the next"),
        }
    }
}

/// Runs the media sweep (`Media::sweep`: pending media older than a day, blobs no row names) at once and then
/// every [`MEDIA_SWEEP_EVERY`], until the task is dropped. A failed sweep is logged and tried again next time.
pub async fn sweep_media(media: Media) {
    let mut every = tokio::time::interval(MEDIA_SWEEP_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        match media.sweep().await {
            Ok(swept) if swept.pending + swept.blobs > 0 => {
                tracing::info!(pending = swept.pending, blobs = swept.blobs, "media sweep");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "media sweep failed; trying again in an hour"),
        }
    }
}

/// Issues a write token named `name` for the first owner of `household` (both created on first use) and answers
/// it (shown once; only its hash is stored).
///
/// # Errors
/// When the store fails.
pub async fn issue_token(app: &App, household: &str, name: &str) -> anyhow::Result<String> {
    let (_, token) = app.services.auth.issue(household, name).await.context("storing the token")?;
    Ok(token)
}

/// Seeds the demo inventory into the default household when it is empty; answers how many items were added.
///
/// # Errors
/// When the store fails.
pub async fn seed_demo(app: &App) -> anyhow::Result<usize> {
    let household = app
        .store
        .ensure_household(trove_application::auth::DEFAULT_HOUSEHOLD)
        .await
        .context("creating the default household")?;
    trove_application::demo::seed(&app.services.inventory, household, app.services.clock.now())
        .await
        .context("seeding the demo inventory")
}

/// An invitation into `household` (created on first use) with `role`: the link to open, valid 7 days.
///
/// # Errors
/// When the household name is bad or the store fails.
pub async fn invite(app: &App, household: &str, role: trove_domain::people::Role) -> anyhow::Result<String> {
    let invited =
        app.services.people.invite_from_command_line(household, role).await.context("storing the invitation")?;
    Ok(app.services.site.join_link(&invited.code))
}
