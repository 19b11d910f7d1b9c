//! Configuration: built once at start from the environment and flags; nothing reads the environment later.

use anyhow::{Context, bail};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use trove_application::metered::SpendPolicy;
use trove_application::ports::model::{ApproximateLocation, SearchContextSize};
use trove_application::price::PriceSettings;
use trove_domain::label::PublicUrl;
use trove_domain::money::{Currency, MicroUsd};
use trove_domain::spend::Rates;
use trove_model::{ModelApiConfig, Provider};

/// The name of every setting, each written once: what is read, and what an error about it names.
pub mod names {
    pub const DATABASE_URL: &str = "DATABASE_URL";
    pub const TROVE_DATA_DIR: &str = "TROVE_DATA_DIR";
    pub const TROVE_BIND: &str = "TROVE_BIND";
    pub const TROVE_PUBLIC_URL: &str = "TROVE_PUBLIC_URL";
    pub const TROVE_TRUSTED_PROXIES: &str = "TROVE_TRUSTED_PROXIES";
    pub const TROVE_ACCESS_LOG: &str = "TROVE_ACCESS_LOG";
    pub const MODEL_PROVIDER: &str = "MODEL_PROVIDER";
    pub const MODEL_API_URL: &str = "MODEL_API_URL";
    pub const MODEL_API_KEY: &str = "MODEL_API_KEY";
    pub const MODEL_NAME: &str = "MODEL_NAME";
    pub const MODEL_TRANSCRIBE_MODEL: &str = "MODEL_TRANSCRIBE_MODEL";
    pub const MODEL_IDLE_TIMEOUT_SECS: &str = "MODEL_IDLE_TIMEOUT_SECS";
    /// The older name of `MODEL_IDLE_TIMEOUT_SECS`, still read.
    pub const MODEL_TIMEOUT_SECS: &str = "MODEL_TIMEOUT_SECS";
    pub const MODEL_STREAM: &str = "MODEL_STREAM";
    pub const MODEL_STRICT_TOOLS: &str = "MODEL_STRICT_TOOLS";
    pub const MODEL_SEND_MAX_TOOL_CALLS: &str = "MODEL_SEND_MAX_TOOL_CALLS";
    pub const MODEL_REPLAY_REASONING: &str = "MODEL_REPLAY_REASONING";
    pub const PRICE_SEARCH_CONTEXT: &str = "PRICE_SEARCH_CONTEXT";
    pub const PRICE_MAX_SEARCHES: &str = "PRICE_MAX_SEARCHES";
    pub const TROVE_LOCATION: &str = "TROVE_LOCATION";
    pub const TROVE_CURRENCY: &str = "TROVE_CURRENCY";
    pub const RATE_INPUT_PER_MTOK: &str = "RATE_INPUT_PER_MTOK";
    pub const RATE_CACHED_PER_MTOK: &str = "RATE_CACHED_PER_MTOK";
    pub const RATE_OUTPUT_PER_MTOK: &str = "RATE_OUTPUT_PER_MTOK";
    pub const RATE_PER_SEARCH: &str = "RATE_PER_SEARCH";
    pub const RATE_TRANSCRIBE_PER_MIN: &str = "RATE_TRANSCRIBE_PER_MIN";
    pub const SPEND_MONTHLY_LIMIT_USD: &str = "SPEND_MONTHLY_LIMIT_USD";
    pub const TROVE_MEDIA_URL: &str = "TROVE_MEDIA_URL";
    pub const AWS_ENDPOINT_URL: &str = "AWS_ENDPOINT_URL";
    pub const AWS_REGION: &str = "AWS_REGION";
    pub const AWS_ACCESS_KEY_ID: &str = "AWS_ACCESS_KEY_ID";
    pub const AWS_SECRET_ACCESS_KEY: &str = "AWS_SECRET_ACCESS_KEY";
    pub const TROVE_BACKUP_DIR: &str = "TROVE_BACKUP_DIR";
    pub const TROVE_BACKUP_EVERY: &str = "TROVE_BACKUP_EVERY";
    pub const TROVE_BACKUP_KEEP: &str = "TROVE_BACKUP_KEEP";
    pub const MODEL_MAX_OUTPUT_TOKENS: &str = "MODEL_MAX_OUTPUT_TOKENS";
    pub const TROVE_SMTP_URL: &str = "TROVE_SMTP_URL";
    pub const TROVE_MAIL_FROM: &str = "TROVE_MAIL_FROM";
    pub const TROVE_WEBHOOK_ALLOW_PRIVATE: &str = "TROVE_WEBHOOK_ALLOW_PRIVATE";
    pub const TROVE_REMINDERS_EVERY: &str = "TROVE_REMINDERS_EVERY";
    pub const TROVE_LOOKUP: &str = "TROVE_LOOKUP";
    pub const TROVE_LOOKUP_CONTACT: &str = "TROVE_LOOKUP_CONTACT";
    pub const TROVE_LOOKUP_LANGUAGE: &str = "TROVE_LOOKUP_LANGUAGE";
    pub const TROVE_LOOKUP_BUDGET: &str = "TROVE_LOOKUP_BUDGET";
    pub const TROVE_LOOKUP_FOOD_URL: &str = "TROVE_LOOKUP_FOOD_URL";
    pub const TROVE_LOOKUP_PRODUCTS_URL: &str = "TROVE_LOOKUP_PRODUCTS_URL";
    pub const TROVE_LOOKUP_BEAUTY_URL: &str = "TROVE_LOOKUP_BEAUTY_URL";
    pub const TROVE_LOOKUP_LIBRARY_URL: &str = "TROVE_LOOKUP_LIBRARY_URL";
    pub const TROVE_LOOKUP_UPCITEMDB_URL: &str = "TROVE_LOOKUP_UPCITEMDB_URL";
    pub const TROVE_METRICS: &str = "TROVE_METRICS";
    pub const TROVE_METRICS_TOKEN: &str = "TROVE_METRICS_TOKEN";
    pub const TROVE_OIDC_ISSUER: &str = "TROVE_OIDC_ISSUER";
    pub const TROVE_OIDC_CLIENT_ID: &str = "TROVE_OIDC_CLIENT_ID";
    pub const TROVE_OIDC_CLIENT_SECRET: &str = "TROVE_OIDC_CLIENT_SECRET";
    pub const TROVE_OIDC_NAME: &str = "TROVE_OIDC_NAME";
    pub const TROVE_OIDC_SCOPES: &str = "TROVE_OIDC_SCOPES";
    pub const TROVE_OIDC_GROUPS_CLAIM: &str = "TROVE_OIDC_GROUPS_CLAIM";
    pub const TROVE_OIDC_OWNER_GROUPS: &str = "TROVE_OIDC_OWNER_GROUPS";
    pub const TROVE_OIDC_MEMBER_GROUPS: &str = "TROVE_OIDC_MEMBER_GROUPS";
    pub const TROVE_OIDC_VIEWER_GROUPS: &str = "TROVE_OIDC_VIEWER_GROUPS";
    pub const TROVE_OIDC_HOUSEHOLD: &str = "TROVE_OIDC_HOUSEHOLD";
    pub const TROVE_OIDC_ONLY: &str = "TROVE_OIDC_ONLY";
    /// Read before the rest, by `main`: `text` (the default) or `json`.
    pub const TROVE_LOG_FORMAT: &str = "TROVE_LOG_FORMAT";

