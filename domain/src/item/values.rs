//! The values an item is made of: its name, type and field keys, the words for its condition, intent and
//! availability (and for its records), and the checks for its texts.

use crate::text::{self, ControlCharacter, Lines, clip, is_snake_case, to_snake_case};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest item name kept, in characters.
pub const NAME_MAX: usize = 200;
/// Longest profile kept, in characters.
pub const PROFILE_MAX: usize = 1000;
/// Longest short text (fault, accessory, note, location), in characters.
pub const SHORT_TEXT_MAX: usize = 300;
/// Most keys of measured fields one item has (the keys of its current fields), so that an item stays a thing
/// a page shows and a row holds, not a store of its own.
pub const FIELD_KEYS_MAX: usize = 200;

/// Most units one item counts.
pub const QUANTITY_MAX: u32 = 1_000_000;
/// Most tags on one item.
pub const TAGS_MAX: usize = 20;
/// Longest tag, in characters.
pub const TAG_MAX: usize = 40;

/// Why an item's value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ItemError {
    #[error("name must not be empty")]
    EmptyName,
    #[error("name is longer than {NAME_MAX} characters")]
    NameTooLong,
    #[error("item_type {0:?} has nothing to name a type by: write it in words (e.g. \"Power supply\")")]
    BadItemType(String),
    #[error("profile is longer than {PROFILE_MAX} characters")]
    ProfileTooLong,
    #[error("field key {0:?} has nothing to name a field by: write it in words (e.g. \"Capacity\")")]
    BadFieldKey(String),
    #[error("{0} must not be empty")]
    EmptyText(&'static str),
    #[error("{0} is longer than {SHORT_TEXT_MAX} characters")]
    TextTooLong(&'static str),
    #[error("field {key}: {reason}")]
    BadMeasurement { key: String, reason: String },
    #[error("fields: an item has at most {FIELD_KEYS_MAX} field keys; this one would have {count}")]
    TooManyFieldKeys { count: usize },
    #[error("{field} must be from 1970-01-01 to a day from now, not {}", at.to_rfc3339())]
    DateOutOfRange { field: String, at: crate::Timestamp },
    #[error("an item cannot be a component of itself")]
    SelfComponent,
    #[error(transparent)]
    ControlCharacter(#[from] ControlCharacter),
    #[error("{field} must be from 0 to {}, not {value}", QUANTITY_MAX)]
    BadQuantity { field: &'static str, value: i64 },
    #[error("a tag is at most {max} characters: {0:?}", max = TAG_MAX)]
    BadTag(String),
    #[error("an item has at most {max} tags, not {0}", max = TAGS_MAX)]
    TooManyTags(usize),
    #[error("{what}.{reason}")]
    BadPrice { what: &'static str, reason: String },
    #[error("{field} must be a day from 1970 to 2199, not {day}")]
    BadDay { field: &'static str, day: chrono::NaiveDate },
    #[error("a search has at most {SEARCH_WORDS_MAX} words")]
    SearchTooManyWords,
    #[error("a search is at most {SEARCH_MAX} characters long")]
    SearchTooLong,
    #[error(transparent)]
    Codes(#[from] crate::code::CodesError),
}

/// What the owner calls an item: non-empty, at most [`NAME_MAX`] characters, trimmed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ItemName(String);

impl ItemName {
    /// # Errors
    /// [`ItemError::EmptyName`] when nothing is left after trimming, [`ItemError::NameTooLong`] past the limit,
    /// [`ItemError::ControlCharacter`] for a control character.
    pub fn new(raw: &str) -> Result<Self, ItemError> {
        let t = raw.trim();
        if t.is_empty() {
            return Err(ItemError::EmptyName);
        }
        if t.chars().count() > NAME_MAX {
            return Err(ItemError::NameTooLong);
        }
        text::check("name", t, Lines::One)?;
        Ok(Self(t.to_owned()))
    }

    /// A name as a store read it back: one written before control characters were refused (SQLite took
    /// them) has them made spaces ([`text::clean`]), so the item stays readable; any other name is [`Self::new`]'s.
    ///
    /// ```
    /// use trove_domain::item::ItemName;
    /// assert_eq!(ItemName::stored("Pi\u{0}4").unwrap().as_str(), "Pi 4");
    /// ```
    ///
    /// # Errors
    /// As [`Self::new`], for an empty or too long name.
    pub fn stored(raw: &str) -> Result<Self, ItemError> {
        Self::new(&text::clean(raw, Lines::One))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ItemName {
    type Error = ItemError;
    fn try_from(s: String) -> Result<Self, ItemError> {
        Self::new(&s)
    }
}

impl From<ItemName> for String {
    fn from(n: ItemName) -> String {
        n.0
    }
}

impl fmt::Display for ItemName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A lower_snake_case kind from an open vocabulary (`power_supply`, `lithium_cell`, `laptop`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ItemType(String);

impl ItemType {
    /// **The** type from what a person or a model wrote: "Power Bank", "power-bank", "power bank" and
    /// `power_bank` are all `power_bank` ([`normalise_word`]).
    ///
    /// ```
    /// use trove_domain::item::ItemType;
    /// assert_eq!(ItemType::new(" Power Bank ").unwrap().as_str(), "power_bank");
    /// assert_eq!(ItemType::new("power-bank").unwrap().label(), "Power bank");
    /// ```
    ///
    /// # Errors
    /// [`ItemError::BadItemType`] when nothing is left to name a type by (no ASCII letter).
    pub fn new(raw: &str) -> Result<Self, ItemError> {
        normalise_word(raw).map(Self).ok_or_else(|| ItemError::BadItemType(clip(raw, 80)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The type as a person reads it: "power_bank" is "Power bank".
    pub fn label(&self) -> String {
        label_of(&self.0)
    }
}

/// The word a type or a field key is kept as: lower_snake_case, at most 64 characters, made from what was typed
/// (letters lowercased, every run of other characters one `_`, leading digits dropped so it starts with a
/// letter). `None` when nothing is left. Normalising twice changes nothing.
///
/// ```
/// use trove_domain::item::normalise_word;
/// assert_eq!(normalise_word("Power Bank").as_deref(), Some("power_bank"));
/// assert_eq!(normalise_word("Output voltage (V)").as_deref(), Some("output_voltage_v"));
/// assert_eq!(normalise_word("--"), None);
/// ```
pub fn normalise_word(raw: &str) -> Option<String> {
    let word = to_snake_case(raw)?;
    let word = clip(&word, 64).trim_end_matches('_').to_owned();
    is_snake_case(&word).then_some(word)
}

/// A kept word as a person reads it: underscores as spaces, the first letter capital.
pub fn label_of(word: &str) -> String {
    let spaced = word.replace('_', " ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl TryFrom<String> for ItemType {
    type Error = ItemError;
    fn try_from(s: String) -> Result<Self, ItemError> {
        Self::new(&s)
    }
}

impl From<ItemType> for String {
    fn from(t: ItemType) -> String {
        t.0
    }
}

impl fmt::Display for ItemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The key of a measured field (`capacity`, `output_voltage`): lower_snake_case.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FieldKey(String);

impl FieldKey {
    /// A key from what was typed, normalised as a type is ([`normalise_word`]): "Weight" is `weight`.
    ///
    /// # Errors
    /// [`ItemError::BadFieldKey`] when nothing is left to name a field by.
    pub fn new(raw: &str) -> Result<Self, ItemError> {
        normalise_word(raw).map(Self).ok_or_else(|| ItemError::BadFieldKey(clip(raw, 80)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for FieldKey {
    type Error = ItemError;
    fn try_from(s: String) -> Result<Self, ItemError> {
        Self::new(&s)
    }
}

impl From<FieldKey> for String {
    fn from(k: FieldKey) -> String {
        k.0
    }
}

impl fmt::Display for FieldKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

macro_rules! word_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// Every value, in order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word used in JSON, the database and text.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }

            /// Reads the word back; `None` for anything else.
            pub fn parse(word: &str) -> Option<Self> {
                match word { $($word => Some($name::$variant),)+ _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

word_enum!(
    /// How good an item is, best first. The order matters: `Condition::Good < Condition::Fair` is false, because
    /// `is_at_least` compares rank, not declaration order.
    Condition {
        New = "new",
        LikeNew = "like_new",
        Good = "good",
        Fair = "fair",
        Poor = "poor",
        ForParts = "for_parts",
    }
);

impl Condition {
    /// 0 for `new`, 5 for `for_parts`.
    pub fn rank(self) -> u8 {
        self as u8
    }

    /// True when `self` is as good as `min` or better.
    ///
    /// ```
    /// use trove_domain::item::Condition;
    /// assert!(Condition::LikeNew.is_at_least(Condition::Good));
    /// assert!(!Condition::Poor.is_at_least(Condition::Good));
    /// ```
    pub fn is_at_least(self, min: Condition) -> bool {
        self.rank() <= min.rank()
    }

    /// Words for people: "like new", "for parts".
    pub fn human(self) -> &'static str {
        match self {
            Condition::New => "new",
            Condition::LikeNew => "like new",
            Condition::Good => "good",
            Condition::Fair => "fair",
            Condition::Poor => "poor",
            Condition::ForParts => "for parts or not working",
        }
    }
}

word_enum!(
    /// What the owner means to do with an item.
    Intent {
        /// May be used in builds.
        Keep = "keep",
        Sell = "sell",
        Give = "give",
    }
);

word_enum!(
    /// Whether an item is free to use right now.
    Availability {
        Available = "available",
        /// Allocated to an accepted project.
        Reserved = "reserved",
        /// Built into a finished project.
        InUse = "in_use",
        Lent = "lent",
    }
);

word_enum!(
    /// Why an item left the inventory.
    GoneReason {
        Sold = "sold",
        Given = "given",
        Recycled = "recycled",
        Lost = "lost",
        Other = "other",
    }
);

word_enum!(
    /// How bad a fault is.
    Severity {
        /// Cosmetic or easily worked around.
        Minor = "minor",
        /// Limits what the item can do.
        Major = "major",
        /// The item does not do its job.
        Blocking = "blocking",
    }
);

word_enum!(
    /// Where a measurement came from.
    MeasurementSource {
        Label = "label",
        Listing = "listing",
        Voice = "voice",
        Photo = "photo",
        Test = "test",
        Manual = "manual",
    }
);

word_enum!(
    /// The outcome of a test.
    TestResult {
        Pass = "pass",
        Fail = "fail",
    }
);

/// Trims a required short text of one line and checks it: its length and no control character.
///
/// # Errors
/// [`ItemError::EmptyText`] when empty after trimming, [`ItemError::TextTooLong`] past [`SHORT_TEXT_MAX`],
/// [`ItemError::ControlCharacter`].
pub fn short_text(raw: &str, what: &'static str) -> Result<String, ItemError> {
    short_text_of(raw, what, Lines::One)
}

fn short_text_of(raw: &str, what: &'static str, lines: Lines) -> Result<String, ItemError> {
    let t = raw.trim();
    if t.is_empty() {
        return Err(ItemError::EmptyText(what));
    }
    if t.chars().count() > SHORT_TEXT_MAX {
        return Err(ItemError::TextTooLong(what));
    }
    text::check(what, t, lines)?;
    Ok(t.to_owned())
}

/// Like [`short_text`], but `None` or a blank text is `None`.
///
/// # Errors
/// [`ItemError::TextTooLong`] past [`SHORT_TEXT_MAX`], [`ItemError::ControlCharacter`].
pub fn optional_text(raw: Option<&str>, what: &'static str) -> Result<Option<String>, ItemError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(t) => short_text(t, what).map(Some),
    }
}

/// Like [`optional_text`], for a note: it may hold several lines.
///
/// # Errors
/// [`ItemError::TextTooLong`] past [`SHORT_TEXT_MAX`], [`ItemError::ControlCharacter`] but tab and line breaks.
pub fn optional_note(raw: Option<&str>, what: &'static str) -> Result<Option<String>, ItemError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(t) => short_text_of(t, what, Lines::Many).map(Some),
    }
}

/// Checks a profile: trimmed, at most [`PROFILE_MAX`] characters (may be empty), no control character but tab
/// and line breaks (a pasted specification keeps its lines).
///
/// # Errors
/// [`ItemError::ProfileTooLong`], [`ItemError::ControlCharacter`].
pub fn profile(raw: &str) -> Result<String, ItemError> {
    let t = raw.trim();
    if t.chars().count() > PROFILE_MAX {
        return Err(ItemError::ProfileTooLong);
    }
    text::check("profile", t, Lines::Many)?;
    Ok(t.to_owned())
}

/// Most words a search of the inventory takes: each word is one condition of the store's query.
pub const SEARCH_WORDS_MAX: usize = 32;
/// Longest search, in characters.
pub const SEARCH_MAX: usize = 500;

/// Checks the words of a search of the inventory (`q`): at most [`SEARCH_MAX`] characters, at most
/// [`SEARCH_WORDS_MAX`] words, no control character. Answers the words joined by single spaces, `None` for a
/// blank search.
///
/// ```
/// use trove_domain::item::search;
/// assert_eq!(search("  pi   4 ").unwrap().as_deref(), Some("pi 4"));
/// assert_eq!(search(" ").unwrap(), None);
/// assert!(search(&"w ".repeat(33)).is_err());
/// ```
///
/// # Errors
/// [`ItemError::ControlCharacter`], [`ItemError::SearchTooManyWords`], [`ItemError::SearchTooLong`].
pub fn search(raw: &str) -> Result<Option<String>, ItemError> {
    text::check("q", raw, Lines::One)?;
    let words: Vec<&str> = raw.split_whitespace().collect();
    if words.len() > SEARCH_WORDS_MAX {
        return Err(ItemError::SearchTooManyWords);
    }
    if raw.chars().count() > SEARCH_MAX {
        return Err(ItemError::SearchTooLong);
    }
    Ok((!words.is_empty()).then(|| words.join(" ")))
}

/// Checks a list of accessories: each a short text; duplicates (ignoring case) are kept once.
///
/// # Errors
/// [`ItemError::EmptyText`] or [`ItemError::TextTooLong`] for one of them.
pub fn accessories(raw: &[String]) -> Result<Vec<String>, ItemError> {
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for a in raw {
        let a = short_text(a, "accessory")?;
        if !out.iter().any(|b| b.eq_ignore_ascii_case(&a)) {
            out.push(a);
        }
    }
    Ok(out)
}

/// Checks a location: blank is none.
///
/// # Errors
/// [`ItemError::TextTooLong`].
pub fn location(raw: Option<&str>) -> Result<Option<String>, ItemError> {
    optional_text(raw, "location")
}

/// Longest note of a model's kept, in characters.
pub const NOTE_MAX: usize = 1000;

/// Keeps a model's note to [`NOTE_MAX`] characters, its control characters made spaces (model text is cleaned,
/// never refused); blank is none.
pub fn model_note(raw: Option<&str>) -> Option<String> {
    raw.map(|n| clip(&text::clean(n, Lines::Many), NOTE_MAX)).filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Normalising what anyone types gives a kept word or nothing; normalising that word again changes
        /// nothing, and a type and a field key normalise alike.
        #[test]
        fn normalising_twice_changes_nothing(raw in "\\PC{0,80}") {
            match normalise_word(&raw) {
                Some(word) => {
                    prop_assert!(is_snake_case(&word) && word.len() <= 64, "{word:?}");
                    prop_assert_eq!(normalise_word(&word), Some(word.clone()));
                    prop_assert_eq!(ItemType::new(&raw).unwrap().to_string(), word.clone());
                    prop_assert_eq!(FieldKey::new(&raw).unwrap().to_string(), word.clone());
                }
                None => {
                    prop_assert!(matches!(ItemType::new(&raw), Err(ItemError::BadItemType(_))));
                    prop_assert!(matches!(FieldKey::new(&raw), Err(ItemError::BadFieldKey(_))));
                }
            }
        }
    }

    #[test]
    fn types_are_typed_as_people_write_them() {
        for raw in ["Power Bank", "power-bank", "power bank", " POWER_BANK ", "power_bank", "Power  --  bank"] {
            assert_eq!(ItemType::new(raw).unwrap().as_str(), "power_bank", "{raw:?}");
        }
        assert_eq!(FieldKey::new("Weight").unwrap().as_str(), "weight");
        assert_eq!(ItemType::new("power_bank").unwrap().label(), "Power bank");
        let refused = ItemType::new("電池").unwrap_err().to_string();
        assert!(!refused.contains('^') && refused.contains("write it in words"), "{refused}");
    }

    #[test]
    fn condition_order() {
        assert!(Condition::New.is_at_least(Condition::ForParts));
        assert!(Condition::Good.is_at_least(Condition::Good));
        assert!(!Condition::Fair.is_at_least(Condition::Good));
        assert!(!Condition::ForParts.is_at_least(Condition::Poor));
        let ranks: Vec<u8> = Condition::ALL.iter().map(|c| c.rank()).collect();
        assert_eq!(ranks, vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn names_and_types_are_validated() {
        assert_eq!(ItemName::new("  Pi 4 ").unwrap().as_str(), "Pi 4");
        assert_eq!(ItemName::new("   "), Err(ItemError::EmptyName));
        assert_eq!(ItemName::new(&"x".repeat(201)), Err(ItemError::NameTooLong));
        assert!(ItemType::new("power_supply").is_ok());
        assert_eq!(ItemType::new("Power Supply").unwrap().as_str(), "power_supply");
        assert!(matches!(ItemType::new("--"), Err(ItemError::BadItemType(_))));
    }

    #[test]
    fn accessories_dedupe_ignoring_case() {
        let got = accessories(&["USB-C cable".into(), "usb-c cable".into(), " box ".into()]).unwrap();
        assert_eq!(got, vec!["USB-C cable".to_owned(), "box".to_owned()]);
        assert!(accessories(&[" ".into()]).is_err());
    }
}
