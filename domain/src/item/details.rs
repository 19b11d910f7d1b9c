//! What a household records of an item by hand: notes, tags, serial number, the purchase, the warranty, an
//! asking price of its own, and how many like units it is (a drawer of 200 M3 screws is one item of quantity
//! 200).

use super::values::{ItemError, ItemType, QUANTITY_MAX, TAG_MAX, TAGS_MAX};
use crate::money::{Currency, Money};
use crate::text::{self, Lines};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// Longest notes kept, in characters.
pub const NOTES_MAX: usize = 4_000;
/// Longest serial number, in characters.
pub const SERIAL_MAX: usize = 100;
/// Longest vendor name, in characters.
pub const VENDOR_MAX: usize = 200;
/// The largest price kept, in minor units (10^12: ten billion of a currency with cents).
pub const PRICE_MAX: i64 = 1_000_000_000_000;

/// A checked quantity of like units: 0 to [`QUANTITY_MAX`] (0: none left, the item kept on the list to restock).
///
/// ```
/// use trove_domain::item::check_quantity;
/// assert_eq!(check_quantity("quantity", 200), Ok(200));
/// assert_eq!(check_quantity("quantity", -1).unwrap_err().to_string(), "quantity must be from 0 to 1000000, not -1");
/// ```
///
/// # Errors
/// [`ItemError::BadQuantity`] naming `field`.
pub fn check_quantity(field: &'static str, raw: i64) -> Result<u32, ItemError> {
    u32::try_from(raw).ok().filter(|q| *q <= QUANTITY_MAX).ok_or(ItemError::BadQuantity { field, value: raw })
}

/// An item's tags: at most [`TAGS_MAX`] short labels, each trimmed, of at most [`TAG_MAX`] characters, on one
/// line, kept in the order given with repeats (ignoring case) dropped.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "Vec<String>", into = "Vec<String>")]
pub struct Tags(Vec<String>);

impl Tags {
    /// ```
    /// use trove_domain::item::Tags;
    /// let tags = Tags::new(&[" garage ".into(), "Garage".into(), "18 V".into()]).unwrap();
    /// assert_eq!(tags.as_slice(), ["garage", "18 V"]);
    /// ```
    ///
    /// # Errors
    /// [`ItemError::EmptyText`], [`ItemError::BadTag`] for a tag too long, [`ItemError::TooManyTags`],
    /// [`ItemError::ControlCharacter`].
    pub fn new(raw: &[String]) -> Result<Self, ItemError> {
        let mut tags: Vec<String> = Vec::with_capacity(raw.len());
        for (n, t) in raw.iter().enumerate() {
            let t = t.trim();
            if t.is_empty() {
                return Err(ItemError::EmptyText("a tag"));
            }
            if t.chars().count() > TAG_MAX {
                return Err(ItemError::BadTag(text::clip(t, TAG_MAX + 10)));
            }
            text::check(&format!("tags[{n}]"), t, Lines::One)?;
            if !tags.iter().any(|have| have.to_lowercase() == t.to_lowercase()) {
                tags.push(t.to_owned());
            }
        }
        if tags.len() > TAGS_MAX {
            return Err(ItemError::TooManyTags(tags.len()));
        }
        Ok(Self(tags))
    }

    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `tag` is one of them, ignoring case.
    pub fn contains(&self, tag: &str) -> bool {
        let tag = tag.trim().to_lowercase();
        self.0.iter().any(|t| t.to_lowercase() == tag)
    }
}

impl TryFrom<Vec<String>> for Tags {
    type Error = ItemError;
    fn try_from(v: Vec<String>) -> Result<Self, ItemError> {
        Self::new(&v)
    }
}

impl From<Tags> for Vec<String> {
    fn from(t: Tags) -> Vec<String> {
        t.0
    }
}

/// How an item was bought.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Purchase {
    pub date: Option<NaiveDate>,
    /// The price paid, in `currency`.
    pub price: Option<Money>,
    /// Where it was bought ("Screwfix", "eBay: seller tools4u").
    pub vendor: Option<String>,
}

impl Purchase {
    /// A purchase from what a person typed: its day within [`DAY_YEARS`], a price needs its currency; a vendor is one line of at most
    /// [`VENDOR_MAX`] characters; nothing at all is `None`.
    ///
    /// ```
    /// use trove_domain::item::Purchase;
    /// let p = Purchase::new(None, Some(4599), Some("GBP"), Some(" Screwfix ")).unwrap().unwrap();
    /// assert_eq!((p.price.unwrap().to_string(), p.vendor.as_deref()), ("GBP 45.99".into(), Some("Screwfix")));
    /// assert!(Purchase::new(None, None, None, Some("  ")).unwrap().is_none());
    /// assert_eq!(Purchase::new(None, Some(100), None, None).unwrap_err().to_string(),
    ///     "purchase.currency is needed with a price (a three-letter code such as EUR)");
    /// ```
    ///
    /// # Errors
    /// [`ItemError::BadDay`] naming `purchase.date`, [`ItemError::BadPrice`], [`ItemError::TextTooLong`],
    /// [`ItemError::ControlCharacter`].
    pub fn new(
        date: Option<NaiveDate>,
        price: Option<i64>,
        currency: Option<&str>,
        vendor: Option<&str>,
    ) -> Result<Option<Self>, ItemError> {
        let date = date.map(|d| check_day("purchase.date", d)).transpose()?;
        let price = match price {
            None => None,
            Some(minor) => Some(money("purchase", minor, currency)?),
        };
        let vendor = match vendor.map(str::trim).filter(|v| !v.is_empty()) {
            None => None,
            Some(v) if v.chars().count() > VENDOR_MAX => return Err(ItemError::TextTooLong("purchase.vendor")),
            Some(v) => {
                text::check("purchase.vendor", v, Lines::One)?;
                Some(v.to_owned())
            }
        };
        if date.is_none() && price.is_none() && vendor.is_none() {
            return Ok(None);
        }
        Ok(Some(Self { date, price, vendor }))
    }
}

