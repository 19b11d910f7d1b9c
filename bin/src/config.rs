//! Configuration: built once at start from the environment and flags; nothing reads the environment later.

use anyhow::{Context, bail};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use trove_application::metered::SpendPolicy;
use trove_application::ports::model::{ApproximateLocation, SearchContextSize};
use trove_application::price::PriceSettings;
use trove_domain::money::{Currency, MicroUsd};
use trove_domain::spend::Rates;

/// Everything Trove reads from its environment (SPEC section 6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `DATABASE_URL`; `None`: the embedded SQLite file under `data_dir`.
    pub database_url: Option<String>,
    /// `TROVE_DATA_DIR`: where the SQLite file lives.
    pub data_dir: PathBuf,
    /// `TROVE_BIND`.
    pub bind: SocketAddr,
    /// `MODEL_API_URL`.
    pub model_api_url: String,
    /// `MODEL_API_KEY`; `None`: the local planner.
    pub model_api_key: Option<String>,
    /// `MODEL_NAME`.
    pub model_name: String,
    /// `MODEL_TIMEOUT_SECS`: one request's timeout.
    pub model_timeout: Duration,
    /// `MODEL_STRICT_TOOLS`: send `strict: true` on function tools (unconfirmed on Meta, so switchable).
    pub model_strict_tools: bool,
    /// `MODEL_SEND_MAX_TOOL_CALLS`: send `max_tool_calls` (unconfirmed on Meta, so switchable).
    pub model_send_max_tool_calls: bool,
    /// `PRICE_SEARCH_CONTEXT`, `PRICE_MAX_SEARCHES`, `TROVE_LOCATION`, `TROVE_CURRENCY`.
    pub price: PriceSettings,
    /// Rates and `SPEND_MONTHLY_LIMIT_USD`.
    pub spend: SpendPolicy,
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
        let (k, v) = part.split_once('=').with_context(|| format!("TROVE_LOCATION: {part:?} is not key=value"))?;
        let v = v.trim();
        if v.is_empty() {
            bail!("TROVE_LOCATION: {k} is empty");
        }
        let slot = match k.trim() {
            "country" => &mut loc.country,
            "region" => &mut loc.region,
            "city" => &mut loc.city,
            "timezone" => &mut loc.timezone,
            other => bail!("TROVE_LOCATION: unknown member {other:?} (country, region, city, timezone)"),
        };
        *slot = Some(v.to_owned());
    }
    if let Some(c) = &loc.country
        && !(c.len() == 2 && c.bytes().all(|b| b.is_ascii_uppercase()))
    {
        bail!("TROVE_LOCATION: country {c:?} must be a two-letter ISO code such as GB");
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

impl Config {
    /// Builds the configuration from `var` (the environment in production, a map in tests).
    ///
    /// # Errors
    /// A bad value, naming the setting.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        let get = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let bind = get("TROVE_BIND").unwrap_or_else(|| "127.0.0.1:8080".into());
        let bind: SocketAddr =
            bind.parse().with_context(|| format!("TROVE_BIND={bind:?} is not an address such as 127.0.0.1:8080"))?;
        let context = get("PRICE_SEARCH_CONTEXT").unwrap_or_else(|| "medium".into());
        let context_size = SearchContextSize::parse(&context)
            .with_context(|| format!("PRICE_SEARCH_CONTEXT={context:?} must be low, medium or high"))?;
        let max_searches = match get("PRICE_MAX_SEARCHES") {
            None => 4,
            Some(v) => v
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=20).contains(n))
                .with_context(|| format!("PRICE_MAX_SEARCHES={v:?} must be a whole number from 1 to 20"))?,
        };
        let location = match get("TROVE_LOCATION") {
            None => ApproximateLocation::default(),
            Some(v) => parse_location(&v)?,
        };
        let currency = match get("TROVE_CURRENCY") {
            Some(c) => Some(Currency::new(&c).with_context(|| format!("TROVE_CURRENCY={c:?} is not an ISO code"))?),
            None => location.country.as_deref().and_then(currency_of),
        };
        let d = Rates::default();
        let rates = Rates {
            input_per_mtok: usd("RATE_INPUT_PER_MTOK", get("RATE_INPUT_PER_MTOK"), d.input_per_mtok)?,
            cached_per_mtok: usd("RATE_CACHED_PER_MTOK", get("RATE_CACHED_PER_MTOK"), d.cached_per_mtok)?,
            output_per_mtok: usd("RATE_OUTPUT_PER_MTOK", get("RATE_OUTPUT_PER_MTOK"), d.output_per_mtok)?,
            per_search: usd("RATE_PER_SEARCH", get("RATE_PER_SEARCH"), d.per_search)?,
            transcribe_per_min: usd("RATE_TRANSCRIBE_PER_MIN", get("RATE_TRANSCRIBE_PER_MIN"), d.transcribe_per_min)?,
        };
        let monthly_limit = get("SPEND_MONTHLY_LIMIT_USD")
            .map(|v| MicroUsd::parse_usd(&v).with_context(|| format!("SPEND_MONTHLY_LIMIT_USD={v:?} is not an amount")))
            .transpose()?;
        let timeout = match get("MODEL_TIMEOUT_SECS") {
            None => 120,
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .with_context(|| format!("MODEL_TIMEOUT_SECS={v:?} must be a positive whole number"))?,
        };
        let database_url = get("DATABASE_URL");
        if let Some(url) = &database_url
            && !(url.starts_with("postgres://") || url.starts_with("postgresql://") || url.starts_with("sqlite:"))
        {
            bail!("DATABASE_URL must start with postgres://, postgresql:// or sqlite:");
        }
        Ok(Self {
            database_url,
            data_dir: PathBuf::from(get("TROVE_DATA_DIR").unwrap_or_else(|| "./trove-data".into())),
            bind,
            model_api_url: get("MODEL_API_URL").unwrap_or_else(|| "https://api.meta.ai/v1".into()),
            model_api_key: get("MODEL_API_KEY"),
            model_name: get("MODEL_NAME").unwrap_or_else(|| "muse-spark-1.3".into()),
            model_timeout: Duration::from_secs(timeout),
            model_strict_tools: flag("MODEL_STRICT_TOOLS", get("MODEL_STRICT_TOOLS"), true)?,
            model_send_max_tool_calls: flag("MODEL_SEND_MAX_TOOL_CALLS", get("MODEL_SEND_MAX_TOOL_CALLS"), true)?,
            price: PriceSettings { context_size, max_searches, location, currency },
            spend: SpendPolicy { rates, monthly_limit },
        })
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
    fn defaults() {
        let c = config(&[]).unwrap();
        assert_eq!(c.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(c.model_name, "muse-spark-1.3");
        assert_eq!(c.model_api_key, None);
        assert_eq!(c.price.max_searches, 4);
        assert_eq!(c.price.context_size, SearchContextSize::Medium);
        assert_eq!(c.spend.rates, Rates::default());
        assert_eq!(c.spend.monthly_limit, None);
        assert!(c.price.location.is_empty());
    }

    #[test]
    fn values_are_read() {
        let c = config(&[
            ("TROVE_LOCATION", "country=GB,region=England,city=Leeds,timezone=Europe/London"),
            ("SPEND_MONTHLY_LIMIT_USD", "5"),
            ("RATE_INPUT_PER_MTOK", "2.5"),
            ("PRICE_SEARCH_CONTEXT", "high"),
            ("MODEL_STRICT_TOOLS", "false"),
        ])
        .unwrap();
        assert_eq!(c.price.location.city.as_deref(), Some("Leeds"));
        assert_eq!(c.price.currency.map(|c| c.to_string()).as_deref(), Some("GBP"));
        assert_eq!(c.spend.monthly_limit, Some(MicroUsd(5_000_000)));
        assert_eq!(c.spend.rates.input_per_mtok, MicroUsd(2_500_000));
        assert_eq!(c.price.context_size, SearchContextSize::High);
        assert!(!c.model_strict_tools);
    }

    #[test]
    fn bad_values_name_the_setting() {
        for (k, v) in [
            ("TROVE_BIND", "nowhere"),
            ("PRICE_SEARCH_CONTEXT", "huge"),
            ("PRICE_MAX_SEARCHES", "0"),
            ("TROVE_LOCATION", "planet=Mars"),
            ("SPEND_MONTHLY_LIMIT_USD", "-3"),
            ("RATE_PER_SEARCH", "cheap"),
            ("DATABASE_URL", "mysql://x"),
            ("MODEL_STRICT_TOOLS", "maybe"),
        ] {
            let err = format!("{:#}", config(&[(k, v)]).unwrap_err());
            assert!(err.contains(k), "{k}: {err}");
        }
    }
}
