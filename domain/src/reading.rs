//! Readings: what the model read from a label photo, a listing's text or a voice note, and the rules that turn
//! it into candidate items. The reading is model text: every value is checked here and nothing of it is
//! trusted. A value that does not pass is dropped and reported in the candidate's notes, rather than failing the
//! whole reading.

use crate::Timestamp;
use crate::item::{
    self, Condition, Fault, Intent, ItemName, ItemType, Measurement, MeasurementSource, NewItem, Severity,
};
use crate::text::{clip, to_snake_case};

/// Most candidates kept from one reading.
pub const CANDIDATES_MAX: usize = 20;
/// Most measurements, faults or accessories kept per candidate.
pub const LIST_MAX: usize = 40;
/// Longest listing text or transcript read, in characters.
pub const TEXT_MAX: usize = 20_000;
/// The item type of a candidate whose type cannot be read.
pub const FALLBACK_ITEM_TYPE: &str = "other";

/// The reading as the model answered it (read through the application's `Reading` contract). Nothing here is
/// validated yet: [`validate`] judges every value.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReading {
    pub candidates: Vec<ModelCandidate>,
}

/// One item the model read, as it answered it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCandidate {
    pub name: String,
    pub item_type: String,
    pub profile: Option<String>,
    pub brand: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub condition: Option<String>,
    pub measurements: Vec<ModelMeasurement>,
    pub faults: Vec<ModelFault>,
    pub accessories: Vec<String>,
}

/// A measured value as the model read it ("10", "Ah").
#[derive(Debug, Clone, PartialEq)]
pub struct ModelMeasurement {
    pub key: String,
    pub value: f64,
    pub unit: String,
}

/// A fault as the model read it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFault {
    pub text: String,
    pub severity: String,
}

/// A candidate item after the rules: a valid new item (intent `keep`, condition `good` unless read otherwise),
/// the identifying facts matching needs, and what was dropped or changed on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub item: NewItem,
    pub brand: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    /// What of the model's answer was not kept, or was changed, in words ("measurement weight: unknown unit
    /// \"stone\"").
    pub notes: Vec<String>,
}

/// The kinds of image a label photo may be, told by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Jpeg,
    Png,
    Webp,
}

impl ImageFormat {
    /// The format of an image by its magic bytes; `None` for anything else (GIF, HEIC, text, ...). The one place
    /// where image signatures are told: the HTTP and vision adapters call it.
    ///
    /// ```
    /// use trove_domain::reading::ImageFormat;
    /// assert_eq!(ImageFormat::sniff(b"\x89PNG\r\n\x1a\n...."), Some(ImageFormat::Png));
    /// assert_eq!(ImageFormat::sniff(b"GIF89a"), None);
    /// ```
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(Self::Webp)
        } else {
            None
        }
    }

    /// The MIME type of the format ("image/png").
    pub fn mime(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
            Self::Webp => "image/webp",
        }
    }
}

/// True when `bytes` start like a WAV file (a RIFF container of form `WAVE`). The one place where the WAV
/// signature is told: the HTTP and model adapters call it.
///
/// ```
/// assert!(trove_domain::reading::is_wav(b"RIFF\x24\0\0\0WAVEfmt "));
/// assert!(!trove_domain::reading::is_wav(b"ID3\x04\0\0\0\0"));
/// ```
pub fn is_wav(bytes: &[u8]) -> bool {
    bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WAVE"
}

/// Why a text to read was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    #[error("{0} must not be empty")]
    Empty(&'static str),
    #[error("{0} is longer than {TEXT_MAX} characters")]
    TooLong(&'static str),
}

/// Checks a listing's text or a transcript: trimmed, 1 to [`TEXT_MAX`] characters.
///
/// # Errors
/// [`TextError::Empty`] or [`TextError::TooLong`], naming `what`.
pub fn text_to_read(raw: &str, what: &'static str) -> Result<String, TextError> {
    let t = raw.trim();
    if t.is_empty() {
        return Err(TextError::Empty(what));
    }
    if t.chars().count() > TEXT_MAX {
        return Err(TextError::TooLong(what));
    }
    Ok(t.to_owned())
}

/// A short identifying fact (brand, model, serial): trimmed, blank is none, clipped to 100 characters.
fn fact(raw: Option<&str>) -> Option<String> {
    raw.map(|s| clip(s, 100)).filter(|s| !s.is_empty())
}

/// Words of `needle`, ignoring case, all found in `haystack`'s words.
fn mentions(haystack: &str, needle: &str) -> bool {
    let lower = haystack.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    needle.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).all(|w| words.contains(&w))
}

