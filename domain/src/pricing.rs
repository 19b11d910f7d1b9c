//! Pricing: which comparables the web backs (the grounding rule) and what they say an item is worth.
//!
//! The model searches the web and answers with comparables; it may invent a page, misread a price or mix
//! currencies. The rules here keep only what the searched pages back ([`ground`]) and turn the kept comparables
//! into an estimate ([`estimate`]) with integer arithmetic, so the same evidence always gives the same numbers.

use crate::Timestamp;
use crate::ids::ItemId;
use crate::item::{Condition, Item};
use crate::money::{Currency, Money};
use crate::text::{Lines, clean, clip};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A comparable listing or sale the model found, after its price was read into minor units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparable {
    pub title: String,
    pub url: String,
    pub price: Money,
    /// The comparable's condition, when the page says.
    pub condition: Option<Condition>,
    /// A sold price (true) or an asking price (false).
    pub sold: bool,
    pub note: Option<String>,
}

/// A comparable the rules did not keep, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedComparable {
    pub url: String,
    pub title: String,
    pub reason: String,
}

/// What the kept comparables say an item is worth, in the item's currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Estimate {
    pub low: i64,
    pub typical: i64,
    pub high: i64,
    pub currency: Currency,
}

/// One pricing of one item: stored as its price history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriceReport {
    pub item_id: ItemId,
    pub at: Timestamp,
    pub comparables: Vec<Comparable>,
    pub dropped: Vec<DroppedComparable>,
    /// `None`: too little evidence.
    pub estimate: Option<Estimate>,
    pub searches: u32,
    /// Whether the estimate comes from a search or was set by hand (a report stored before hand values is a
    /// search's).
    #[serde(default)]
    pub source: PriceSource,
}

/// Where a price report's estimate comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriceSource {
    /// A web search's comparables, grounded by the rules.
    #[default]
    Search,
    /// A person's own figure (a valuation, a replacement quote): one value, no comparables.
    Hand,
}

/// The reason a comparable whose page the search never showed is dropped (the grounding rule).
pub const NOT_GROUNDED: &str = "page not among search results or citations";

/// The reason a comparable whose URL is no real page is dropped: a host without a dot, or a placeholder
/// (`...`). Such a URL is never grounded, whatever the search showed.
pub const NOT_A_PAGE: &str = "url is a placeholder or has no real host";

/// Longest comparable title kept, in characters: model text is clipped, never interpreted.
pub const COMPARABLE_TITLE_MAX: usize = 300;

/// Normalises a URL for the grounding comparison: trims whitespace, lower-cases the scheme and the host, drops
/// the fragment and the tracking query parameters ([`is_tracking_param`]: a citation carries
/// `?utm_source=...` where the search result has none) and empty parameters, and removes **one** trailing `/`
/// of the path and one of the query. Userinfo, port, path and the other query parameters are kept exactly as they are, in
/// their order, because two pages that differ there are different pages. Text without `scheme://` is only
/// trimmed and loses its trailing `/`.
///
/// Normalising twice changes nothing, except for a path ending in two slashes: exactly one slash goes each time,
/// as the rule says.
///
/// ```
/// use trove_domain::pricing::normalise_url;
/// assert_eq!(normalise_url(" HTTPS://www.eBay.co.uk/itm/Pi4/ "), "https://www.ebay.co.uk/itm/Pi4");
/// assert_eq!(normalise_url("https://Bob@Shop.Example:8443/A?Q=1#Top"), "https://Bob@shop.example:8443/A?Q=1");
/// assert_eq!(normalise_url("https://shop.example/pi/?utm_source=chatgpt.com&id=4"), "https://shop.example/pi?id=4");
/// ```
pub fn normalise_url(raw: &str) -> String {
    let trimmed = raw.trim();
    let Some((scheme, rest)) = trimmed.split_once("://").filter(|(scheme, _)| is_scheme(scheme)) else {
        return trimmed.strip_suffix('/').unwrap_or(trimmed).to_owned();
    };
    let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    // One trailing `/` goes from the path and one from the query: `/pi/?id=4/` is `/pi?id=4`, as `/pi/` is `/pi`.
    let path = path.strip_suffix('/').unwrap_or(path);
    let query = query.strip_suffix('/').unwrap_or(query);
    let kept: Vec<&str> = query.split('&').filter(|p| !p.is_empty() && !is_tracking_param(p)).collect();
    let mut tail = path.to_owned();
    if !kept.is_empty() {
        tail.push('?');
        tail.push_str(&kept.join("&"));
    }
    let (userinfo, host_port) = match authority.rfind('@') {
        Some(at) => authority.split_at(at + 1),
        None => ("", authority),
    };
    let (host, port) = split_port(host_port);
    format!("{}://{userinfo}{}{port}{tail}", scheme.to_ascii_lowercase(), host.to_lowercase())
}

/// Whether a query parameter (`name` or `name=value`) only tracks where a visitor came from: `utm_*`, `gclid`,
/// `fbclid`, `ref` and `ref_src` (names compared without regard to case). The page is the same without it.
///
/// ```
/// use trove_domain::pricing::is_tracking_param;
/// assert!(is_tracking_param("utm_source=chatgpt.com"));
/// assert!(is_tracking_param("ref"));
/// assert!(!is_tracking_param("referrer=x"));
/// assert!(!is_tracking_param("id=4"));
/// ```
pub fn is_tracking_param(param: &str) -> bool {
    let name = param.split_once('=').map_or(param, |(name, _)| name).to_ascii_lowercase();
    name.starts_with("utm_") || matches!(name.as_str(), "gclid" | "fbclid" | "ref" | "ref_src")
}

/// Whether a normalised URL names a real page a search could have shown: its host has a dot between non-empty
/// labels (no `localhost`, no bare word, no IP v6 literal) and nothing in it is a placeholder (`...` or `…`,
/// as a model writes for a page it does not know).
///
/// ```
/// use trove_domain::pricing::{is_real_page, normalise_url};
/// assert!(is_real_page(&normalise_url("https://www.ebay.co.uk/itm/1")));
/// assert!(!is_real_page(&normalise_url("https://...")));
/// assert!(!is_real_page(&normalise_url("https://www.ebay.co.uk/itm/...")));
/// assert!(!is_real_page(&normalise_url("http://localhost:8080/pi")));
/// ```
pub fn is_real_page(normalised: &str) -> bool {
    if normalised.contains("...") || normalised.contains('\u{2026}') {
        return false;
    }
    let Some((_, rest)) = normalised.split_once("://") else { return false };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_port = authority.rfind('@').map_or(authority, |at| &authority[at + 1..]);
    let (host, _) = split_port(host_port);
    let host = host.strip_suffix('.').unwrap_or(host);
    host.contains('.') && host.split('.').all(|label| !label.is_empty())
}

