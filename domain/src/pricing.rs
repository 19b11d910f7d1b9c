//! Pricing: which comparables the web backs (the grounding rule) and what they say an item is worth.
//!
//! The model searches the web and answers with comparables; it may invent a page, misread a price or mix
//! currencies. The rules here keep only what the searched pages back ([`ground`]) and turn the kept comparables
//! into an estimate ([`estimate`]) with integer arithmetic, so the same evidence always gives the same numbers.

use crate::Timestamp;
use crate::ids::ItemId;
use crate::item::{Condition, Item};
use crate::money::{Currency, Money};
use crate::text::clip;
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
}

/// The reason a comparable whose page the search never showed is dropped (the grounding rule).
pub const NOT_GROUNDED: &str = "page not among search results or citations";

/// Longest comparable title kept, in characters: model text is clipped, never interpreted.
pub const COMPARABLE_TITLE_MAX: usize = 300;

/// Normalises a URL for the grounding comparison: trims whitespace, removes **one** trailing `/`, and
/// lower-cases the scheme and the host only. Userinfo, port, path, query and fragment are kept exactly as they
/// are, because two pages that differ there are different pages. Text without `scheme://` is only trimmed and
/// loses its trailing `/`.
///
/// Normalising twice changes nothing, except for text ending in two slashes: exactly one slash goes each time,
/// as the rule says.
///
/// ```
/// use trove_domain::pricing::normalise_url;
/// assert_eq!(normalise_url(" HTTPS://www.eBay.co.uk/itm/Pi4/ "), "https://www.ebay.co.uk/itm/Pi4");
/// assert_eq!(normalise_url("https://Bob@Shop.Example:8443/A?Q=1#Top"), "https://Bob@shop.example:8443/A?Q=1#Top");
/// ```
pub fn normalise_url(raw: &str) -> String {
    let trimmed = raw.trim();
    let t = trimmed.strip_suffix('/').unwrap_or(trimmed);
    let Some((scheme, rest)) = t.split_once("://") else {
        return t.to_owned();
    };
    if !is_scheme(scheme) {
        return t.to_owned();
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (userinfo, host_port) = match authority.rfind('@') {
        Some(at) => authority.split_at(at + 1),
        None => ("", authority),
    };
    let (host, port) = split_port(host_port);
    format!("{}://{userinfo}{}{port}{tail}", scheme.to_ascii_lowercase(), host.to_lowercase())
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

/// True when a normalised URL is an `http` or `https` address with a host.
fn is_web_address(normalised: &str) -> bool {
    let rest = normalised.strip_prefix("https://").or_else(|| normalised.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with(['/', '?', '#']))
}

/// The pages a price search really showed: every `url` of the `web_search_call` results and action sources and
/// of the answer's `url_citation` annotations, normalised with [`normalise_url`]. Blank URLs are ignored.
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

    /// Adds one page.
    pub fn add(&mut self, url: &str) {
        let n = normalise_url(url);
        if !n.is_empty() {
            self.urls.insert(n);
        }
    }

    /// True when `url`, normalised, is one of the pages.
    pub fn contains(&self, url: &str) -> bool {
        self.urls.contains(&normalise_url(url))
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
/// [`NOT_GROUNDED`]. Also dropped, each with its reason: a URL that is not `http(s)`, a price that is not a
/// finite positive amount (or rounds to nothing), a currency that is not a three-letter ISO 4217 code, and a
/// page already kept (the first one wins). Kept prices are integer minor units ([`Money::from_major`]),
/// condition words are read with [`read_condition`], titles and notes are trimmed and clipped.
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
        let url = c.url.trim().to_owned();
        let title = clip(&c.title, COMPARABLE_TITLE_MAX);
        let page = normalise_url(&url);
        let refusal = if !is_web_address(&page) {
            Err("url is not an http or https address".to_owned())
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
                    note: crate::item::note(c.note.as_deref()),
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
    PriceReport { item_id: item.id, at, comparables, dropped, estimate, searches }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_gone_item_is_not_priced() {
        let mut item = crate::item::fixtures::item(5, "laptop", Good);
        assert_eq!(check_priceable(&item), Ok(()));
        item.gone = Some(crate::item::Gone {
            reason: crate::item::GoneReason::Sold,
            at: crate::item::fixtures::at(2),
            note: None,
        });
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
        check("https://EXAMPLE.com#Frag", "https://example.com#Frag");
        check("https://Example.com/a?b=C#D/", "https://example.com/a?b=C#D");
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
        // Search results, action sources and citations all count as pages the search showed.
        GroundingPages::new([
            "https://www.ebay.co.uk/itm/111",
            "https://shop.example/pi-4/",
            "HTTPS://Cited.Example/Listing/9",
            "  ",
        ])
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
        check(offer("ftp://www.ebay.co.uk/itm/111", 45.0, "GBP"), Err("url is not an http or https address"));
        check(offer("javascript:alert(1)", 45.0, "GBP"), Err("url is not an http or https address"));
        check(offer("https://", 45.0, "GBP"), Err("url is not an http or https address"));
        check(offer("https://shop.example/pi-4", 0.0, "GBP"), Err("price is not a finite positive amount"));
        check(offer("https://shop.example/pi-4", -3.0, "GBP"), Err("price is not a finite positive amount"));
        check(offer("https://shop.example/pi-4", f64::NAN, "GBP"), Err("price is not a finite positive amount"));
        check(offer("https://shop.example/pi-4", f64::INFINITY, "GBP"), Err("price is not a finite positive amount"));
        check(offer("https://shop.example/pi-4", 0.001, "GBP"), Err("price is not a finite positive amount"));
        check(offer("https://shop.example/pi-4", 2e12, "GBP"), Err("price is too large"));
        check(offer("https://shop.example/pi-4", 45.0, "£"), Err("currency \"£\" is not an ISO 4217 code"));
        check(offer("https://shop.example/pi-4", 45.0, "pounds"), Err("currency \"pounds\" is not an ISO 4217 code"));
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
        let item = crate::item::fixtures::item(7, "single_board_computer", Good);
        let answer = [
            offer("https://www.ebay.co.uk/itm/111", 40.0, "GBP"),
            offer("https://shop.example/pi-4", 50.0, "GBP"),
            offer("https://invented.example/pi", 10.0, "GBP"),
        ];
        let at = crate::item::fixtures::at(3);
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
            "(/[a-zA-Z0-9._~%-]{1,8}){0,4}(\\?[a-zA-Z0-9=&/]{0,10}[a-zA-Z0-9=&])?(#[a-zA-Z0-9]{1,6})?",
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
}