/// The profile of a candidate: the model's profile line, with the brand, model and serial added in front when it
/// does not mention them already (so that matching finds the item again once it is saved), clipped to
/// [`item::PROFILE_MAX`].
fn compose_profile(c: &ModelCandidate, brand: Option<&str>, model: Option<&str>, serial: Option<&str>) -> String {
    let given = c.profile.as_deref().map(str::trim).unwrap_or("");
    let mut front: Vec<String> = Vec::new();
    for part in [brand, model].into_iter().flatten() {
        if !mentions(given, part) && !front.iter().any(|f| mentions(f, part)) {
            front.push(part.to_owned());
        }
    }
    let mut parts: Vec<String> = Vec::new();
    if !front.is_empty() {
        parts.push(front.join(" "));
    }
    if !given.is_empty() {
        parts.push(given.to_owned());
    }
    if let Some(s) = serial
        && !given.to_lowercase().contains(&s.to_lowercase())
    {
        parts.push(format!("serial {s}"));
    }
    clip(&parts.join(", "), item::PROFILE_MAX)
}

/// Turns the model's reading into candidates by the rules: names through [`ItemName`] (a nameless candidate is
/// dropped), item types through [`to_snake_case`] (else `other`), units through
/// [`crate::units::normalise`] ("10 Ah" becomes 10000 mAh; a measurement with an unknown unit is dropped and
/// noted), faults and accessories as short texts, condition `good` unless a known word is given. Everything
/// read is recorded with `source` at `at`. Answers the candidates and the notes about the reading as a whole.
///
/// ```
/// use trove_domain::reading::{validate, ModelCandidate, ModelMeasurement, ModelReading};
/// use trove_domain::item::MeasurementSource;
/// let c = ModelCandidate {
///     name: "Anker PowerCore".into(), item_type: "Power Bank".into(), profile: None,
///     brand: Some("Anker".into()), model: Some("A1263".into()), serial: None, condition: None,
///     measurements: vec![ModelMeasurement { key: "capacity".into(), value: 10.0, unit: "Ah".into() }],
///     faults: vec![], accessories: vec![],
/// };
/// let (candidates, _) = validate(ModelReading { candidates: vec![c] }, chrono::Utc::now(), MeasurementSource::Label);
/// assert_eq!(candidates[0].item.item_type.as_str(), "power_bank");
/// assert_eq!(candidates[0].item.measurements[0].quantity().to_string(), "10000 mAh");
/// ```
pub fn validate(reading: ModelReading, at: Timestamp, source: MeasurementSource) -> (Vec<Candidate>, Vec<String>) {
    let mut notes = Vec::new();
    let total = reading.candidates.len();
    if total > CANDIDATES_MAX {
        notes.push(format!("only the first {CANDIDATES_MAX} of {total} candidates were kept"));
    }
    let mut out = Vec::new();
    for (i, c) in reading.candidates.into_iter().take(CANDIDATES_MAX).enumerate() {
        match candidate(c, at, source) {
            Ok(c) => out.push(c),
            Err(why) => notes.push(format!("candidate {}: {why}; dropped", i + 1)),
        }
    }
    (out, notes)
}