/// A URL scheme: a letter, then letters, digits, `+`, `-` or `.` (RFC 3986).
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Splits `host:port` (or `[v6]:port`) into the host and the `:port` part, which may be empty.
fn split_port(host_port: &str) -> (&str, &str) {
    if host_port.starts_with('[') {
        let end = host_port.find(']').map_or(host_port.len(), |i| i + 1);
        return host_port.split_at(end);
    }
    match host_port.rfind(':') {
        Some(i) => host_port.split_at(i),
        None => (host_port, ""),
    }
}

/// True when a normalised URL is an `http` or `https` address with a host, without white space or control
/// characters inside.
fn is_web_address(normalised: &str) -> bool {
    let rest = normalised.strip_prefix("https://").or_else(|| normalised.strip_prefix("http://"));
    rest.is_some_and(|r| {
        !r.is_empty() && !r.starts_with(['/', '?', '#']) && !r.chars().any(|c| c.is_whitespace() || c.is_control())
    })
}

/// **The URL rule**: only an `http` or `https` address (any case, white space around it ignored) is kept
/// anywhere: as a comparable's page, in a dropped comparable, in the price history. Everything else
/// (`javascript:`, `data:`, `ftp:`, no scheme at all) is text a browser must never follow.
///
/// ```
/// use trove_domain::pricing::is_web_url;
/// assert!(is_web_url(" HTTPS://shop.example/pi "));
/// assert!(!is_web_url("javascript:alert(1)"));
/// assert!(!is_web_url("data:text/html,<script>alert(1)</script>"));
/// assert!(!is_web_url("ftp://shop.example/pi"));
/// ```
pub fn is_web_url(url: &str) -> bool {
    is_web_address(&normalise_url(url))
}

/// Why a URL is not kept by [`is_web_url`]: its scheme named, when it has one.
///
/// ```
/// use trove_domain::pricing::not_web_reason;
/// assert_eq!(not_web_reason("javascript:alert(1)"), "url scheme \"javascript\" is not http or https");
/// assert_eq!(not_web_reason("shop.example/pi"), "url is not an http or https address");
/// ```
pub fn not_web_reason(url: &str) -> String {
    match url.trim().split_once(':').map(|(scheme, _)| scheme.to_ascii_lowercase()) {
        Some(scheme) if is_scheme(&scheme) && scheme != "http" && scheme != "https" => {
            format!("url scheme {:?} is not http or https", clip(&scheme, 20))
        }
        _ => NOT_WEB.to_owned(),
    }
}

/// The reason a comparable whose URL has no scheme, or an `http(s)` one with no host, is dropped.
pub const NOT_WEB: &str = "url is not an http or https address";

/// The pages a price search really showed: every `url` of the `web_search_call` results and action sources and
/// of the answer's `url_citation` annotations, normalised with [`normalise_url`]. Blank URLs and URLs that are
/// no real page ([`is_real_page`]) are ignored.
///
/// ```
/// use trove_domain::pricing::GroundingPages;
/// let pages = GroundingPages::new(["https://Example.com/a/", "https://example.com/b"]);
/// assert!(pages.contains(" https://EXAMPLE.com/a"));
/// assert!(!pages.contains("https://example.com/A"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroundingPages {
    /// Normalised URLs. Ordered, so the value prints the same way every time.
    urls: BTreeSet<String>,
}

impl GroundingPages {
    /// The pages of these URLs, in any spelling.
    pub fn new<'a>(urls: impl IntoIterator<Item = &'a str>) -> Self {
        let mut pages = Self::default();
        for url in urls {
            pages.add(url);
        }
        pages
    }

    /// Adds one page; a URL that is no real page ([`is_real_page`]) is left out, so it can never ground.
    pub fn add(&mut self, url: &str) {
        let n = normalise_url(url);
        if is_real_page(&n) {
            self.urls.insert(n);
        }
    }

    /// True when `url`, normalised, is one of the pages (never for a URL that is no real page).
    pub fn contains(&self, url: &str) -> bool {
        let n = normalise_url(url);
        is_real_page(&n) && self.urls.contains(&n)
    }

    pub fn len(&self) -> usize {
        self.urls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }
}

impl<'a> FromIterator<&'a str> for GroundingPages {
    fn from_iter<I: IntoIterator<Item = &'a str>>(iter: I) -> Self {
        Self::new(iter)
    }
}

/// One comparable as the model answered it (read through the application's `Comparables` contract). Nothing
/// here is checked yet: [`ground`] judges every value.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelComparable {
    pub title: String,
    pub url: String,
    /// In major units, as the page shows it (45.99).
    pub price: f64,
    /// Meant to be an ISO 4217 code; checked by [`ground`].
    pub currency: String,
    /// Free words ("used - good", "for parts"); read by [`read_condition`].
    pub condition: Option<String>,
    pub sold: bool,
    pub note: Option<String>,
}

/// Reads the condition words a marketplace or the model uses into a [`Condition`]; `None` for words it does not
/// know. Case, `-`, `_`, `/` and a leading "used" are ignored.
///
/// ```
/// use trove_domain::item::Condition;
/// use trove_domain::pricing::read_condition;
/// assert_eq!(read_condition("Used - Like New"), Some(Condition::LikeNew));
/// assert_eq!(read_condition("Spares or repair"), Some(Condition::ForParts));
/// assert_eq!(read_condition("shiny"), None);
/// ```
pub fn read_condition(words: &str) -> Option<Condition> {
    let lower = words.to_lowercase();
    let spaced: String = lower.chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
    let compact = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
    let phrase = |p: &str| -> Option<Condition> {
        Some(match p {
            "new" | "brand new" | "sealed" | "new sealed" | "factory sealed" | "new in box" | "nib" | "bnib"
            | "unused" => Condition::New,
            "like new"
            | "as new"
            | "mint"
            | "near mint"
            | "excellent"
            | "open box"
            | "new other"
            | "new other see details"
            | "refurbished"
            | "certified refurbished"
            | "seller refurbished"
            | "manufacturer refurbished" => Condition::LikeNew,
            "good" | "very good" | "used" | "pre owned" | "preowned" | "second hand" | "secondhand" | "working" => {
                Condition::Good
            }
            "fair" | "acceptable" | "worn" | "well used" => Condition::Fair,
            "poor" | "bad" | "damaged" | "heavily used" => Condition::Poor,
            "for parts"
            | "for parts or not working"
            | "parts only"
            | "spares or repair"
            | "spares repair"
            | "spares"
            | "for spares"
            | "not working"
            | "faulty"
            | "broken" => Condition::ForParts,
            _ => return None,
        })
    };
    phrase(&compact).or_else(|| compact.strip_prefix("used ").and_then(phrase))
}