    /// The settings that are secrets: each may instead be read from the file `NAME_FILE` names (the Docker and
    /// Compose secrets convention, `/run/secrets/...`), its content with the line end trimmed.
    pub const SECRETS: [&str; 7] = [
        DATABASE_URL,
        MODEL_API_KEY,
        AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY,
        TROVE_SMTP_URL,
        TROVE_METRICS_TOKEN,
        TROVE_OIDC_CLIENT_SECRET,
    ];
}

use names::*;

/// Single sign-on (`TROVE_OIDC_*`). Its `Debug` leaves the client secret out.
#[derive(Clone, PartialEq, Eq)]
pub struct OidcConfig {
    /// `TROVE_OIDC_ISSUER`: the provider's issuer URL.
    pub issuer: String,
    /// `TROVE_OIDC_CLIENT_ID`.
    pub client_id: String,
    /// `TROVE_OIDC_CLIENT_SECRET` (or `..._FILE`); unset for a public client.
    pub client_secret: Option<String>,
    /// `TROVE_OIDC_NAME`: the button's "Sign in with NAME" (default: the issuer's host).
    pub name: String,
    /// `TROVE_OIDC_SCOPES` (space- or comma-separated; default `openid profile email`, and `groups` when groups
    /// are mapped).
    pub scopes: Vec<String>,
    /// `TROVE_OIDC_GROUPS_CLAIM`: the ID token claim listing the groups (default `groups` when groups are mapped).
    pub groups_claim: Option<String>,
    /// `TROVE_OIDC_OWNER_GROUPS`, `..._MEMBER_GROUPS`, `..._VIEWER_GROUPS` (comma-separated).
    pub groups: trove_domain::sso::GroupRoles,
    /// `TROVE_OIDC_HOUSEHOLD`: the household a mapped group's people join (default `default`).
    pub household: String,
    /// `TROVE_OIDC_ONLY`: passwords are turned off; people sign in with the provider (or a passkey).
    pub only: bool,
}

impl std::fmt::Debug for OidcConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcConfig")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "set"))
            .field("name", &self.name)
            .field("scopes", &self.scopes)
            .field("groups_claim", &self.groups_claim)
            .field("groups", &self.groups)
            .field("household", &self.household)
            .field("only", &self.only)
            .finish()
    }
}

impl OidcConfig {
    /// The settings, or `None` when `TROVE_OIDC_ISSUER` is not set.
    fn read(get: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<Option<Self>> {
        let only = flag(TROVE_OIDC_ONLY, get(TROVE_OIDC_ONLY), false)?;
        let Some(issuer) = get(TROVE_OIDC_ISSUER).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) else {
            if only {
                bail!("{TROVE_OIDC_ONLY} turns passwords off for single sign-on: set {TROVE_OIDC_ISSUER} too");
            }
            return Ok(None);
        };
        let client_id = get(TROVE_OIDC_CLIENT_ID)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .with_context(|| format!("{TROVE_OIDC_ISSUER} is set: set {TROVE_OIDC_CLIENT_ID} too"))?;
        let list = |name: &str| -> Vec<String> {
            get(name)
                .unwrap_or_default()
                .split([',', ' '])
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let groups = trove_domain::sso::GroupRoles {
            owner: list(TROVE_OIDC_OWNER_GROUPS),
            member: list(TROVE_OIDC_MEMBER_GROUPS),
            viewer: list(TROVE_OIDC_VIEWER_GROUPS),
        };
        let groups_claim = get(TROVE_OIDC_GROUPS_CLAIM)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .or_else(|| (!groups.is_empty()).then(|| "groups".to_owned()));
        let mut scopes = list(TROVE_OIDC_SCOPES);
        if scopes.is_empty() {
            scopes = ["openid", "profile", "email"].map(str::to_owned).to_vec();
            if !groups.is_empty() {
                scopes.push("groups".to_owned());
            }
        }
        let host = issuer.split("://").nth(1).unwrap_or(&issuer).split(['/', ':']).next().unwrap_or(&issuer);
        Ok(Some(Self {
            name: get(TROVE_OIDC_NAME)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .unwrap_or(host.to_owned()),
            issuer,
            client_id,
            client_secret: get(TROVE_OIDC_CLIENT_SECRET).filter(|v| !v.is_empty()),
            scopes,
            groups_claim,
            groups,
            household: get(TROVE_OIDC_HOUSEHOLD)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "default".to_owned()),
            only,
        }))
    }
}