/// A price a person typed: `minor` units (0 to [`PRICE_MAX`]) of the currency `code`, `what` naming it in a
/// refusal ("purchase", "asking_price").
///
/// # Errors
/// [`ItemError::BadPrice`].
pub fn money(what: &'static str, minor: i64, code: Option<&str>) -> Result<Money, ItemError> {
    let code = code.map(str::trim).filter(|c| !c.is_empty()).ok_or_else(|| ItemError::BadPrice {
        what,
        reason: "currency is needed with a price (a three-letter code such as EUR)".into(),
    })?;
    let currency = Currency::new(&code.to_ascii_uppercase())
        .map_err(|e| ItemError::BadPrice { what, reason: format!("currency: {e}") })?;
    if !(0..=PRICE_MAX).contains(&minor) {
        return Err(ItemError::BadPrice { what, reason: format!("amount must be from 0 to {PRICE_MAX} minor units") });
    }
    Ok(Money { minor, currency })
}

/// What a household records of an item by hand, beside what the item is.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ItemDetails {
    /// Free text, several lines.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub notes: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purchase: Option<Purchase>,
    /// The last day the warranty covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warranty_until: Option<NaiveDate>,
    /// An asking price set by hand: listing drafts use it before any estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asking_price: Option<Money>,
}

/// No details: what an item has until something is recorded by hand.
static NO_DETAILS: ItemDetails =
    ItemDetails { notes: String::new(), serial: None, purchase: None, warranty_until: None, asking_price: None };

/// An item's [`ItemDetails`], kept out of line and only when something is recorded: most items have none, and an
/// import holds 100,000 items at once, so an item without details costs one pointer instead of the whole record.
/// Reads and writes go through `Deref`/`DerefMut` (`item.details.notes`); writing makes the record.
#[derive(Debug, Clone, Default)]
pub struct Details(Option<Box<ItemDetails>>);

impl Details {
    pub fn new(details: ItemDetails) -> Self {
        if details == NO_DETAILS { Self(None) } else { Self(Some(Box::new(details))) }
    }
}

impl From<ItemDetails> for Details {
    fn from(d: ItemDetails) -> Self {
        Self::new(d)
    }
}

impl std::ops::Deref for Details {
    type Target = ItemDetails;
    fn deref(&self) -> &ItemDetails {
        self.0.as_deref().unwrap_or(&NO_DETAILS)
    }
}

impl std::ops::DerefMut for Details {
    fn deref_mut(&mut self) -> &mut ItemDetails {
        self.0.get_or_insert_with(Box::default)
    }
}

impl PartialEq for Details {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Details {}

impl Serialize for Details {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Details {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ItemDetails::deserialize(d).map(Self::new)
    }
}

/// Checked notes: at most [`NOTES_MAX`] characters, several lines, trimmed.
///
/// # Errors
/// [`ItemError::TextTooLong`], [`ItemError::ControlCharacter`].
pub fn notes(raw: &str) -> Result<String, ItemError> {
    let t = raw.trim();
    if t.chars().count() > NOTES_MAX {
        return Err(ItemError::TextTooLong("notes"));
    }
    text::check("notes", t, Lines::Many)?;
    Ok(t.to_owned())
}

/// A checked serial number: one line of at most [`SERIAL_MAX`] characters, trimmed; blank is `None`.
///
/// # Errors
/// [`ItemError::TextTooLong`], [`ItemError::ControlCharacter`].
pub fn serial(raw: &str) -> Result<Option<String>, ItemError> {
    let t = raw.trim();
    if t.is_empty() {
        return Ok(None);
    }
    if t.chars().count() > SERIAL_MAX {
        return Err(ItemError::TextTooLong("serial"));
    }
    text::check("serial", t, Lines::One)?;
    Ok(Some(t.to_owned()))
}

/// The first and last years a recorded day (a purchase, a warranty's end) may fall in: outside them it is a
/// typing mistake.
pub const DAY_YEARS: std::ops::RangeInclusive<i32> = 1970..=2199;

/// A day a person typed, within [`DAY_YEARS`], `field` naming it in a refusal.
///
/// # Errors
/// [`ItemError::BadDay`].
pub fn check_day(field: &'static str, day: NaiveDate) -> Result<NaiveDate, ItemError> {
    use chrono::Datelike as _;
    if DAY_YEARS.contains(&day.year()) { Ok(day) } else { Err(ItemError::BadDay { field, day }) }
}

/// Whether an item of `quantity` units is low on stock: a minimum is set and the quantity is at or under it.
pub fn low_stock(quantity: u32, min_quantity: Option<u32>) -> bool {
    min_quantity.is_some_and(|min| quantity <= min)
}

/// A type as the form suggests it: the type, its label, and how many present items have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeCount {
    pub item_type: ItemType,
    pub label: String,
    pub items: u64,
}