/// **The grounding rule.** Keeps a comparable only when its page is among `pages` (the search results, action
/// sources and citations), after [`normalise_url`] on both sides; the others are dropped with the reason
/// [`NOT_GROUNDED`]. Also dropped, each with its reason: a URL that is not `http(s)` (the URL rule,
/// [`is_web_url`]: the dropped comparable keeps no such URL, its reason names the scheme), one that is no real page
/// ([`is_real_page`]: [`NOT_A_PAGE`]), a price that is not a
/// finite positive amount (or rounds to nothing), a currency that is not a three-letter ISO 4217 code, and a
/// page already kept (the first one wins). Kept prices are integer minor units ([`Money::from_major`]),
/// condition words are read with [`read_condition`], titles and notes are trimmed and clipped, their control
/// characters made spaces.
///
/// ```
/// use trove_domain::pricing::{ground, GroundingPages, ModelComparable};
/// let pages = GroundingPages::new(["https://shop.example/pi4"]);
/// let answer = |url: &str| ModelComparable {
///     title: "Pi 4".into(), url: url.into(), price: 45.5, currency: "gbp".into(),
///     condition: Some("used".into()), sold: true, note: None,
/// };
/// let (kept, dropped) = ground(&[answer("https://SHOP.example/pi4/"), answer("https://made.up/pi4")], &pages);
/// assert_eq!(kept[0].price.minor, 4550);
/// assert_eq!(dropped[0].reason, "page not among search results or citations");
/// ```
pub fn ground(answer: &[ModelComparable], pages: &GroundingPages) -> (Vec<Comparable>, Vec<DroppedComparable>) {
    let mut kept: Vec<Comparable> = Vec::new();
    let mut kept_pages: BTreeSet<String> = BTreeSet::new();
    let mut dropped: Vec<DroppedComparable> = Vec::new();
    for c in answer {
        let mut url = c.url.trim().to_owned();
        let title = clip(&clean(&c.title, Lines::One), COMPARABLE_TITLE_MAX);
        let page = normalise_url(&url);
        let refusal = if !is_web_address(&page) {
            let reason = not_web_reason(&url);
            url.clear();
            Err(reason)
        } else if !is_real_page(&page) {
            Err(NOT_A_PAGE.to_owned())
        } else if !pages.contains(&page) {
            Err(NOT_GROUNDED.to_owned())
        } else if kept_pages.contains(&page) {
            Err("same page as an earlier comparable".to_owned())
        } else {
            read_price(c.price, &c.currency)
        };
        match refusal {
            Ok(price) => {
                kept_pages.insert(page);
                kept.push(Comparable {
                    title,
                    url,
                    price,
                    condition: c.condition.as_deref().and_then(read_condition),
                    sold: c.sold,
                    note: crate::item::model_note(c.note.as_deref()),
                });
            }
            Err(reason) => dropped.push(DroppedComparable { url, title, reason }),
        }
    }
    (kept, dropped)
}

/// Reads a model's price into money, or says why not.
fn read_price(amount: f64, currency: &str) -> Result<Money, String> {
    if !amount.is_finite() || amount <= 0.0 {
        return Err("price is not a finite positive amount".to_owned());
    }
    let currency =
        Currency::new(currency).map_err(|_| format!("currency {:?} is not an ISO 4217 code", clip(currency, 20)))?;
    match Money::from_major(amount, currency) {
        Ok(m) if m.minor > 0 => Ok(m),
        Ok(_) => Err("price is not a finite positive amount".to_owned()),
        Err(_) => Err("price is too large".to_owned()),
    }
}

/// How many times a sold price counts in the estimate: a sale is what a buyer really paid.
pub const SOLD_WEIGHT: usize = 2;
/// How many times an asking price counts in the estimate.
pub const ASKING_WEIGHT: usize = 1;
/// The percentiles of the weighted, condition-adjusted prices that give low, typical and high.
pub const PERCENTILES: [i64; 3] = [20, 50, 80];

/// What an item in `condition` is worth relative to the same item new, in thousandths: new 1000, like new 900,
/// good 800, fair 650, poor 500, for parts 300.
///
/// ```
/// use trove_domain::item::Condition;
/// assert_eq!(trove_domain::pricing::condition_factor(Condition::Fair), 650);
/// ```
pub fn condition_factor(condition: Condition) -> i64 {
    match condition {
        Condition::New => 1000,
        Condition::LikeNew => 900,
        Condition::Good => 800,
        Condition::Fair => 650,
        Condition::Poor => 500,
        Condition::ForParts => 300,
    }
}

/// A comparable's price, in minor units, adjusted to the item's condition: multiplied by the ratio of the
/// item's [`condition_factor`] to the comparable's (a comparable of unknown condition counts as `good`), rounded
/// half up to a whole minor unit.
///
/// ```
/// use trove_domain::item::Condition;
/// use trove_domain::pricing::adjust_for_condition;
/// // A like-new one sold for 120.00; a good one is worth 120.00 * 800 / 900 = 106.67.
/// assert_eq!(adjust_for_condition(12000, Some(Condition::LikeNew), Condition::Good), 10667);
/// ```
pub fn adjust_for_condition(price_minor: i64, comparable: Option<Condition>, item: Condition) -> i64 {
    let from = i128::from(condition_factor(comparable.unwrap_or(Condition::Good)));
    let to = i128::from(condition_factor(item));
    let adjusted = (i128::from(price_minor) * to * 2 + from) / (2 * from);
    i64::try_from(adjusted).unwrap_or(i64::MAX)
}