/// Everything Trove reads from its environment (SPEC section 6). Its `Debug` leaves the secrets out.
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    /// `DATABASE_URL`; `None`: the embedded SQLite file under `data_dir`.
    pub database_url: Option<String>,
    /// `TROVE_DATA_DIR`: where the SQLite file lives.
    pub data_dir: PathBuf,
    /// `TROVE_BIND`.
    pub bind: SocketAddr,
    /// `TROVE_PUBLIC_URL`: where phones reach Trove; the links in labels' QR codes start with it, and a scan
    /// accepts only those (default `http://` + the bind address, `http://localhost:PORT` for a loopback one).
    pub public_url: PublicUrl,
    /// `TROVE_TRUSTED_PROXIES`: the addresses of reverse proxies (comma-separated IPs) whose `X-Forwarded-For`
    /// names the client; the sign-in throttle counts that client instead of the proxy. Empty by default: the
    /// peer's own address counts, and the header is ignored (anyone could write it).
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// `TROVE_ACCESS_LOG`: log every request (method, path, status, time); off by default, since the line costs
    /// about as much as answering `/health`.
    pub access_log: bool,
    /// `TROVE_METRICS`: serve Prometheus metrics at `/metrics` (off by default).
    pub metrics: bool,
    /// `TROVE_METRICS_TOKEN`: the bearer token `/metrics` asks for; unset: none (anyone reaching the port).
    pub metrics_token: Option<String>,
    /// `TROVE_OIDC_*`: single sign-on with an OpenID provider, when `TROVE_OIDC_ISSUER` is set.
    pub oidc: Option<OidcConfig>,
    /// `MODEL_PROVIDER`: `meta` (default), `openai` or `compatible`; its profile gives the defaults below and
    /// what the backend can do.
    pub model_provider: Provider,
    /// `MODEL_API_URL` (default: the provider's).
    pub model_api_url: String,
    /// `MODEL_API_KEY`; `None`: the local planner, unless the provider is `compatible` (a server of your own
    /// needs no key).
    pub model_api_key: Option<String>,
    /// `MODEL_NAME` (default: the provider's).
    pub model_name: String,
    /// `MODEL_TRANSCRIBE_MODEL` (default: the provider's speech-to-text model).
    pub model_transcribe_model: String,
    /// `MODEL_IDLE_TIMEOUT_SECS` (or its older name `MODEL_TIMEOUT_SECS`): the longest wait for the next byte of
    /// an answer; a long answer that keeps coming is never cut.
    pub model_idle_timeout: Duration,
    /// `MODEL_STREAM`: ask for answers as server-sent events (default on).
    pub model_stream: bool,
    /// `MODEL_STRICT_TOOLS`: send `strict: true` on function tools (unconfirmed on Meta, so switchable).
    pub model_strict_tools: bool,
    /// `MODEL_SEND_MAX_TOOL_CALLS`: send `max_tool_calls` (unconfirmed on Meta, so switchable; default: whether
    /// the provider takes it).
    pub model_send_max_tool_calls: bool,
    /// `MODEL_REPLAY_REASONING`: ask for reasoning's encrypted content and replay it with the function calls it
    /// came with; off, reasoning items are dropped (for a provider that refuses the include value).
    pub model_replay_reasoning: bool,
    /// `MODEL_MAX_OUTPUT_TOKENS` (`propose=24000,price=8000`): the output budget of each call kind named.
    pub output_budgets: Vec<(trove_domain::spend::CallKind, u32)>,
    /// The model is not in `trove_model::models`' table: its rates are the provider's, assumed (set `RATE_*`).
    pub rates_assumed: bool,
    /// `PRICE_SEARCH_CONTEXT`, `PRICE_MAX_SEARCHES`, `TROVE_LOCATION`, `TROVE_CURRENCY`.
    pub price: PriceSettings,
    /// Rates (default: the provider's) and `SPEND_MONTHLY_LIMIT_USD`.
    pub spend: SpendPolicy,
    /// Where media blobs are kept: `TROVE_MEDIA_URL=s3://BUCKET/PREFIX` (with `AWS_ENDPOINT_URL`, `AWS_REGION`,
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`), else files under `TROVE_DATA_DIR/media/`.
    pub media: trove_media::MediaLocation,
    /// `TROVE_BACKUP_DIR` (default `TROVE_DATA_DIR/backups`), `TROVE_BACKUP_EVERY` (`30m`, `6h`, `1d`, `1w`;
    /// unset: no scheduled backups), `TROVE_BACKUP_KEEP` (default 14).
    pub backups: trove_application::backups::BackupSettings,
    /// `TROVE_SMTP_URL`, `TROVE_MAIL_FROM`, `TROVE_WEBHOOK_ALLOW_PRIVATE`, `TROVE_REMINDERS_EVERY`.
    pub reminders: Reminding,
    /// `TROVE_LOOKUP` and `TROVE_LOOKUP_*`: which product databases a code is looked up in.
    pub lookup: LookupSettings,
}

/// Which product databases `GET /api/lookup/{code}` asks (`TROVE_LOOKUP`), a privacy choice: a lookup tells a
/// provider what you own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupMode {
    /// `off`: no provider is asked; a code is looked up among the household's items only.
    Off,
    /// `open` (the default): the keyless open databases (Open Food Facts, Open Products Facts, Open Beauty Facts,
    /// Open Library).
    Open,
    /// `all`: the open databases and the commercial ones (UPCitemdb's trial).
    All,
}

/// How codes are looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupSettings {
    /// `TROVE_LOOKUP`: `off`, `open` (default) or `all`.
    pub mode: LookupMode,
    /// `TROVE_LOOKUP_CONTACT`: who the providers may write to about this instance's requests, in the
    /// `User-Agent` (default: `TROVE_PUBLIC_URL`).
    pub contact: String,
    /// `TROVE_LOOKUP_LANGUAGE`: the language whose product names are preferred (default `en`).
    pub language: String,
    /// `TROVE_LOOKUP_BUDGET`: how long all the providers together may take (default `4s`).
    pub budget: Duration,
    /// `TROVE_LOOKUP_FOOD_URL` (default `https://world.openfoodfacts.org`).
    pub food_url: String,
    /// `TROVE_LOOKUP_PRODUCTS_URL` (default `https://world.openproductsfacts.org`).
    pub products_url: String,
    /// `TROVE_LOOKUP_BEAUTY_URL` (default `https://world.openbeautyfacts.org`).
    pub beauty_url: String,
    /// `TROVE_LOOKUP_LIBRARY_URL` (default `https://openlibrary.org`).
    pub library_url: String,
    /// `TROVE_LOOKUP_UPCITEMDB_URL` (default `https://api.upcitemdb.com`).
    pub upcitemdb_url: String,
}

/// How reminders go out.
#[derive(Clone, PartialEq, Eq)]
pub struct Reminding {
    /// `TROVE_SMTP_URL` (`smtp://host:25`, `smtps://user:pass@host`); `None`: no e-mail.
    pub smtp_url: Option<String>,
    /// `TROVE_MAIL_FROM` (default `Trove <trove@localhost>`).
    pub mail_from: String,
    /// `TROVE_WEBHOOK_ALLOW_PRIVATE=1`: pushes may reach private addresses (a home network's ntfy).
    pub allow_private: bool,
    /// `TROVE_REMINDERS_EVERY` (default `15m`; from `1s`).
    pub every: Duration,
}

impl std::fmt::Debug for Reminding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reminding")
            .field("smtp", &self.smtp_url.as_ref().map(|_| "set"))
            .field("mail_from", &self.mail_from)
            .field("allow_private", &self.allow_private)
            .field("every", &self.every)
            .finish()
    }
}

/// Reads `kind=tokens` pairs, comma-separated (`propose=24000,price=8000`), each from 256 to 128,000 tokens.
///
/// # Errors
/// An unknown kind, a number out of bounds, or a pair without `=`.
pub fn parse_output_budgets(raw: &str) -> anyhow::Result<Vec<(trove_domain::spend::CallKind, u32)>> {
    raw.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (kind, n) = pair.split_once('=').with_context(|| format!("{pair:?} has no ="))?;
            let kind = trove_domain::spend::CallKind::parse(kind.trim())
                .with_context(|| format!("{:?} is not a call kind", kind.trim()))?;
            let n: u32 = n.trim().parse().with_context(|| format!("{:?} is not a whole number", n.trim()))?;
            anyhow::ensure!((256..=128_000).contains(&n), "{n} is not from 256 to 128000");
            Ok((kind, n))
        })
        .collect()
}

/// Reads a period such as `90s`, `30m`, `6h`, `1d` or `2w` (a whole number and its unit).
///
/// # Errors
/// Anything else, or a period under a minute or over a year.
pub fn parse_every(raw: &str) -> anyhow::Result<Duration> {
    parse_period(raw, 60)
}