/// One candidate by the rules; `Err` says why it cannot be an item at all.
fn candidate(c: ModelCandidate, at: Timestamp, source: MeasurementSource) -> Result<Candidate, String> {
    let mut notes = Vec::new();
    let name = match ItemName::new(&c.name) {
        Ok(n) => n,
        Err(item::ItemError::NameTooLong) => {
            notes.push(format!("name clipped to {} characters", item::NAME_MAX));
            ItemName::new(&clip(&c.name, item::NAME_MAX)).map_err(|e| e.to_string())?
        }
        Err(e) => return Err(e.to_string()),
    };
    let item_type = to_snake_case(&c.item_type)
        .map(|t| clip(&t, 64).trim_end_matches('_').to_owned())
        .and_then(|t| ItemType::new(&t).ok())
        .unwrap_or_else(|| {
            notes.push(format!("item_type {:?} is not a kind; read as {FALLBACK_ITEM_TYPE}", c.item_type));
            ItemType::new(FALLBACK_ITEM_TYPE).expect("the fallback item type is snake case")
        });
    let condition = match c.condition.as_deref().map(str::trim) {
        None | Some("") => Condition::Good,
        Some(word) => Condition::parse(&word.to_lowercase().replace([' ', '-'], "_")).unwrap_or_else(|| {
            notes.push(format!("condition {word:?} is not a condition; read as good"));
            Condition::Good
        }),
    };
    let (brand, model, serial) = (fact(c.brand.as_deref()), fact(c.model.as_deref()), fact(c.serial.as_deref()));
    let profile = compose_profile(&c, brand.as_deref(), model.as_deref(), serial.as_deref());
    let mut item = NewItem::new(name, item_type, profile, condition, Intent::Keep);

    let mut keys: Vec<String> = Vec::new();
    for m in c.measurements.iter().take(LIST_MAX) {
        let Some(key) = to_snake_case(&m.key).map(|k| clip(&k, 64).trim_end_matches('_').to_owned()) else {
            notes.push(format!("measurement {:?}: not a field key; dropped", m.key));
            continue;
        };
        if keys.contains(&key) {
            notes.push(format!("measurement {key}: given twice; the first kept"));
            continue;
        }
        match Measurement::new(&key, m.value, &m.unit, at, source) {
            Ok(measurement) => {
                keys.push(key);
                item.measurements.push(measurement);
            }
            Err(e) => notes.push(format!("measurement {key}: {}; dropped", reason(&e))),
        }
    }
    for f in c.faults.iter().take(LIST_MAX) {
        let severity = Severity::parse(f.severity.trim()).unwrap_or_else(|| {
            notes.push(format!("fault {:?}: severity {:?} read as major", clip(&f.text, 40), f.severity));
            Severity::Major
        });
        match Fault::new(&clip(&f.text, item::SHORT_TEXT_MAX), severity) {
            Ok(fault) => item.faults.push(fault),
            Err(e) => notes.push(format!("fault: {e}; dropped")),
        }
    }
    let accessories: Vec<String> =
        c.accessories.iter().take(LIST_MAX).map(|a| clip(a, item::SHORT_TEXT_MAX)).filter(|a| !a.is_empty()).collect();
    item.accessories = item::accessories(&accessories).unwrap_or_default();
    Ok(Candidate { item, brand, model, serial, notes })
}