/// **The estimate rule.** From the kept comparables: the currency is `preferred_currency` when at least two
/// comparables are in it, else the most common one (ties: more sold prices, then the first code
/// alphabetically). Comparables in other currencies are left out, never converted: there are no exchange rates
/// offline. Fewer than two comparables in that currency is too little evidence (`None`).
///
/// Each price is adjusted to the item's condition ([`adjust_for_condition`]) and counted [`SOLD_WEIGHT`] times
/// when sold, [`ASKING_WEIGHT`] times when asked. Low, typical and high are the 20th, 50th and 80th percentiles
/// of those counted prices, interpolating linearly between neighbours (as a spreadsheet's `PERCENTILE.INC`
/// does) and rounding half up, in minor units: so low <= typical <= high.
///
/// ```
/// use trove_domain::item::Condition;
/// use trove_domain::money::{Currency, Money};
/// use trove_domain::pricing::{estimate, Comparable};
/// let gbp = Currency::new("GBP").unwrap();
/// let asking = |minor| Comparable {
///     title: "Pi".into(), url: "https://x.example".into(), price: Money { minor, currency: gbp },
///     condition: Some(Condition::Good), sold: false, note: None,
/// };
/// // Prices 100.00 and 200.00: percentiles at positions 0.2, 0.5 and 0.8 between them.
/// let e = estimate(Condition::Good, &[asking(10000), asking(20000)], None).unwrap();
/// assert_eq!((e.low, e.typical, e.high), (12000, 15000, 18000));
/// assert!(estimate(Condition::Good, &[asking(10000)], None).is_none());
/// ```
pub fn estimate(
    item_condition: Condition,
    kept: &[Comparable],
    preferred_currency: Option<Currency>,
) -> Option<Estimate> {
    let usable: Vec<&Comparable> = kept.iter().filter(|c| c.price.minor > 0).collect();
    let count = |currency: Currency| usable.iter().filter(|c| c.price.currency == currency).count();
    let currency = match preferred_currency {
        Some(p) if count(p) >= 2 => p,
        _ => most_common_currency(&usable)?,
    };
    if count(currency) < 2 {
        return None;
    }
    let mut prices: Vec<i64> = Vec::new();
    for c in usable.iter().filter(|c| c.price.currency == currency) {
        let adjusted = adjust_for_condition(c.price.minor, c.condition, item_condition);
        let weight = if c.sold { SOLD_WEIGHT } else { ASKING_WEIGHT };
        prices.extend(std::iter::repeat_n(adjusted, weight));
    }
    prices.sort_unstable();
    let [low, typical, high] = PERCENTILES.map(|p| percentile(&prices, p));
    Some(Estimate { low, typical, high, currency })
}

/// The currency most comparables are in; ties go to the one with more sold prices, then to the first code.
fn most_common_currency(usable: &[&Comparable]) -> Option<Currency> {
    let mut tally: BTreeMap<Currency, (usize, usize)> = BTreeMap::new();
    for c in usable {
        let entry = tally.entry(c.price.currency).or_default();
        entry.0 += 1;
        entry.1 += usize::from(c.sold);
    }
    let mut best: Option<(Currency, (usize, usize))> = None;
    for (currency, score) in tally {
        if best.is_none_or(|(_, b)| score > b) {
            best = Some((currency, score));
        }
    }
    best.map(|(c, _)| c)
}

/// The `p`th percentile of sorted, non-empty values, interpolating linearly and rounding half up.
fn percentile(sorted: &[i64], p: i64) -> i64 {
    let Some(last) = sorted.len().checked_sub(1) else {
        return 0;
    };
    let position = i128::try_from(last).unwrap_or(i128::MAX) * i128::from(p);
    let (index, rest) = (usize::try_from(position / 100).unwrap_or(last), position % 100);
    let below = sorted[index.min(last)];
    if rest == 0 || index >= last {
        return below;
    }
    let above = sorted[index + 1];
    let step = (i128::from(above - below) * rest + 50) / 100;
    below + i64::try_from(step).unwrap_or(0)
}

impl PriceReport {
    /// The report with [the URL rule](is_web_url) applied to what it holds, for a report stored before the rule:
    /// a comparable whose URL is not `http(s)` becomes a dropped one without its URL, and a dropped comparable
    /// keeps no such URL either. A report written by [`price_report`] is the same after.
    pub fn web_urls_only(mut self) -> Self {
        let (kept, refused): (Vec<Comparable>, Vec<Comparable>) =
            self.comparables.into_iter().partition(|c| is_web_url(&c.url));
        self.comparables = kept;
        for c in refused {
            let reason = not_web_reason(&c.url);
            self.dropped.push(DroppedComparable { url: String::new(), title: c.title, reason });
        }
        for d in &mut self.dropped {
            if !d.url.is_empty() && !is_web_url(&d.url) {
                d.url.clear();
            }
        }
        self
    }
}

/// Why an item cannot be priced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotPriceable {
    #[error("item {0} is gone; there is nothing to price")]
    Gone(ItemId),
}

/// The rule for pricing: an item that is gone is history, not something to sell; anything else may be priced
/// (an owner may want to know what a kept item is worth).
///
/// # Errors
/// [`NotPriceable::Gone`] for a gone item.
pub fn check_priceable(item: &Item) -> Result<(), NotPriceable> {
    match item.gone {
        Some(_) => Err(NotPriceable::Gone(item.id)),
        None => Ok(()),
    }
}

/// Grounds a model's answer and estimates from what was kept: the whole price report for `item`, as stored in
/// its price history.
pub fn price_report(
    item: &Item,
    at: Timestamp,
    answer: &[ModelComparable],
    pages: &GroundingPages,
    preferred_currency: Option<Currency>,
    searches: u32,
) -> PriceReport {
    let (comparables, dropped) = ground(answer, pages);
    let estimate = estimate(item.condition, &comparables, preferred_currency);
    PriceReport { item_id: item.id, at, comparables, dropped, estimate, searches, source: PriceSource::Search }
}