/// Reads a period as [`parse_every`] does, from `min_secs` seconds to a year.
///
/// # Errors
/// Anything else.
pub fn parse_period(raw: &str, min_secs: u64) -> anyhow::Result<Duration> {
    let raw = raw.trim();
    let split = raw.find(|c: char| !c.is_ascii_digit()).unwrap_or(raw.len());
    let (n, unit) = raw.split_at(split);
    let n: u64 = n.parse().with_context(|| format!("{raw:?} does not start with a whole number"))?;
    let secs = match unit.trim() {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        "w" => n * 7 * 86_400,
        other => bail!("{raw:?}: the unit {other:?} is not s, m, h, d or w"),
    };
    anyhow::ensure!(
        (min_secs..=366 * 86_400).contains(&secs),
        "{raw:?} is not between {} and a year",
        if min_secs == 60 { "a minute".to_owned() } else { format!("{min_secs} s") }
    );
    Ok(Duration::from_secs(secs))
}

fn flag(name: &str, raw: Option<String>, default: bool) -> anyhow::Result<bool> {
    match raw.as_deref().map(str::trim) {
        None | Some("") => Ok(default),
        Some("1" | "true" | "yes" | "on") => Ok(true),
        Some("0" | "false" | "no" | "off") => Ok(false),
        Some(other) => bail!("{name}={other:?} is not a boolean (true or false)"),
    }
}

fn usd(name: &str, raw: Option<String>, default: MicroUsd) -> anyhow::Result<MicroUsd> {
    match raw {
        None => Ok(default),
        Some(r) => MicroUsd::parse_usd(&r).with_context(|| format!("{name}={r:?} is not an amount in USD")),
    }
}

/// Reads `TROVE_LOCATION`: `country=GB,region=England,city=Leeds,timezone=Europe/London`, members optional.
///
/// # Errors
/// An unknown member, a member without `=`, or an empty value.
pub fn parse_location(raw: &str) -> anyhow::Result<ApproximateLocation> {
    let mut loc = ApproximateLocation::default();
    for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').with_context(|| format!("{TROVE_LOCATION}: {part:?} is not key=value"))?;
        let v = v.trim();
        if v.is_empty() {
            bail!("{TROVE_LOCATION}: {k} is empty");
        }
        let slot = match k.trim() {
            "country" => &mut loc.country,
            "region" => &mut loc.region,
            "city" => &mut loc.city,
            "timezone" => &mut loc.timezone,
            other => bail!("{TROVE_LOCATION}: unknown member {other:?} (country, region, city, timezone)"),
        };
        *slot = Some(v.to_owned());
    }
    if let Some(c) = &loc.country
        && !(c.len() == 2 && c.bytes().all(|b| b.is_ascii_uppercase()))
    {
        bail!("{TROVE_LOCATION}: country {c:?} must be a two-letter ISO code such as GB");
    }
    Ok(loc)
}

/// The usual currency of a country, for estimates (no exchange rates offline).
pub fn currency_of(country: &str) -> Option<Currency> {
    let code = match country {
        "GB" => "GBP",
        "US" => "USD",
        "CA" => "CAD",
        "AU" => "AUD",
        "NZ" => "NZD",
        "JP" => "JPY",
        "CH" => "CHF",
        "SE" => "SEK",
        "NO" => "NOK",
        "DK" => "DKK",
        "PL" => "PLN",
        "CZ" => "CZK",
        "IE" | "FR" | "DE" | "ES" | "IT" | "NL" | "BE" | "AT" | "PT" | "FI" | "GR" | "LU" | "SK" | "SI" | "EE"
        | "LV" | "LT" | "MT" | "CY" | "HR" => "EUR",
        _ => return None,
    };
    Currency::new(code).ok()
}

impl std::fmt::Debug for Config {
    /// The settings, the secrets only as set or not (a database URL may carry a password).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = |v: &Option<String>| v.as_ref().map(|_| "set");
        f.debug_struct("Config")
            .field("database_url", &set(&self.database_url))
            .field("data_dir", &self.data_dir)
            .field("bind", &self.bind)
            .field("public_url", &self.public_url)
            .field("model_provider", &self.model_provider)
            .field("model_api_url", &self.model_api_url)
            .field("model_api_key", &set(&self.model_api_key))
            .field("metrics", &self.metrics)
            .field("metrics_token", &set(&self.metrics_token))
            .field("oidc", &self.oidc)
            .field("model_name", &self.model_name)
            .field("price", &self.price)
            .field("spend", &self.spend)
            .field("media", &self.media)
            .field("backups", &self.backups)
            .field("reminders", &self.reminders)
            .field("lookup", &self.lookup)
            .finish_non_exhaustive()
    }
}

/// The secrets given as `NAME_FILE` (see [`names::SECRETS`]): each file's content, its trailing line end
/// trimmed.
///
/// # Errors
/// Both `NAME` and `NAME_FILE` set; a file that cannot be read or is empty; each naming the setting.
fn secrets_from_files(var: &impl Fn(&str) -> Option<String>) -> anyhow::Result<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    for name in SECRETS {
        let file_name = format!("{name}_FILE");
        let Some(path) = var(&file_name).filter(|v| !v.trim().is_empty()) else { continue };
        if var(name).is_some_and(|v| !v.trim().is_empty()) {
            bail!("{name} and {file_name} are both set: set one");
        }
        let content = std::fs::read_to_string(&path).with_context(|| format!("{file_name}: reading {path:?}"))?;
        let value = content.trim_end_matches(['\n', '\r']).to_owned();
        if value.trim().is_empty() {
            bail!("{file_name}: {path:?} is empty");
        }
        out.push((name, value));
    }
    Ok(out)
}