/// **The** list of types to suggest: every type a catalogue requirement accepts (with 0 items when none is
/// held) and every type the household's items have, each once, with its count, ordered by label.
///
/// ```
/// use trove_domain::item::{ItemType, type_counts};
/// let t = |s: &str| ItemType::new(s).unwrap();
/// let list = type_counts([t("lithium_cell"), t("power_bank")], [(t("power_bank"), 3), (t("drill"), 1)]);
/// let got: Vec<(&str, &str, u64)> = list.iter().map(|c| (c.item_type.as_str(), c.label.as_str(), c.items)).collect();
/// assert_eq!(got, [("drill", "Drill", 1), ("lithium_cell", "Lithium cell", 0), ("power_bank", "Power bank", 3)]);
/// ```
pub fn type_counts(
    catalogue: impl IntoIterator<Item = ItemType>,
    held: impl IntoIterator<Item = (ItemType, u64)>,
) -> Vec<TypeCount> {
    let mut counts: std::collections::BTreeMap<ItemType, u64> = catalogue.into_iter().map(|t| (t, 0)).collect();
    for (t, n) in held {
        *counts.entry(t).or_default() += n;
    }
    let mut out: Vec<TypeCount> =
        counts.into_iter().map(|(item_type, items)| TypeCount { label: item_type.label(), item_type, items }).collect();
    out.sort_by(|a, b| a.label.cmp(&b.label).then_with(|| a.item_type.cmp(&b.item_type)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_bounded_and_deduplicated() {
        let many: Vec<String> = (0..21).map(|n| format!("t{n}")).collect();
        assert_eq!(Tags::new(&many).unwrap_err(), ItemError::TooManyTags(21));
        assert!(Tags::new(&many[..20]).is_ok());
        let long = "x".repeat(TAG_MAX + 1);
        assert!(matches!(Tags::new(&[long]), Err(ItemError::BadTag(_))));
        assert!(matches!(Tags::new(&["a\u{7}".into()]), Err(ItemError::ControlCharacter(_))));
        assert_eq!(Tags::new(&["  ".into()]).unwrap_err(), ItemError::EmptyText("a tag"));
        let t = Tags::new(&["Garage".into(), "garage".into(), "tools".into()]).unwrap();
        assert_eq!(t.as_slice(), ["Garage", "tools"]);
        assert!(t.contains("GARAGE") && !t.contains("gar"));
    }

    #[test]
    fn quantities_and_prices_are_bounded() {
        assert_eq!(check_quantity("quantity", 0), Ok(0));
        assert_eq!(check_quantity("quantity", 1_000_000), Ok(1_000_000));
        assert!(check_quantity("quantity", 1_000_001).is_err());
        assert!(check_quantity("min_quantity", -1).unwrap_err().to_string().starts_with("min_quantity"));
        assert!(money("asking_price", -1, Some("EUR")).is_err());
        assert!(money("asking_price", 1, Some("euros")).unwrap_err().to_string().starts_with("asking_price"));
        assert_eq!(money("asking_price", 1250, Some("eur")).unwrap().to_string(), "EUR 12.50");
        assert!(low_stock(2, Some(2)) && !low_stock(3, Some(2)) && !low_stock(0, None));
        let before_1970 = NaiveDate::from_ymd_opt(1900, 1, 1);
        assert_eq!(
            Purchase::new(before_1970, None, None, None).unwrap_err().to_string(),
            "purchase.date must be a day from 1970 to 2199, not 1900-01-01"
        );
    }

    #[test]
    fn details_cost_a_pointer_until_something_is_recorded() {
        assert_eq!(size_of::<Details>(), size_of::<usize>());
        let mut d = Details::default();
        assert_eq!(d, Details::new(ItemDetails::default()));
        assert!(d.0.is_none(), "nothing recorded, nothing kept");
        d.notes = "kept".into();
        assert_eq!((d.notes.as_str(), d.0.is_some()), ("kept", true));
        assert_ne!(d, Details::default());
    }

    #[test]
    fn notes_and_serials_are_checked() {
        assert_eq!(notes(" two\nlines ").unwrap(), "two\nlines");
        assert_eq!(notes(&"n".repeat(NOTES_MAX + 1)).unwrap_err(), ItemError::TextTooLong("notes"));
        assert_eq!(serial("  ").unwrap(), None);
        assert_eq!(serial(" SN-1 ").unwrap().as_deref(), Some("SN-1"));
        assert!(serial("a\nb").is_err());
    }
}