/// The reason inside a measurement error, without the field name the note already gives.
fn reason(e: &item::ItemError) -> String {
    match e {
        item::ItemError::BadMeasurement { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use proptest::prelude::*;

    fn at() -> Timestamp {
        Utc.with_ymd_and_hms(2026, 2, 1, 9, 0, 0).unwrap()
    }

    fn raw(name: &str, item_type: &str) -> ModelCandidate {
        ModelCandidate {
            name: name.into(),
            item_type: item_type.into(),
            profile: None,
            brand: None,
            model: None,
            serial: None,
            condition: None,
            measurements: Vec::new(),
            faults: Vec::new(),
            accessories: Vec::new(),
        }
    }

    fn one(c: ModelCandidate) -> Result<Candidate, Vec<String>> {
        let (mut out, notes) = validate(ModelReading { candidates: vec![c] }, at(), MeasurementSource::Listing);
        out.pop().ok_or(notes)
    }

    /// Checks how one measurement reads: `Some("value unit")` kept, `None` dropped with a note.
    fn check_measurement(key: &str, value: f64, unit: &str, want: Option<(&str, &str)>) {
        let mut c = raw("Thing", "thing");
        c.measurements.push(ModelMeasurement { key: key.into(), value, unit: unit.into() });
        let got = one(c).unwrap();
        let kept = got.item.measurements.first().map(|m| (m.key.to_string(), m.quantity().to_string()));
        assert_eq!(kept, want.map(|(k, q)| (k.to_owned(), q.to_owned())), "{key} {value} {unit}: {:?}", got.notes);
        assert_eq!(got.notes.is_empty(), want.is_some(), "{:?}", got.notes);
    }

    #[test]
    fn measurements_are_normalised_or_dropped() {
        check_measurement("capacity", 10.0, "Ah", Some(("capacity", "10000 mAh")));
        check_measurement("Output Voltage", 12.0, "v", Some(("output_voltage", "12 V")));
        check_measurement("storage", 1.0, "TB", Some(("storage", "1000 GB")));
        check_measurement("weight", 2.0, "stone", None);
        check_measurement("weight", f64::NAN, "g", None);
        check_measurement("--", 2.0, "g", None);
    }

    #[test]
    fn names_types_and_conditions_follow_the_rules() {
        assert!(one(raw("   ", "laptop")).is_err());
        let c = one(raw(&"n".repeat(300), "Power Supply (ATX)")).unwrap();
        assert_eq!(c.item.name.as_str().chars().count(), item::NAME_MAX);
        assert_eq!(c.item.item_type.as_str(), "power_supply_atx");
        let c = one(raw("Thing", "---")).unwrap();
        assert_eq!(c.item.item_type.as_str(), "other");
        assert_eq!(c.item.intent, Intent::Keep);
        for (word, want) in
            [("Like New", Condition::LikeNew), ("for-parts", Condition::ForParts), ("shiny", Condition::Good)]
        {
            let mut r = raw("Thing", "thing");
            r.condition = Some(word.into());
            assert_eq!(one(r).unwrap().item.condition, want, "{word}");
        }
    }

    #[test]
    fn profile_carries_brand_model_and_serial() {
        let mut r = raw("Power bank", "power_bank");
        r.brand = Some("Anker".into());
        r.model = Some(" A1263 ".into());
        r.serial = Some("AK12345678".into());
        r.profile = Some("10000 mAh, USB-C".into());
        let c = one(r.clone()).unwrap();
        assert_eq!(c.item.profile, "Anker A1263, 10000 mAh, USB-C, serial AK12345678");
        assert_eq!(c.model.as_deref(), Some("A1263"));
        r.profile = Some("Anker A1263 power bank, serial AK12345678".into());
        assert_eq!(one(r).unwrap().item.profile, "Anker A1263 power bank, serial AK12345678");
    }

    #[test]
    fn faults_and_accessories_are_short_texts() {
        let mut r = raw("Thing", "thing");
        r.faults = vec![
            ModelFault { text: "cracked case".into(), severity: "minor".into() },
            ModelFault { text: "dead port".into(), severity: "terrible".into() },
            ModelFault { text: " ".into(), severity: "minor".into() },
        ];
        r.accessories = vec!["cable".into(), "Cable".into(), "".into(), "box".into()];
        let c = one(r).unwrap();
        let faults: Vec<(&str, Severity)> = c.item.faults.iter().map(|f| (f.text.as_str(), f.severity)).collect();
        assert_eq!(faults, vec![("cracked case", Severity::Minor), ("dead port", Severity::Major)]);
        assert_eq!(c.item.accessories, vec!["cable".to_owned(), "box".to_owned()]);
        assert_eq!(c.notes.len(), 2, "{:?}", c.notes);
    }

    #[test]
    fn magic_bytes() {
        assert_eq!(ImageFormat::sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(ImageFormat::Jpeg));
        assert_eq!(ImageFormat::sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(ImageFormat::Webp));
        assert_eq!(ImageFormat::sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(ImageFormat::sniff(b"GIF89a......"), None);
        assert!(is_wav(b"RIFF\0\0\0\0WAVEfmt "));
        assert!(!is_wav(b"RIFF\0\0\0\0WEBPVP8 "));
    }

    #[test]
    fn texts_to_read() {
        assert_eq!(text_to_read("  a  ", "text"), Ok("a".to_owned()));
        assert_eq!(text_to_read("  ", "text"), Err(TextError::Empty("text")));
        assert_eq!(text_to_read(&"x".repeat(TEXT_MAX + 1), "text"), Err(TextError::TooLong("text")));
    }

    proptest! {
        /// Whatever the model answers, the rules never panic and every kept candidate is a valid item.
        #[test]
        fn any_answer_gives_valid_items(name in ".{0,240}", kind in ".{0,80}", key in ".{0,20}", unit in ".{0,8}",
                                        value in proptest::num::f64::ANY) {
            let mut r = raw(&name, &kind);
            r.measurements.push(ModelMeasurement { key, value, unit });
            if let Ok(c) = one(r) {
                prop_assert!(ItemName::new(c.item.name.as_str()).is_ok());
                prop_assert!(ItemType::new(c.item.item_type.as_str()).is_ok());
                prop_assert!(c.item.measurements.iter().all(|m| m.value.is_finite()));
            }
        }
    }
}