impl Config {
    /// Builds the configuration from `var` (the environment in production, a map in tests).
    ///
    /// # Errors
    /// A bad value, naming the setting.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        let secrets = secrets_from_files(&var)?;
        let get = |k: &str| match secrets.iter().find(|(name, _)| *name == k) {
            Some((_, value)) => Some(value.clone()),
            None => var(k).filter(|v| !v.trim().is_empty()),
        };
        let bind = get(TROVE_BIND).unwrap_or_else(|| "127.0.0.1:8080".into());
        let bind: SocketAddr =
            bind.parse().with_context(|| format!("{TROVE_BIND}={bind:?} is not an address such as 127.0.0.1:8080"))?;
        let public_url = match get(TROVE_PUBLIC_URL) {
            // A loopback address is named `localhost`: the same machine, and a host name that browsers treat as
            // a secure context and accept as a passkey's relying party (an IP address is neither).
            None if bind.ip().is_loopback() => PublicUrl::new(&format!("http://localhost:{}", bind.port()))
                .with_context(|| format!("{TROVE_PUBLIC_URL}: the default from {TROVE_BIND} is not a URL"))?,
            None => PublicUrl::new(&format!("http://{bind}"))
                .with_context(|| format!("{TROVE_PUBLIC_URL}: the default from {TROVE_BIND} is not a URL"))?,
            Some(v) => PublicUrl::new(&v).with_context(|| {
                format!("{TROVE_PUBLIC_URL}={v:?} must be an http:// or https:// URL such as http://192.168.1.20:8080")
            })?,
        };
        let trusted_proxies = match get(TROVE_TRUSTED_PROXIES) {
            None => Vec::new(),
            Some(v) => v
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| {
                    p.parse().with_context(|| {
                        format!("{TROVE_TRUSTED_PROXIES}: {p:?} is not an IP address such as 127.0.0.1 or ::1")
                    })
                })
                .collect::<anyhow::Result<_>>()?,
        };
        let provider = match get(MODEL_PROVIDER) {
            None => Provider::default(),
            Some(v) => Provider::parse(&v)
                .with_context(|| format!("{MODEL_PROVIDER}={v:?} must be meta, openai or compatible"))?,
        };
        let profile = provider.profile();
        let context = get(PRICE_SEARCH_CONTEXT).unwrap_or_else(|| "medium".into());
        let context_size = SearchContextSize::parse(&context)
            .with_context(|| format!("{PRICE_SEARCH_CONTEXT}={context:?} must be low, medium or high"))?;
        let max_searches = match get(PRICE_MAX_SEARCHES) {
            None => 4,
            Some(v) => v
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=20).contains(n))
                .with_context(|| format!("{PRICE_MAX_SEARCHES}={v:?} must be a whole number from 1 to 20"))?,
        };
        let location = match get(TROVE_LOCATION) {
            None => ApproximateLocation::default(),
            Some(v) => parse_location(&v)?,
        };
        let currency = match get(TROVE_CURRENCY) {
            Some(c) => Some(Currency::new(&c).with_context(|| format!("{TROVE_CURRENCY}={c:?} is not an ISO code"))?),
            None => location.country.as_deref().and_then(currency_of),
        };
        // Rates follow the model (its table's list rates), the provider's when the model is not in the table or
        // runs on a server of one's own (`compatible`: zero).
        let model_name = get(MODEL_NAME).unwrap_or_else(|| profile.model.into());
        let known = match provider {
            Provider::Compatible => None,
            _ => trove_model::models::known(&model_name),
        };
        let rates_assumed = provider != Provider::Compatible && known.is_none();
        let d = known.map_or(profile.rates, |m| m.rates(profile.rates));
        let rate = |name: &str, default| usd(name, get(name), default);
        let rates = Rates {
            input_per_mtok: rate(RATE_INPUT_PER_MTOK, d.input_per_mtok)?,
            cached_per_mtok: rate(RATE_CACHED_PER_MTOK, d.cached_per_mtok)?,
            output_per_mtok: rate(RATE_OUTPUT_PER_MTOK, d.output_per_mtok)?,
            per_search: rate(RATE_PER_SEARCH, d.per_search)?,
            transcribe_per_min: rate(RATE_TRANSCRIBE_PER_MIN, d.transcribe_per_min)?,
        };
        let monthly_limit = get(SPEND_MONTHLY_LIMIT_USD)
            .map(|v| {
                MicroUsd::parse_usd(&v).with_context(|| format!("{SPEND_MONTHLY_LIMIT_USD}={v:?} is not an amount"))
            })
            .transpose()?;
        let (timeout_name, timeout) = match get(MODEL_IDLE_TIMEOUT_SECS) {
            Some(v) => (MODEL_IDLE_TIMEOUT_SECS, Some(v)),
            None => (MODEL_TIMEOUT_SECS, get(MODEL_TIMEOUT_SECS)),
        };
        let timeout = match timeout {
            None => 60,
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .with_context(|| format!("{timeout_name}={v:?} must be a positive whole number"))?,
        };
        let database_url = get(DATABASE_URL);
        if let Some(url) = &database_url
            && !(url.starts_with("postgres://") || url.starts_with("postgresql://") || url.starts_with("sqlite:"))
        {
            bail!("{DATABASE_URL} must start with postgres://, postgresql:// or sqlite:");
        }
        let switch = |name: &str, default| flag(name, get(name), default);
        let data_dir = PathBuf::from(get(TROVE_DATA_DIR).unwrap_or_else(|| "./trove-data".into()));
        let media = match get(TROVE_MEDIA_URL) {
            None => trove_media::MediaLocation::under_data_dir(&data_dir),
            Some(url) => trove_media::MediaLocation::S3(
                trove_media::S3Settings::from_url(
                    url.trim(),
                    get(AWS_ENDPOINT_URL),
                    get(AWS_REGION),
                    get(AWS_ACCESS_KEY_ID),
                    get(AWS_SECRET_ACCESS_KEY),
                )
                .context(TROVE_MEDIA_URL)?,
            ),
        };
        let backups = trove_application::backups::BackupSettings {
            dir: get(TROVE_BACKUP_DIR).map_or_else(|| data_dir.join("backups"), PathBuf::from),
            every: get(TROVE_BACKUP_EVERY)
                .map(|v| {
                    parse_every(&v)
                        .with_context(|| format!("{TROVE_BACKUP_EVERY}={v:?} must be a period such as 1d or 6h"))
                })
                .transpose()?,
            keep: match get(TROVE_BACKUP_KEEP) {
                None => 14,
                Some(v) => v
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=10_000).contains(n))
                    .with_context(|| format!("{TROVE_BACKUP_KEEP}={v:?} must be a whole number from 1 to 10000"))?,
            },
        };
        let reminders = Reminding {
            smtp_url: get(TROVE_SMTP_URL).filter(|u| !u.trim().is_empty()),
            mail_from: get(TROVE_MAIL_FROM).unwrap_or_else(|| "Trove <trove@localhost>".into()),
            allow_private: flag(TROVE_WEBHOOK_ALLOW_PRIVATE, get(TROVE_WEBHOOK_ALLOW_PRIVATE), false)?,
            every: match get(TROVE_REMINDERS_EVERY) {
                None => Duration::from_secs(15 * 60),
                Some(v) => parse_period(&v, 1)
                    .with_context(|| format!("{TROVE_REMINDERS_EVERY}={v:?} must be a period such as 15m or 30s"))?,
            },
        };
        let url_or = |name: &str, default: &str| -> anyhow::Result<String> {
            let url = get(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
            let url = url.unwrap_or_else(|| default.to_owned());
            anyhow::ensure!(
                url.starts_with("http://") || url.starts_with("https://"),
                "{name}={url:?} must be an http:// or https:// URL"
            );
            Ok(url)
        };
        let lookup = LookupSettings {
            mode: match get(TROVE_LOOKUP).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
                None | Some("" | "open") => LookupMode::Open,
                Some("off") => LookupMode::Off,
                Some("all") => LookupMode::All,
                Some(other) => anyhow::bail!("{TROVE_LOOKUP}={other:?} must be off, open or all"),
            },
            contact: get(TROVE_LOOKUP_CONTACT)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| public_url.as_str().to_owned()),
            language: match get(TROVE_LOOKUP_LANGUAGE).map(|v| v.trim().to_ascii_lowercase()) {
                None => "en".to_owned(),
                Some(l) if (2..=3).contains(&l.len()) && l.bytes().all(|b| b.is_ascii_lowercase()) => l,
                Some(l) => anyhow::bail!("{TROVE_LOOKUP_LANGUAGE}={l:?} must be a language code such as en or fr"),
            },
            budget: match get(TROVE_LOOKUP_BUDGET) {
                None => trove_application::lookup::DEFAULT_BUDGET,
                Some(v) => parse_period(&v, 1)
                    .with_context(|| format!("{TROVE_LOOKUP_BUDGET}={v:?} must be a period such as 4s"))?,
            },
            food_url: url_or(TROVE_LOOKUP_FOOD_URL, "https://world.openfoodfacts.org")?,
            products_url: url_or(TROVE_LOOKUP_PRODUCTS_URL, "https://world.openproductsfacts.org")?,
            beauty_url: url_or(TROVE_LOOKUP_BEAUTY_URL, "https://world.openbeautyfacts.org")?,
            library_url: url_or(TROVE_LOOKUP_LIBRARY_URL, "https://openlibrary.org")?,
            upcitemdb_url: url_or(TROVE_LOOKUP_UPCITEMDB_URL, "https://api.upcitemdb.com")?,
        };
        Ok(Self {
            lookup,
            reminders,
            backups,
            database_url,
            data_dir,
            bind,
            public_url,
            trusted_proxies,
            access_log: flag(TROVE_ACCESS_LOG, get(TROVE_ACCESS_LOG), false)?,
            metrics: flag(TROVE_METRICS, get(TROVE_METRICS), false)?,
            metrics_token: get(TROVE_METRICS_TOKEN),
            oidc: OidcConfig::read(&get)?,
            model_provider: provider,
            model_api_url: get(MODEL_API_URL).unwrap_or_else(|| profile.base_url.into()),
            model_api_key: get(MODEL_API_KEY),
            model_name,
            model_transcribe_model: get(MODEL_TRANSCRIBE_MODEL).unwrap_or_else(|| profile.transcribe_model.into()),
            model_idle_timeout: Duration::from_secs(timeout),
            model_stream: switch(MODEL_STREAM, true)?,
            // A server of one's own takes `strict` only if it implements it: off unless switched on.
            model_strict_tools: switch(MODEL_STRICT_TOOLS, provider != Provider::Compatible)?,
            model_send_max_tool_calls: switch(MODEL_SEND_MAX_TOOL_CALLS, profile.max_tool_calls)?,
            // Only a reasoning model is asked for its reasoning: a non-reasoning one refuses the `include`.
            model_replay_reasoning: switch(MODEL_REPLAY_REASONING, known.is_none_or(|m| m.reasons))?,
            rates_assumed,
            output_budgets: match get(MODEL_MAX_OUTPUT_TOKENS) {
                None => Vec::new(),
                Some(v) => parse_output_budgets(&v).with_context(|| {
                    format!("{MODEL_MAX_OUTPUT_TOKENS}={v:?} must read like propose=24000,price=8000 (kinds: {})", {
                        trove_domain::spend::CallKind::ALL.map(|k| k.as_str()).join(", ")
                    })
                })?,
            },
            price: PriceSettings { context_size, max_searches, location, currency },
            spend: SpendPolicy { rates, monthly_limit },
            media,
        })
    }

    /// The settings of the Model API client, when one is configured: a key is set, or the provider is a
    /// `compatible` server of your own (which needs none). `None`: the local planner answers.
    pub fn model_api(&self) -> Option<ModelApiConfig> {
        let key = match (&self.model_api_key, self.model_provider) {
            (Some(key), _) => key.clone(),
            (None, Provider::Compatible) => String::new(),
            (None, _) => return None,
        };
        let mut c = ModelApiConfig::for_provider(self.model_provider, key).with_base_url(self.model_api_url.clone());
        c.model.clone_from(&self.model_name);
        c.transcribe_model.clone_from(&self.model_transcribe_model);
        c.idle_timeout = self.model_idle_timeout;
        c.stream = self.model_stream;
        c.strict_tools = self.model_strict_tools;
        c.send_max_tool_calls = self.model_send_max_tool_calls;
        c.replay_reasoning = self.model_replay_reasoning;
        Some(c)
    }

    /// From the process environment.
    ///
    /// # Errors
    /// As [`Config::from_vars`].
    pub fn from_env() -> anyhow::Result<Self> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// The database URL to open: `DATABASE_URL` or the embedded SQLite file.
    pub fn database(&self) -> String {
        self.database_url.clone().unwrap_or_else(|| trove_db::sqlite_url(&self.data_dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(pairs: &[(&str, &str)]) -> anyhow::Result<Config> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        Config::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn single_sign_on_is_read_with_its_defaults_and_refused_half_set() {
        assert_eq!(config(&[]).unwrap().oidc, None);
        let c = config(&[
            ("TROVE_OIDC_ISSUER", "https://id.example.org/realms/home"),
            ("TROVE_OIDC_CLIENT_ID", "trove"),
            ("TROVE_OIDC_CLIENT_SECRET", "oidc-s3cret"),
            ("TROVE_OIDC_OWNER_GROUPS", "admins, family-admins"),
            ("TROVE_OIDC_VIEWER_GROUPS", "guests"),
        ])
        .unwrap();
        let o = c.oidc.clone().unwrap();
        assert_eq!(o.name, "id.example.org", "the button names the issuer's host by default");
        assert_eq!(o.groups.owner, ["admins", "family-admins"]);
        assert_eq!((o.groups_claim.as_deref(), o.scopes.last().map(String::as_str)), (Some("groups"), Some("groups")));
        assert_eq!((o.household.as_str(), o.only), ("default", false));
        assert!(!format!("{c:?}").contains("oidc-s3cret"), "the client secret stays out of logs");
        let plain = config(&[("TROVE_OIDC_ISSUER", "https://id.example"), ("TROVE_OIDC_CLIENT_ID", "t")]).unwrap();
        let plain = plain.oidc.unwrap();
        assert_eq!((plain.scopes.join(" "), plain.groups_claim), ("openid profile email".to_owned(), None));
        let err = config(&[("TROVE_OIDC_ISSUER", "https://id.example")]).unwrap_err();
        assert!(format!("{err:#}").contains("TROVE_OIDC_CLIENT_ID"), "{err:#}");
        let err = config(&[("TROVE_OIDC_ONLY", "1")]).unwrap_err();
        assert!(format!("{err:#}").contains("TROVE_OIDC_ISSUER"), "{err:#}");
    }

    #[test]
    fn a_secret_is_read_from_the_file_its_name_file_gives() {
        let dir = std::env::temp_dir().join(format!("trove-secrets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, content: &str| {
            let path = dir.join(name);
            std::fs::write(&path, content).unwrap();
            path.to_string_lossy().into_owned()
        };
        let (key, url, smtp, aws_id, aws_secret) = (
            file("key", "sk-from-a-file\n"),
            file("db", "postgres://trove:s3cret@db/trove\r\n"),
            file("smtp", "smtps://trove:pw@mail.example"),
            file("aws-id", "AKIA1\n"),
            file("aws-secret", "abc/def\n"),
        );
        let c = config(&[
            ("MODEL_PROVIDER", "openai"),
            ("MODEL_API_KEY_FILE", &key),
            ("DATABASE_URL_FILE", &url),
            ("TROVE_SMTP_URL_FILE", &smtp),
            ("AWS_ACCESS_KEY_ID_FILE", &aws_id),
            ("AWS_SECRET_ACCESS_KEY_FILE", &aws_secret),
            ("TROVE_MEDIA_URL", "s3://bucket"),
        ])
        .unwrap();
        assert_eq!(c.model_api_key.as_deref(), Some("sk-from-a-file"), "the line end is trimmed");
        assert_eq!(c.database_url.as_deref(), Some("postgres://trove:s3cret@db/trove"));
        assert_eq!(c.reminders.smtp_url.as_deref(), Some("smtps://trove:pw@mail.example"));
        let debug = format!("{c:?}");
        assert!(!debug.contains("s3cret") && !debug.contains("sk-from-a-file"), "secrets stay out of logs: {debug}");
        // Both set, a missing file, an empty one: refused, naming the setting.
        let both = config(&[("MODEL_API_KEY", "sk"), ("MODEL_API_KEY_FILE", &key)]).unwrap_err();
        assert!(both.to_string().contains("MODEL_API_KEY and MODEL_API_KEY_FILE are both set"), "{both}");
        let missing = config(&[("DATABASE_URL_FILE", "/nonexistent/trove-secret")]).unwrap_err();
        assert!(missing.to_string().starts_with("DATABASE_URL_FILE: reading"), "{missing}");
        let empty = config(&[("MODEL_API_KEY_FILE", &file("empty", "\n"))]).unwrap_err();
        assert!(empty.to_string().contains("is empty"), "{empty}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn product_lookup_is_open_by_default_and_refuses_unknown_modes() {
        let c = config(&[]).unwrap();
        assert_eq!((c.lookup.mode, c.lookup.budget), (LookupMode::Open, Duration::from_secs(4)));
        assert_eq!((c.lookup.contact.as_str(), c.lookup.language.as_str()), ("http://localhost:8080", "en"));
        assert_eq!(c.lookup.food_url, "https://world.openfoodfacts.org");
        let c = config(&[
            ("TROVE_LOOKUP", "ALL"),
            ("TROVE_LOOKUP_CONTACT", "ops@example.org"),
            ("TROVE_LOOKUP_LANGUAGE", "fr"),
            ("TROVE_LOOKUP_BUDGET", "2s"),
            ("TROVE_LOOKUP_LIBRARY_URL", "http://127.0.0.1:9/library"),
        ])
        .unwrap();
        assert_eq!((c.lookup.mode, c.lookup.budget), (LookupMode::All, Duration::from_secs(2)));
        assert_eq!((c.lookup.contact.as_str(), c.lookup.language.as_str()), ("ops@example.org", "fr"));
        assert_eq!(c.lookup.library_url, "http://127.0.0.1:9/library");
        assert_eq!(config(&[("TROVE_LOOKUP", "off")]).unwrap().lookup.mode, LookupMode::Off);
        for (name, value) in [
            ("TROVE_LOOKUP", "some"),
            ("TROVE_LOOKUP_LANGUAGE", "french!"),
            ("TROVE_LOOKUP_FOOD_URL", "ftp://x"),
            ("TROVE_LOOKUP_BUDGET", "soon"),
        ] {
            let err = config(&[(name, value)]).unwrap_err();
            assert!(format!("{err:#}").contains(name), "{name}: {err:#}");
        }
    }

    #[test]
    fn defaults() {
        let c = config(&[]).unwrap();
        assert_eq!(c.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(c.public_url.as_str(), "http://localhost:8080");
        let c = config(&[("TROVE_BIND", "[::1]:7000")]).unwrap();
        assert_eq!(c.public_url.as_str(), "http://localhost:7000");
        let c = config(&[("TROVE_BIND", "0.0.0.0:9000")]).unwrap();
        assert_eq!(c.public_url.as_str(), "http://0.0.0.0:9000");
        let c = config(&[("TROVE_PUBLIC_URL", "https://trove.home.example/")]).unwrap();
        assert_eq!(c.public_url.as_str(), "https://trove.home.example");
        let c = config(&[]).unwrap();
        assert_eq!(c.model_name, "muse-spark-1.3");
        assert_eq!(c.model_api_key, None);
        assert_eq!(c.price.max_searches, 4);
        assert_eq!(c.price.context_size, SearchContextSize::Medium);
        assert_eq!(c.spend.rates, Rates::default());
        assert_eq!(c.spend.monthly_limit, None);
        assert!(c.price.location.is_empty());
        assert_eq!(c.model_provider, Provider::Meta);
        assert_eq!(c.model_api_url, "https://api.meta.ai/v1");
        assert_eq!(c.model_transcribe_model, "muse-voice-transcribe-1.0");
        assert!(c.model_replay_reasoning && c.model_send_max_tool_calls && c.model_strict_tools);
        assert_eq!(c.model_api(), None);
    }

    #[test]
    fn a_provider_brings_its_defaults_and_every_setting_overrides_them() {
        let c = config(&[("MODEL_PROVIDER", "openai"), ("MODEL_API_KEY", "sk")]).unwrap();
        assert_eq!((c.model_api_url.as_str(), c.model_name.as_str()), ("https://api.openai.com/v1", "gpt-5-mini"));
        assert_eq!(c.spend.rates, Provider::OpenAi.profile().rates);
        let api = c.model_api().unwrap();
        assert_eq!((api.profile.provider, api.api_key.as_str()), (Provider::OpenAi, "sk"));

        let c = config(&[
            ("MODEL_PROVIDER", "openai"),
            ("MODEL_API_URL", "https://proxy.example/v1"),
            ("MODEL_NAME", "gpt-5"),
            ("MODEL_TRANSCRIBE_MODEL", "whisper-1"),
            ("RATE_PER_SEARCH", "0.025"),
            ("MODEL_REPLAY_REASONING", "false"),
        ])
        .unwrap();
        assert_eq!((c.model_api_url.as_str(), c.model_name.as_str()), ("https://proxy.example/v1", "gpt-5"));
        assert_eq!(c.model_transcribe_model, "whisper-1");
        assert_eq!(c.spend.rates.per_search, MicroUsd(25_000));
        assert_eq!(c.spend.rates.input_per_mtok, MicroUsd(1_250_000), "gpt-5's own rates, not the profile's");
        assert!(!c.model_replay_reasoning);
        // No key, not a server of your own: the local planner.
        assert_eq!(c.model_api(), None);

        // A server of your own needs no key, and takes no max_tool_calls unless asked.
        let c = config(&[("MODEL_PROVIDER", "compatible")]).unwrap();
        let api = c.model_api().unwrap();
        assert_eq!((api.base_url.as_str(), api.api_key.as_str()), ("http://localhost:11434/v1", ""));
        assert!(!api.send_max_tool_calls);
        assert_eq!(c.spend.rates.output_per_mtok, MicroUsd(0));
        let c = config(&[("MODEL_PROVIDER", "compatible"), ("MODEL_SEND_MAX_TOOL_CALLS", "true")]).unwrap();
        assert!(c.model_api().unwrap().send_max_tool_calls);
    }

    #[test]
    fn values_are_read() {
        let c = config(&[
            ("TROVE_LOCATION", "country=GB,region=England,city=Leeds,timezone=Europe/London"),
            ("SPEND_MONTHLY_LIMIT_USD", "5"),
            ("RATE_INPUT_PER_MTOK", "2.5"),
            ("PRICE_SEARCH_CONTEXT", "high"),
            ("MODEL_STRICT_TOOLS", "false"),
            ("TROVE_ACCESS_LOG", "on"),
        ])
        .unwrap();
        assert!(c.access_log);
        assert!(!config(&[]).unwrap().access_log, "off by default");
        assert_eq!(c.price.location.city.as_deref(), Some("Leeds"));
        assert_eq!(c.price.currency.map(|c| c.to_string()).as_deref(), Some("GBP"));
        assert_eq!(c.spend.monthly_limit, Some(MicroUsd(5_000_000)));
        assert_eq!(c.spend.rates.input_per_mtok, MicroUsd(2_500_000));
        assert_eq!(c.price.context_size, SearchContextSize::High);
        assert!(!c.model_strict_tools);
    }

    #[test]
    fn output_budgets_are_set_per_call_kind() {
        use trove_domain::spend::CallKind;
        let c = config(&[("MODEL_MAX_OUTPUT_TOKENS", "propose=24000, price=8000")]).unwrap();
        assert_eq!(c.output_budgets, vec![(CallKind::Propose, 24_000), (CallKind::Price, 8_000)]);
        assert!(config(&[]).unwrap().output_budgets.is_empty());
        for bad in ["propose", "guess=1000", "price=10", "price=lots"] {
            let err = config(&[("MODEL_MAX_OUTPUT_TOKENS", bad)]).unwrap_err();
            assert!(format!("{err:#}").contains("MODEL_MAX_OUTPUT_TOKENS"), "{bad}: {err:#}");
        }
    }

    #[test]
    fn rates_and_reasoning_follow_the_model() {
        let c = config(&[("MODEL_PROVIDER", "openai"), ("MODEL_NAME", "gpt-4.1")]).unwrap();
        assert_eq!(c.spend.rates.input_per_mtok, MicroUsd(2_000_000));
        assert!(!c.model_replay_reasoning, "a non-reasoning model is not asked for its reasoning");
        assert!(!c.rates_assumed);
        let c = config(&[("MODEL_PROVIDER", "openai"), ("MODEL_NAME", "gpt-5-2025-08-07")]).unwrap();
        assert_eq!(c.spend.rates.output_per_mtok, MicroUsd(10_000_000));
        assert!(c.model_replay_reasoning);
        let c =
            config(&[("MODEL_PROVIDER", "openai"), ("MODEL_NAME", "gpt-4.1"), ("RATE_INPUT_PER_MTOK", "1.5")]).unwrap();
        assert_eq!(c.spend.rates.input_per_mtok, MicroUsd(1_500_000), "every rate stays overridable");
        let c = config(&[("MODEL_PROVIDER", "openai"), ("MODEL_NAME", "my-finetune")]).unwrap();
        assert!(c.rates_assumed && c.model_replay_reasoning);
        assert_eq!(c.spend.rates, Provider::OpenAi.profile().rates);
        let c = config(&[("MODEL_PROVIDER", "compatible"), ("MODEL_NAME", "gpt-4o-mini")]).unwrap();
        assert!(!c.rates_assumed);
        assert_eq!(c.spend.rates.input_per_mtok, MicroUsd(0), "a server of one's own costs nothing");
    }

    #[test]
    fn backups_are_kept_in_the_data_directory_unless_told_and_scheduled_only_when_asked() {
        let c = config(&[("TROVE_DATA_DIR", "/srv/trove")]).unwrap();
        assert_eq!((c.backups.dir, c.backups.every, c.backups.keep), (PathBuf::from("/srv/trove/backups"), None, 14));
        let c =
            config(&[("TROVE_BACKUP_DIR", "/mnt/nas/trove"), ("TROVE_BACKUP_EVERY", "1d"), ("TROVE_BACKUP_KEEP", "7")])
                .unwrap();
        assert_eq!(c.backups.dir, PathBuf::from("/mnt/nas/trove"));
        assert_eq!((c.backups.every, c.backups.keep), (Some(Duration::from_secs(86_400)), 7));
        for (raw, secs) in [("90s", 90), ("30m", 1_800), ("6h", 21_600), ("2w", 1_209_600)] {
            assert_eq!(parse_every(raw).unwrap(), Duration::from_secs(secs), "{raw}");
        }
    }

    #[test]
    fn bad_values_name_the_setting() {
        for (k, v) in [
            ("TROVE_BIND", "nowhere"),
            ("TROVE_PUBLIC_URL", "trove.home.example"),
            ("TROVE_PUBLIC_URL", "http://"),
            ("TROVE_PUBLIC_URL", "https://x/?a=1"),
            ("PRICE_SEARCH_CONTEXT", "huge"),
            ("PRICE_MAX_SEARCHES", "0"),
            ("TROVE_LOCATION", "planet=Mars"),
            ("SPEND_MONTHLY_LIMIT_USD", "-3"),
            ("RATE_PER_SEARCH", "cheap"),
            ("DATABASE_URL", "mysql://x"),
            ("MODEL_STRICT_TOOLS", "maybe"),
            ("MODEL_PROVIDER", "ollama"),
            ("MODEL_REPLAY_REASONING", "sometimes"),
            ("TROVE_ACCESS_LOG", "verbose"),
            ("TROVE_PUBLIC_URL", "trove.home.example"),
            ("TROVE_PUBLIC_URL", "http://"),
            ("TROVE_PUBLIC_URL", "https://x/?a=1"),
            ("TROVE_BACKUP_EVERY", "daily"),
            ("TROVE_BACKUP_EVERY", "5s"),
            ("TROVE_BACKUP_EVERY", "2y"),
            ("TROVE_BACKUP_KEEP", "0"),
        ] {
            let err = format!("{:#}", config(&[(k, v)]).unwrap_err());
            assert!(err.contains(k), "{k}: {err}");
        }
    }
}