/// A value set by hand: what one unit of the item is worth, as of `at`, kept in its price history like an estimate
/// (its low, typical and high are the one figure). A gone item may be valued too: a stolen one is what an insurer
/// is asked to pay for.
///
/// ```
/// use trove_domain::money::{Currency, Money};
/// use trove_domain::pricing::{PriceSource, hand_value};
/// let value = Money { minor: 8_000, currency: Currency::new("EUR").unwrap() };
/// let report = hand_value(trove_domain::ItemId(1), chrono::Utc::now(), value);
/// assert_eq!((report.source, report.estimate.unwrap().typical), (PriceSource::Hand, 8_000));
/// ```
pub fn hand_value(item: ItemId, at: Timestamp, each: Money) -> PriceReport {
    PriceReport {
        item_id: item,
        at,
        comparables: Vec::new(),
        dropped: Vec::new(),
        estimate: Some(Estimate { low: each.minor, typical: each.minor, high: each.minor, currency: each.currency }),
        searches: 0,
        source: PriceSource::Hand,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_gone_item_is_not_priced() {
        let mut item = crate::testing::item(5, "laptop", Good);
        assert_eq!(check_priceable(&item), Ok(()));
        item.gone =
            Some(crate::item::Gone { reason: crate::item::GoneReason::Sold, at: crate::testing::at(2), note: None });
        assert_eq!(check_priceable(&item).unwrap_err().to_string(), "item 5 is gone; there is nothing to price");
    }

    #[test]
    fn urls_are_normalised() {
        fn check(raw: &str, expected: &str) {
            assert_eq!(normalise_url(raw), expected, "{raw:?}");
        }
        check("https://example.com/item/1", "https://example.com/item/1");
        check("  https://example.com/item/1/ \n", "https://example.com/item/1");
        check("HTTPS://WWW.Example.COM/Item/ABC", "https://www.example.com/Item/ABC");
        check("https://example.com/", "https://example.com");
        check("https://example.com//", "https://example.com/");
        check("https://User:PassWord@EXAMPLE.com:8080/P", "https://User:PassWord@example.com:8080/P");
        check("http://[2001:DB8::1]:80/X", "http://[2001:db8::1]:80/X");
        check("https://example.com?Q=A/", "https://example.com?Q=A");
        check("https://EXAMPLE.com#Frag", "https://example.com");
        check("https://Example.com/a?b=C#D/", "https://example.com/a?b=C");
        // Tracking parameters and the fragment say nothing about the page.
        check("https://shop.example/pi?utm_source=chatgpt.com", "https://shop.example/pi");
        check("https://shop.example/pi/?utm_source=chatgpt.com", "https://shop.example/pi");
        check(
            "https://shop.example/pi?id=4&UTM_Medium=x&gclid=1&fbclid=2&ref=a&ref_src=b#top",
            "https://shop.example/pi?id=4",
        );
        check("https://shop.example/pi?b=2&utm_campaign=&a=1", "https://shop.example/pi?b=2&a=1");
        check("https://shop.example/pi?&&ref", "https://shop.example/pi");
        check("https://shop.example/pi?referrer=x&refs=1", "https://shop.example/pi?referrer=x&refs=1");
        check("https://shop.example/a#b?utm_source=x", "https://shop.example/a");
        check("https://shop.example/a/?id=4/", "https://shop.example/a?id=4");
        check("https://shop.example/a/?ref=x", "https://shop.example/a");
        check("https://shop.example?", "https://shop.example");
        check("www.Example.com/Path/", "www.Example.com/Path");
        check("1http://Example.com", "1http://Example.com");
        check("", "");
        check("   /  ", "");
    }

    #[test]
    fn condition_words() {
        fn check(words: &str, expected: Option<Condition>) {
            assert_eq!(read_condition(words), expected, "{words:?}");
        }
        check("new", Some(New));
        check("Brand New", Some(New));
        check("like_new", Some(LikeNew));
        check("like new", Some(LikeNew));
        check("Used - Like New", Some(LikeNew));
        check("Open box", Some(LikeNew));
        check("good", Some(Good));
        check("Used", Some(Good));
        check("used: very good", Some(Good));
        check("Pre-owned", Some(Good));
        check("FAIR", Some(Fair));
        check("used - acceptable", Some(Fair));
        check("poor", Some(Poor));
        check("for_parts", Some(ForParts));
        check("for parts", Some(ForParts));
        check("For parts or not working", Some(ForParts));
        check("Spares or repair", Some(ForParts));
        check("spares/repair", Some(ForParts));
        check("", None);
        check("used-ish", None);
        check("good enough", None);
    }

    fn offer(url: &str, price: f64, currency: &str) -> ModelComparable {
        ModelComparable {
            title: " Raspberry Pi 4 4GB ".into(),
            url: url.into(),
            price,
            currency: currency.into(),
            condition: Some("Used - Good".into()),
            sold: false,
            note: Some("  ".into()),
        }
    }

    fn search_pages() -> GroundingPages {
        // Search results, action sources and citations all count as pages the search showed; what is no real
        // page is left out.
        GroundingPages::new([
            "https://www.ebay.co.uk/itm/111",
            "https://shop.example/pi-4/",
            "HTTPS://Cited.Example/Listing/9",
            "  ",
            "https://localhost/pi",
            "https://shop/pi-4",
            "https://...",
            "https://www.ebay.co.uk/itm/...",
        ])
    }

    #[test]
    fn pages_that_are_no_real_page_are_left_out() {
        assert_eq!(search_pages().len(), 3);
        fn check(url: &str, expected: bool) {
            assert_eq!(is_real_page(&normalise_url(url)), expected, "{url:?}");
        }
        check("https://www.ebay.co.uk/itm/1", true);
        check("https://Bob@Shop.Example:8443/A", true);
        check("https://shop.example./a", true);
        check("http://192.168.1.20/pi", true);
        check("https://localhost/pi", false);
        check("https://localhost:8080", false);
        check("https://shop", false);
        check("https://.example/a", false);
        check("https://shop.example../a", false);
        check("https://...", false);
        check("https://\u{2026}", false);
        check("https://shop.example/listing/\u{2026}", false);
        check("https://shop.example/.../pi", false);
        check("https://[2001:db8::1]/pi", false);
        check("shop.example/pi", false);
        check("", false);
    }

    #[test]
    fn grounding() {
        fn check(offer: ModelComparable, expected: Result<i64, &str>) {
            let (kept, dropped) = ground(std::slice::from_ref(&offer), &search_pages());
            let got = match (kept.as_slice(), dropped.as_slice()) {
                ([k], []) => Ok(k.price.minor),
                ([], [d]) => Err(d.reason.as_str()),
                _ => panic!("one comparable in, one out: {kept:?} {dropped:?}"),
            };
            assert_eq!(got, expected, "{offer:?}");
        }
        check(offer("https://www.ebay.co.uk/itm/111", 45.0, "GBP"), Ok(4500));
        check(offer("https://www.ebay.co.uk/itm/111/", 45.99, "gbp"), Ok(4599));
        check(offer(" https://WWW.EBAY.CO.UK/itm/111 ", 45.0, "GBP"), Ok(4500));
        check(offer("https://shop.example/pi-4", 4500.0, "JPY"), Ok(4500));
        check(offer("https://cited.example/Listing/9/", 1.5, "USD"), Ok(150));
        check(offer("https://cited.example/listing/9", 45.0, "GBP"), Err(NOT_GROUNDED));
        check(offer("https://www.ebay.co.uk/itm/112", 45.0, "GBP"), Err(NOT_GROUNDED));
        check(offer("https://invented.example/pi", 45.0, "GBP"), Err(NOT_GROUNDED));
        check(offer("ftp://www.ebay.co.uk/itm/111", 45.0, "GBP"), Err("url scheme \"ftp\" is not http or https"));
        check(offer("javascript:alert(1)", 45.0, "GBP"), Err("url scheme \"javascript\" is not http or https"));
        check(offer(" JavaScript://%0aalert(1)", 45.0, "GBP"), Err("url scheme \"javascript\" is not http or https"));
        check(offer("data:text/html,<b>x</b>", 45.0, "GBP"), Err("url scheme \"data\" is not http or https"));
        check(offer("https://", 45.0, "GBP"), Err("url is not an http or https address"));
        check(offer("//www.ebay.co.uk/itm/111", 45.0, "GBP"), Err("url is not an http or https address"));
        check(offer("https://www.ebay.co.uk/itm/1 11", 45.0, "GBP"), Err("url is not an http or https address"));
        // The same page with tracking parameters or a fragment is the page the search showed.
        check(offer("https://www.ebay.co.uk/itm/111?utm_source=chatgpt.com", 45.0, "GBP"), Ok(4500));
        check(offer("https://shop.example/pi-4/?ref=search#reviews", 45.0, "GBP"), Ok(4500));
        check(offer("https://shop.example/pi-4?colour=red", 45.0, "GBP"), Err(NOT_GROUNDED));
        // No real host, or a placeholder: never grounded, even when the search "showed" it.
        check(offer("https://localhost/pi", 45.0, "GBP"), Err(NOT_A_PAGE));
        check(offer("https://shop/pi-4", 45.0, "GBP"), Err(NOT_A_PAGE));
        check(offer("https://...", 45.0, "GBP"), Err(NOT_A_PAGE));
        check(offer("https://www.ebay.co.uk/itm/...", 45.0, "GBP"), Err(NOT_A_PAGE));
        check(offer("https://shop..example/pi", 45.0, "GBP"), Err(NOT_A_PAGE));
        check(offer("https://[2001:db8::1]/pi", 45.0, "GBP"), Err(NOT_A_PAGE));
        check(offer("https://shop.example/pi-4", 0.0, "GBP"), Err("price is not a finite positive amount"));
        check(offer("https://shop.example/pi-4", -3.0, "GBP"), Err("price is not a finite positive amount"));
        check(offer("https://shop.example/pi-4", f64::NAN, "GBP"), Err("price is not a finite positive amount"));
        check(offer("https://shop.example/pi-4", f64::INFINITY, "GBP"), Err("price is not a finite positive amount"));
        check(offer("https://shop.example/pi-4", 0.001, "GBP"), Err("price is not a finite positive amount"));
        check(offer("https://shop.example/pi-4", 2e12, "GBP"), Err("price is too large"));
        check(offer("https://shop.example/pi-4", 45.0, "£"), Err("currency \"£\" is not an ISO 4217 code"));
        check(offer("https://shop.example/pi-4", 45.0, "pounds"), Err("currency \"pounds\" is not an ISO 4217 code"));
    }

    /// The URL rule: a dropped comparable keeps no URL that is not http(s), model text loses its control
    /// characters, and a report stored before the rule is read back under it.
    #[test]
    fn only_web_urls_are_kept_anywhere() {
        let mut script = offer("javascript:alert(document.cookie)", 45.0, "GBP");
        script.title = "Pi\u{0} 4\u{1b}[2J".into();
        script.note = Some("a\u{7}b\nc".into());
        let (kept, dropped) = ground(&[script, offer("https://invented.example/pi", 45.0, "GBP")], &search_pages());
        assert!(kept.is_empty());
        assert_eq!(dropped[0].url, "");
        assert_eq!(dropped[0].title, "Pi  4 [2J");
        assert_eq!(dropped[0].reason, "url scheme \"javascript\" is not http or https");
        assert_eq!(dropped[1].url, "https://invented.example/pi", "an http(s) URL is kept, even when dropped");

        let mut noted = offer("https://shop.example/pi-4", 45.0, "GBP");
        noted.note = Some(" a\u{7}b\nc ".into());
        let (kept, _) = ground(&[noted], &search_pages());
        assert_eq!(kept[0].note.as_deref(), Some("a b\nc"));

        let old = PriceReport {
            item_id: ItemId(1),
            at: Timestamp::default(),
            comparables: vec![kept[0].clone(), Comparable { url: "data:text/html,x".into(), ..kept[0].clone() }],
            dropped: vec![DroppedComparable { url: "vbscript:x".into(), title: "t".into(), reason: "r".into() }],
            estimate: None,
            searches: 1,
            source: PriceSource::Search,
        };
        let read = old.clone().web_urls_only();
        assert_eq!(read.comparables, vec![kept[0].clone()]);
        assert_eq!(read.dropped[0], DroppedComparable { url: String::new(), title: "t".into(), reason: "r".into() });
        assert_eq!(read.dropped[1].reason, "url scheme \"data\" is not http or https");
        assert!(read.dropped.iter().all(|d| d.url.is_empty()));
        let current = PriceReport { comparables: vec![kept[0].clone()], dropped: vec![], ..old };
        assert_eq!(current.clone().web_urls_only(), current);
    }

    #[test]
    fn grounding_keeps_the_first_of_one_page_and_reads_the_rest() {
        let mut sold = offer("https://shop.example/pi-4", 50.0, "GBP");
        sold.sold = true;
        sold.condition = Some("for parts".into());
        sold.note = Some(" boxed ".into());
        let answer = [sold, offer("https://SHOP.example/pi-4/", 40.0, "GBP"), offer("https://x.example", 1.0, "GBP")];
        let (kept, dropped) = ground(&answer, &search_pages());
        assert_eq!(
            kept,
            vec![Comparable {
                title: "Raspberry Pi 4 4GB".into(),
                url: "https://shop.example/pi-4".into(),
                price: Money { minor: 5000, currency: Currency::new("GBP").unwrap() },
                condition: Some(ForParts),
                sold: true,
                note: Some("boxed".into()),
            }]
        );
        let reasons: Vec<(&str, &str)> = dropped.iter().map(|d| (d.url.as_str(), d.reason.as_str())).collect();
        assert_eq!(
            reasons,
            vec![
                ("https://SHOP.example/pi-4/", "same page as an earlier comparable"),
                ("https://x.example", NOT_GROUNDED)
            ]
        );
        assert_eq!(dropped[1].title, "Raspberry Pi 4 4GB");
    }

    fn gbp() -> Currency {
        Currency::new("GBP").unwrap()
    }

    fn comp(minor: i64, currency: &str, condition: Option<Condition>, sold: bool) -> Comparable {
        Comparable {
            title: "c".into(),
            url: format!("https://x.example/{minor}"),
            price: Money { minor, currency: Currency::new(currency).unwrap() },
            condition,
            sold,
            note: None,
        }
    }

    use Condition::{Fair, ForParts, Good, LikeNew, New, Poor};

    #[test]
    fn condition_adjustment() {
        fn check(input: (i64, Option<Condition>, Condition), expected: i64) {
            assert_eq!(adjust_for_condition(input.0, input.1, input.2), expected, "{input:?}");
        }
        check((10000, Some(Good), Good), 10000);
        check((10000, None, Good), 10000);
        check((10000, Some(New), Fair), 6500);
        check((10000, Some(Fair), New), 15385); // 10000 * 1000 / 650 = 15384.6
        check((12000, Some(LikeNew), Good), 10667); // 10666.67
        check((8000, Some(Fair), Good), 9846); // 9846.15
        check((6000, Some(Poor), Good), 9600);
        check((10000, Some(Good), ForParts), 3750);
        check((3, Some(Good), Poor), 2); // 1.875
        check((1, Some(New), ForParts), 0); // 0.3 rounds down
    }

    #[test]
    fn estimates() {
        type Input = (Condition, Vec<Comparable>, Option<&'static str>);
        fn check(input: Input, expected: Option<(i64, i64, i64, &str)>) {
            let (condition, kept, preferred) = input;
            let got = estimate(condition, &kept, preferred.map(|p| Currency::new(p).unwrap()));
            let expected = expected.map(|(low, typical, high, c)| Estimate {
                low,
                typical,
                high,
                currency: Currency::new(c).unwrap(),
            });
            assert_eq!(got, expected, "{kept:?}");
        }
        // Too little evidence.
        check((Good, vec![], None), None);
        check((Good, vec![comp(10000, "GBP", Some(Good), true)], None), None);
        check((Good, vec![comp(10000, "GBP", None, true), comp(9000, "USD", None, true)], None), None);
        // Two asking prices of 100.00 and 200.00: positions 0.2, 0.5, 0.8 of the way up.
        check(
            (Good, vec![comp(20000, "GBP", Some(Good), false), comp(10000, "GBP", Some(Good), false)], None),
            Some((12000, 15000, 18000, "GBP")),
        );
        // A sold 200.00 counts twice: [100, 200, 200]; positions 0.4, 1.0, 1.6 give 140, 200, 200.
        check(
            (Good, vec![comp(10000, "GBP", Some(Good), false), comp(20000, "GBP", Some(Good), true)], None),
            Some((14000, 20000, 20000, "GBP")),
        );
        // A fair item against new ones at 100.00 and 200.00: 65.00 and 130.00.
        check(
            (Fair, vec![comp(10000, "GBP", Some(New), false), comp(20000, "GBP", Some(New), false)], None),
            Some((7800, 9750, 11700, "GBP")),
        );
        // Unknown condition counts as good: a new item is worth 80.00 / 0.8 = 100.00.
        check(
            (New, vec![comp(8000, "EUR", None, false), comp(8000, "EUR", None, true)], None),
            Some((10000, 10000, 10000, "EUR")),
        );
        // The worked example: a good item; adjusted 100.00 asked, 106.67 sold, 98.46 sold, 96.00 asked; the
        // lone USD price is left out. Counted: 9600, 9846, 9846, 10000, 10667, 10667; positions 1.0, 2.5, 4.0.
        check(
            (
                Good,
                vec![
                    comp(10000, "GBP", Some(Good), false),
                    comp(12000, "GBP", Some(LikeNew), true),
                    comp(8000, "GBP", Some(Fair), true),
                    comp(6000, "GBP", Some(Poor), false),
                    comp(20000, "USD", Some(Good), true),
                ],
                None,
            ),
            Some((9846, 9923, 10667, "GBP")),
        );
    }

    #[test]
    fn estimate_currency_choice() {
        fn check(input: (Vec<(i64, &str, bool)>, Option<&str>), expected: Option<&str>) {
            let kept: Vec<Comparable> = input.0.iter().map(|(m, c, sold)| comp(*m, c, Some(Good), *sold)).collect();
            let got = estimate(Good, &kept, input.1.map(|p| Currency::new(p).unwrap())).map(|e| e.currency);
            assert_eq!(got, expected.map(|c| Currency::new(c).unwrap()), "{input:?}");
        }
        let usd3_gbp2 =
            vec![(1, "USD", false), (2, "USD", false), (3, "USD", false), (4, "GBP", false), (5, "GBP", false)];
        check((usd3_gbp2.clone(), Some("GBP")), Some("GBP"));
        check((usd3_gbp2.clone(), None), Some("USD"));
        check((usd3_gbp2, Some("EUR")), Some("USD"));
        check((vec![(1, "USD", false), (2, "USD", false), (4, "GBP", false)], Some("GBP")), Some("USD"));
        // A tie goes to more sold prices, then to the first code.
        check((vec![(1, "USD", false), (2, "USD", true), (4, "GBP", false), (5, "GBP", false)], None), Some("USD"));
        check((vec![(1, "USD", false), (2, "USD", false), (4, "GBP", false), (5, "GBP", false)], None), Some("GBP"));
    }

    #[test]
    fn a_report_grounds_then_estimates() {
        let item = crate::testing::item(7, "single_board_computer", Good);
        let answer = [
            offer("https://www.ebay.co.uk/itm/111", 40.0, "GBP"),
            offer("https://shop.example/pi-4", 50.0, "GBP"),
            offer("https://invented.example/pi", 10.0, "GBP"),
        ];
        let at = crate::testing::at(3);
        let report = price_report(&item, at, &answer, &search_pages(), Some(gbp()), 2);
        assert_eq!(report.item_id, ItemId(7));
        assert_eq!(report.comparables.len(), 2);
        assert_eq!(report.dropped.len(), 1);
        assert_eq!(report.estimate, Some(Estimate { low: 4200, typical: 4500, high: 4800, currency: gbp() }));
        assert_eq!(report.searches, 2);
    }

    /// A URL without a trailing slash, and the parts it was made of.
    fn web_url() -> impl Strategy<Value = (String, String, String, String)> {
        (
            prop::sample::select(vec!["http", "https", "HTTP", "Https"]),
            prop::option::of("[a-zA-Z0-9]{1,6}(:[a-zA-Z0-9]{1,6})?@"),
            "[a-zA-Z0-9-]{1,10}(\\.[a-zA-Z]{2,5}){1,2}",
            prop::option::of(":[0-9]{2,5}"),
            // A query of parameters that track nothing, and no fragment: both are dropped by design (the
            // proptests of `urls` below cover that).
            "(/[a-zA-Z0-9._~%-]{1,8}){0,4}(\\?x[a-zA-Z0-9]{0,4}(=[a-zA-Z0-9/]{0,4}[a-zA-Z0-9])?(&x[a-zA-Z0-9]{0,4}(=[a-zA-Z0-9/]{0,4}[a-zA-Z0-9])?){0,2})?",
        )
            .prop_map(|(scheme, user, host, port, tail)| {
                let before = format!("{scheme}://{}", user.unwrap_or_default());
                let after = format!("{}{tail}", port.unwrap_or_default());
                (format!("{before}{host}{after}"), before, host, after)
            })
    }

    proptest! {
        #[test]
        fn normalising_is_idempotent((url, ..) in web_url(), slash in any::<bool>(), ws in "[ \t\n]{0,2}") {
            let raw = format!("{ws}{url}{}{ws}", if slash { "/" } else { "" });
            let once = normalise_url(&raw);
            prop_assert_eq!(normalise_url(&once), once.clone());
        }

        #[test]
        fn a_trailing_slash_and_whitespace_change_nothing((url, ..) in web_url(), ws in "[ \t\n]{0,2}") {
            prop_assert_eq!(normalise_url(&format!("{ws}{url}/{ws}")), normalise_url(&url));
        }

        #[test]
        fn host_and_scheme_case_are_ignored((_, before, host, after) in web_url()) {
            let upper = format!("{}{}{after}", before.to_uppercase(), host.to_uppercase());
            let lower = format!("{}{}{after}", before.to_lowercase(), host.to_lowercase());
            // Userinfo is part of `before`; its case matters, so compare only when it has none.
            prop_assume!(!before.contains('@'));
            prop_assert_eq!(normalise_url(&upper), normalise_url(&lower));
        }

        #[test]
        fn everything_after_the_host_keeps_its_case((url, _, _, after) in web_url()) {
            // A path with `...` is a placeholder, never a page (`no_real_host_is_never_grounded` below).
            prop_assume!(!url.contains("..."));
            prop_assert!(normalise_url(&url).ends_with(&after));
            let pages = GroundingPages::new([url.as_str()]);
            let spelled = format!(" {url}/");
            prop_assert!(pages.contains(&spelled));
            let changed = after.to_uppercase();
            if changed != after {
                prop_assert!(!pages.contains(&url.replace(&after, &changed)));
            }
        }
    }

    mod urls {
        use super::super::*;
        use proptest::prelude::*;

        fn host() -> impl Strategy<Value = String> {
            ("[a-z][a-z0-9-]{0,8}", prop::sample::select(vec!["com", "co.uk", "example", "de"]))
                .prop_map(|(name, tld)| format!("{name}.{tld}"))
        }

        fn path() -> impl Strategy<Value = String> {
            prop::collection::vec("[A-Za-z0-9_-]{1,6}", 0..4)
                .prop_map(|parts| parts.iter().map(|p| format!("/{p}")).collect::<String>())
        }

        fn params() -> impl Strategy<Value = Vec<String>> {
            prop::collection::vec(("[a-z]{1,5}", "[A-Za-z0-9]{0,5}").prop_map(|(k, v)| format!("x{k}={v}")), 0..3)
        }

        fn tracking() -> impl Strategy<Value = Vec<String>> {
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "utm_source",
                        "UTM_medium",
                        "utm_campaign",
                        "gclid",
                        "fbclid",
                        "ref",
                        "ref_src",
                    ]),
                    "[A-Za-z0-9.]{0,8}",
                )
                    .prop_map(|(k, v)| format!("{k}={v}")),
                0..4,
            )
        }

        proptest! {
            /// Tracking parameters mixed in anywhere, a fragment, the case of the host and a trailing slash never
            /// change which page a URL is; the other parameters keep their order.
            #[test]
            fn tracking_and_fragments_never_change_the_page(
                host in host(), path in path(), own in params(), noise in tracking(),
                cut in 0usize..4, fragment in proptest::option::of("[a-z0-9]{0,6}"), slash: bool,
            ) {
                let query = |ps: &[String]| if ps.is_empty() { String::new() } else { format!("?{}", ps.join("&")) };
                let bare = format!("https://{host}{path}{}", query(&own));
                let mut mixed: Vec<String> = own.clone();
                for (i, t) in noise.iter().enumerate() {
                    mixed.insert((cut + i).min(mixed.len()), t.clone());
                }
                let slash = if slash { "/" } else { "" };
                let fragment = fragment.map(|f| format!("#{f}")).unwrap_or_default();
                let noisy = format!("HTTPS://{}{path}{slash}{}{fragment}", host.to_uppercase(), query(&mixed));
                prop_assert_eq!(normalise_url(&noisy), normalise_url(&bare));
                prop_assert!(GroundingPages::new([bare.as_str()]).contains(&noisy));
                prop_assert!(GroundingPages::new([noisy.as_str()]).contains(&bare));
            }

            /// Normalising twice changes nothing for a URL that does not end in two slashes.
            #[test]
            fn normalising_is_idempotent(
                host in host(), path in path(), own in params(), noise in tracking(),
                fragment in proptest::option::of("[a-z0-9]{0,6}"),
            ) {
                let ps: Vec<String> = own.into_iter().chain(noise).collect();
                let query = if ps.is_empty() { String::new() } else { format!("?{}", ps.join("&")) };
                let fragment = fragment.map(|f| format!("#{f}")).unwrap_or_default();
                let once = normalise_url(&format!("https://{host}{path}{query}{fragment}"));
                prop_assert_eq!(normalise_url(&once), once.clone());
            }

            /// A host without a dot, or a placeholder anywhere, is never grounded, even when the search showed it.
            #[test]
            fn no_real_host_is_never_grounded(
                word in "[a-z][a-z0-9-]{0,8}", path in path(), placeholder: bool, at in 0usize..3,
            ) {
                let url = if placeholder {
                    match at {
                        0 => format!("https://...{path}"),
                        1 => format!("https://{word}.example{path}/..."),
                        _ => format!("https://{word}.example/\u{2026}{path}"),
                    }
                } else {
                    format!("https://{word}{path}")
                };
                let pages = GroundingPages::new([url.as_str()]);
                prop_assert!(!pages.contains(&url));
                let offer = ModelComparable {
                    title: "Pi".into(), url: url.clone(), price: 10.0, currency: "GBP".into(),
                    condition: None, sold: false, note: None,
                };
                let (kept, dropped) = ground(&[offer], &pages);
                prop_assert!(kept.is_empty());
                prop_assert_eq!(dropped[0].reason.as_str(), NOT_A_PAGE);
            }
        }
    }
}
