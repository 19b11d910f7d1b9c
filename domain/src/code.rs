//! Product codes an item carries: GTINs (EAN-8, UPC-A, EAN-13, GTIN-14), ISBNs and a shop's own codes.
//!
//! A code has a **key**, the one form a household's codes are unique by and searched by, and a **shown** form, the
//! one a person reads. A GTIN's key is its GTIN-14 (zeros in front), shown as it was scanned (8, 12, 13 or 14
//! digits); its GS1 check digit is verified. An ISBN-10 becomes its ISBN-13, and an ISBN's key is the GTIN-14 of
//! its ISBN-13, so a book scanned as an EAN-13 and typed as an ISBN-10 is one key. A shop's own code (`other`) is
//! kept as typed and keyed without regard to case, in a space of keys of its own (`other:…`), so it never stands
//! for a GTIN.
//!
//! ```
//! use trove_domain::code::{Code, CodeKind};
//! let scanned = Code::parse(None, "9780306406157").unwrap();
//! let typed = Code::parse(Some(CodeKind::Isbn), "0-306-40615-2").unwrap();
//! assert_eq!(scanned.key(), "09780306406157");
//! assert_eq!(typed.key(), scanned.key());
//! assert_eq!(typed.shown(), "9780306406157");
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The longest code of kind `other`, in characters.
pub const MAX_OTHER_CHARS: usize = 64;

/// How much of a refused text an error repeats, in characters: enough to recognise it, never a whole body.
const QUOTED_CHARS: usize = 40;

/// What kind of code a code is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CodeKind {
    /// A GS1 Global Trade Item Number of 8, 12, 13 or 14 digits (EAN-8, UPC-A, EAN-13, GTIN-14).
    Gtin,
    /// An International Standard Book Number, ISBN-10 or ISBN-13.
    Isbn,
    /// Any other code: a shop's own, a part number.
    Other,
}

impl CodeKind {
    /// Every kind, in the order the API lists them.
    pub const ALL: [Self; 3] = [Self::Gtin, Self::Isbn, Self::Other];

    /// The kind's name in the API, CSV and storage: `gtin`, `isbn`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gtin => "gtin",
            Self::Isbn => "isbn",
            Self::Other => "other",
        }
    }
}

impl fmt::Display for CodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CodeKind {
    type Err = CodeError;

    /// ```
    /// use trove_domain::code::CodeKind;
    /// assert_eq!("GTIN".parse::<CodeKind>().unwrap(), CodeKind::Gtin);
    /// assert!("ean".parse::<CodeKind>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Self::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(t))
            .ok_or_else(|| CodeError::Kind { kind: quoted(t) })
    }
}

/// Why a code was refused. Each variant names the code (at most its first 40 characters) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    #[error("a code must not be empty")]
    Empty,
    #[error("{kind:?} is not a kind of code (gtin, isbn or other)")]
    Kind { kind: String },
    #[error("{kind} {code:?} must hold only digits")]
    NotDigits { kind: CodeKind, code: String },
    #[error("{kind} {code} has {digits} digits; {}", expected_lengths(*.kind))]
    Length { kind: CodeKind, code: String, digits: usize },
    #[error("the check digit of {kind} {code} is wrong: it should be {expected}")]
    CheckDigit { kind: CodeKind, code: String, expected: char },
    #[error("isbn {code} does not start with 978 or 979, as every ISBN-13 does")]
    NotBookland { code: String },
    #[error("code {code:?} is longer than {MAX_OTHER_CHARS} characters")]
    TooLong { code: String },
    #[error("code {code:?} must not contain control characters")]
    Control { code: String },
}

impl CodeError {
    /// The code as the error names it, for an answer that points at it (empty for [`CodeError::Empty`]).
    pub fn code(&self) -> &str {
        match self {
            Self::Empty => "",
            Self::Kind { kind } => kind,
            Self::NotDigits { code, .. }
            | Self::Length { code, .. }
            | Self::CheckDigit { code, .. }
            | Self::NotBookland { code }
            | Self::TooLong { code }
            | Self::Control { code } => code,
        }
    }
}

fn expected_lengths(kind: CodeKind) -> &'static str {
    match kind {
        CodeKind::Gtin => "a GTIN has 8, 12, 13 or 14",
        CodeKind::Isbn => "an ISBN has 10 or 13",
        CodeKind::Other => "",
    }
}

/// At most [`QUOTED_CHARS`] characters of `raw`, with `…` when cut.
fn quoted(raw: &str) -> String {
    let mut chars = raw.chars();
    let head: String = chars.by_ref().take(QUOTED_CHARS).collect();
    if chars.next().is_some() { format!("{head}…") } else { head }
}

/// Why no product database can know a code ([`Code::unknowable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknowable {
    /// A shop's own code (`other`).
    ShopCode,
    /// A number under GS1's in-store prefixes (02, 20 to 29): given out by a shop for its own goods.
    InStore,
    /// A periodical's ISSN (977).
    Issn,
}

impl Unknowable {
    /// Why, in the API's words: `shop_code`, `in_store`, `issn`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ShopCode => "shop_code",
            Self::InStore => "in_store",
            Self::Issn => "issn",
        }
    }
}

/// A checked code: its kind, its key and the form it is shown in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Code {
    kind: CodeKind,
    key: String,
    shown: String,
}

impl Code {
    /// Why no product database can know this code, if none can: a shop's own code, a number a shop gives out
    /// itself (GS1's in-store prefixes 02 and 20 to 29: weighed goods, a store's own labels), or a periodical's
    /// ISSN (977). Such a code is never sent to a provider.
    ///
    /// ```
    /// use trove_domain::code::{Code, Unknowable};
    /// let check = |raw: &str| Code::parse(None, raw).unwrap().unknowable();
    /// assert_eq!(check("2012345000001"), Some(Unknowable::InStore));
    /// assert_eq!(check("0212345000007"), Some(Unknowable::InStore));
    /// assert_eq!(check("9771234567003"), Some(Unknowable::Issn));
    /// assert_eq!(check("Shelf-A"), Some(Unknowable::ShopCode));
    /// assert_eq!(check("4006381333931"), None);
    /// assert_eq!(check("9780306406157"), None);
    /// ```
    pub fn unknowable(&self) -> Option<Unknowable> {
        if self.kind == CodeKind::Other {
            return Some(Unknowable::ShopCode);
        }
        let gtin13 = self.gtin13()?;
        if gtin13.starts_with("02") || gtin13.starts_with('2') {
            Some(Unknowable::InStore)
        } else if gtin13.starts_with("977") {
            Some(Unknowable::Issn)
        } else {
            None
        }
    }

    /// Whether the code is a book's (an ISBN, or a GTIN-13 under 978 or 979).
    pub fn is_book(&self) -> bool {
        self.gtin13().is_some_and(|g| g.starts_with("978") || g.starts_with("979"))
    }

    /// Reads `raw` as a code of `kind`, or, with `None`, of the kind its text is (an `ISBN` in front, a hyphen or a
    /// space between digits are allowed and dropped for GTINs and ISBNs):
    /// - 10 characters of digits, the last maybe `X`: an ISBN-10;
    /// - 13 digits starting with 978 or 979: an ISBN;
    /// - 8 to 14 digits, or more: a GTIN (so a 9-, 11- or over-long number is refused as a GTIN, never taken
    ///   for a shop's code);
    /// - anything else (letters, fewer than 8 digits): `other`.
    ///
    /// ```
    /// use trove_domain::code::{Code, CodeError, CodeKind};
    /// let upc = Code::parse(None, "036000291452").unwrap();
    /// assert_eq!((upc.kind(), upc.key(), upc.shown()), (CodeKind::Gtin, "00036000291452", "036000291452"));
    /// assert_eq!(upc.gtin13().as_deref(), Some("0036000291452"));
    /// let e = Code::parse(None, "4006381333932").unwrap_err();
    /// assert_eq!(e.to_string(), "the check digit of gtin 4006381333932 is wrong: it should be 1");
    /// assert_eq!(Code::parse(None, "Shelf-A 12").unwrap().key(), "other:shelf-a 12");
    /// ```
    ///
    /// # Errors
    /// The [`CodeError`] naming the code and what is wrong: an empty text, letters in a GTIN, a length no GTIN or
    /// ISBN has, a wrong check digit (with the one it should be), an ISBN-13 outside 978/979, an `other` code
    /// over [`MAX_OTHER_CHARS`] characters or holding a control character.
    pub fn parse(kind: Option<CodeKind>, raw: &str) -> Result<Self, CodeError> {
        let text = raw.trim();
        if text.is_empty() {
            return Err(CodeError::Empty);
        }
        let kind = match kind {
            Some(kind) => kind,
            None => infer(text),
        };
        match kind {
            CodeKind::Gtin => gtin(&compact(text)),
            CodeKind::Isbn => isbn(&compact(strip_isbn_prefix(text))),
            CodeKind::Other => other(text),
        }
    }

    /// What kind of code it is.
    pub fn kind(&self) -> CodeKind {
        self.kind
    }

    /// The key a household's codes are unique by and searched by: a GTIN-14 for GTINs and ISBNs, `other:` and the
    /// text in lower case for the rest.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The form a person reads: a GTIN as it was scanned (digits only), an ISBN as its ISBN-13, another code as
    /// typed (trimmed).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The 13-digit form product databases know a code by (an EAN-13, a UPC-A with a 0 in front, an EAN-8 with
    /// five, an ISBN-13), where it has one: a GTIN-14 with an indicator digit and a shop's code have none.
    pub fn gtin13(&self) -> Option<String> {
        match self.kind {
            CodeKind::Other => None,
            CodeKind::Gtin | CodeKind::Isbn => self.key.strip_prefix('0').map(str::to_owned),
        }
    }

    /// The ISBN-10 of a book numbered under 978, where it has one.
    ///
    /// ```
    /// use trove_domain::code::Code;
    /// assert_eq!(Code::parse(None, "978-0-306-40615-7").unwrap().isbn10().as_deref(), Some("0306406152"));
    /// assert_eq!(Code::parse(None, "9791032305690").unwrap().isbn10(), None);
    /// ```
    pub fn isbn10(&self) -> Option<String> {
        let body = self.gtin13()?.strip_prefix("978")?.get(..9)?.to_owned();
        let check = isbn10_check_digit(&body)?;
        Some(format!("{body}{check}"))
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind, self.shown)
    }
}

/// Most codes one item carries.
pub const CODES_MAX: usize = 20;

/// Why an item's list of codes was refused: a code of it (by its place in the list, from 0) or their count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodesError {
    #[error("codes[{n}]: {error}")]
    Code { n: usize, error: CodeError },
    #[error("an item carries at most {CODES_MAX} codes, not {0}")]
    TooMany(usize),
}

/// An item's codes: at most [`CODES_MAX`], in the order given, a code whose key is already in the list dropped
/// (a UPC-A and its EAN-13 are one code).
///
/// ```
/// use trove_domain::code::{Code, CodeKind, Codes};
/// let codes = Codes::parse([(Some(CodeKind::Gtin), "036000291452"), (None, "0036000291452"), (None, "AB-1")]).unwrap();
/// assert_eq!(codes.as_slice().iter().map(Code::shown).collect::<Vec<_>>(), ["036000291452", "AB-1"]);
/// let e = Codes::parse([(None, "4006381333931"), (None, "4006381333932")]).unwrap_err();
/// assert_eq!(e.to_string(), "codes[1]: the check digit of gtin 4006381333932 is wrong: it should be 1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Codes(Vec<Code>);

impl Codes {
    /// The list of `codes`, a repeated key dropped.
    ///
    /// # Errors
    /// [`CodesError::TooMany`] past [`CODES_MAX`] distinct codes.
    pub fn new(codes: impl IntoIterator<Item = Code>) -> Result<Self, CodesError> {
        let mut out: Vec<Code> = Vec::new();
        for code in codes {
            if !out.iter().any(|have| have.key == code.key) {
                out.push(code);
            }
        }
        if out.len() > CODES_MAX {
            return Err(CodesError::TooMany(out.len()));
        }
        Ok(Self(out))
    }

    /// Reads each `(kind, raw)` as [`Code::parse`] does, then [`Codes::new`].
    ///
    /// # Errors
    /// [`CodesError::Code`] naming the first code refused and its place; [`CodesError::TooMany`].
    pub fn parse<'a>(raw: impl IntoIterator<Item = (Option<CodeKind>, &'a str)>) -> Result<Self, CodesError> {
        let codes = raw
            .into_iter()
            .enumerate()
            .map(|(n, (kind, text))| Code::parse(kind, text).map_err(|error| CodesError::Code { n, error }))
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(codes)
    }

    pub fn as_slice(&self) -> &[Code] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The code of this list whose key is `key`.
    pub fn find(&self, key: &str) -> Option<&Code> {
        self.0.iter().find(|c| c.key == key)
    }

    /// The codes as a sheet or the history writes them: `kind:shown` joined by `;`
    /// (`gtin:4006381333931;isbn:9780306406157`); empty for none. [`Codes::read_joined`] reads it back.
    pub fn joined(&self) -> String {
        self.0.iter().map(|c| format!("{}:{}", c.kind, c.shown)).collect::<Vec<_>>().join(";")
    }

    /// Reads [`Codes::joined`]'s text: entries separated by `;`, each `kind:code` or a code alone (its kind
    /// read from its text); blank entries skipped.
    ///
    /// ```
    /// use trove_domain::code::Codes;
    /// let codes = Codes::read_joined("gtin:036000291452; isbn:0-306-40615-2;;other:Shelf: 4").unwrap();
    /// assert_eq!(codes.joined(), "gtin:036000291452;isbn:9780306406157;other:Shelf: 4");
    /// assert_eq!(Codes::read_joined(" ").unwrap(), Codes::default());
    /// ```
    ///
    /// # Errors
    /// As [`Codes::parse`]; an entry whose kind is not one is [`CodeError::Kind`].
    pub fn read_joined(text: &str) -> Result<Self, CodesError> {
        let mut codes = Vec::new();
        for (n, entry) in text.split(';').filter(|e| !e.trim().is_empty()).enumerate() {
            let (kind, raw) = match entry.split_once(':') {
                // A word before the first colon names the kind; a code with a colon of its own is `other:…`.
                Some((kind, raw))
                    if !kind.trim().is_empty() && kind.trim().chars().all(|c| c.is_ascii_alphabetic()) =>
                {
                    (Some(kind.parse::<CodeKind>().map_err(|error| CodesError::Code { n, error })?), raw)
                }
                _ => (None, entry),
            };
            codes.push(Code::parse(kind, raw).map_err(|error| CodesError::Code { n, error })?);
        }
        Self::new(codes)
    }
}

#[derive(Serialize, Deserialize)]
struct StoredCode {
    kind: String,
    value: String,
}

impl Serialize for Codes {
    /// As a list of `{kind, value}`, the value the shown form: each reads back to the same code.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|c| StoredCode { kind: c.kind.as_str().to_owned(), value: c.shown.clone() }))
    }
}

impl<'de> Deserialize<'de> for Codes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let stored = Vec::<StoredCode>::deserialize(d)?;
        let mut codes = Vec::with_capacity(stored.len());
        for c in stored {
            let kind = c.kind.parse::<CodeKind>().map_err(serde::de::Error::custom)?;
            codes.push(Code::parse(Some(kind), &c.value).map_err(serde::de::Error::custom)?);
        }
        Self::new(codes).map_err(serde::de::Error::custom)
    }
}

/// The kind a text without one is read as (see [`Code::parse`]).
fn infer(text: &str) -> CodeKind {
    let unprefixed = strip_isbn_prefix(text);
    if unprefixed.len() != text.trim().len() || is_isbn10_shape(&compact(unprefixed)) {
        return CodeKind::Isbn;
    }
    let c = compact(text);
    if !c.bytes().all(|b| b.is_ascii_digit()) {
        return CodeKind::Other;
    }
    match c.len() {
        13 if c.starts_with("978") || c.starts_with("979") => CodeKind::Isbn,
        n if n >= 8 => CodeKind::Gtin,
        _ => CodeKind::Other,
    }
}

/// `text` without an `ISBN`, `ISBN:`, `ISBN-13:` or `ISBN 10` in front.
fn strip_isbn_prefix(text: &str) -> &str {
    let t = text.trim();
    let Some(head) = t.get(..4) else { return t };
    let rest = &t[4..];
    if !head.eq_ignore_ascii_case("isbn") || rest.starts_with(|c: char| c.is_alphabetic()) {
        return t;
    }
    let rest = rest.trim_start_matches([' ', '-', ':']);
    let rest = match rest.get(..2) {
        Some("13" | "10") if rest[2..].starts_with([':', ' ']) => &rest[2..],
        _ => rest,
    };
    rest.trim_start_matches([' ', ':'])
}

/// `text` without the hyphens and spaces people and labels put between digits.
fn compact(text: &str) -> String {
    text.chars().filter(|c| !matches!(c, '-' | ' ' | '\u{a0}')).collect()
}

fn is_isbn10_shape(c: &str) -> bool {
    let b = c.as_bytes();
    b.len() == 10 && b[..9].iter().all(u8::is_ascii_digit) && (b[9].is_ascii_digit() || b[9] == b'X' || b[9] == b'x')
}

fn gtin(digits: &str) -> Result<Code, CodeError> {
    let kind = CodeKind::Gtin;
    if digits.is_empty() {
        return Err(CodeError::Empty);
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CodeError::NotDigits { kind, code: quoted(digits) });
    }
    if !matches!(digits.len(), 8 | 12 | 13 | 14) {
        return Err(CodeError::Length { kind, code: quoted(digits), digits: digits.len() });
    }
    verify_gs1(kind, digits)?;
    Ok(Code { kind, key: format!("{digits:0>14}"), shown: digits.to_owned() })
}

fn isbn(c: &str) -> Result<Code, CodeError> {
    let kind = CodeKind::Isbn;
    if c.is_empty() {
        return Err(CodeError::Empty);
    }
    if is_isbn10_shape(c) {
        let body = &c[..9];
        let expected = isbn10_check_digit(body).unwrap_or('0');
        if !c[9..].eq_ignore_ascii_case(&expected.to_string()) {
            return Err(CodeError::CheckDigit { kind, code: c.to_ascii_uppercase(), expected });
        }
        let with = format!("978{body}");
        let check = gs1_check_digit(&with).unwrap_or('0');
        let isbn13 = format!("{with}{check}");
        return Ok(Code { kind, key: format!("0{isbn13}"), shown: isbn13 });
    }
    if !c.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CodeError::NotDigits { kind, code: quoted(c) });
    }
    if c.len() != 13 {
        return Err(CodeError::Length { kind, code: quoted(c), digits: c.len() });
    }
    if !(c.starts_with("978") || c.starts_with("979")) {
        return Err(CodeError::NotBookland { code: c.to_owned() });
    }
    verify_gs1(kind, c)?;
    Ok(Code { kind, key: format!("0{c}"), shown: c.to_owned() })
}

fn other(text: &str) -> Result<Code, CodeError> {
    if text.chars().count() > MAX_OTHER_CHARS {
        return Err(CodeError::TooLong { code: quoted(text) });
    }
    if text.chars().any(char::is_control) {
        return Err(CodeError::Control { code: quoted(&text.replace(char::is_control, "?")) });
    }
    Ok(Code { kind: CodeKind::Other, key: format!("other:{}", text.to_lowercase()), shown: text.to_owned() })
}

fn verify_gs1(kind: CodeKind, digits: &str) -> Result<(), CodeError> {
    let (body, given) = digits.split_at(digits.len() - 1);
    let expected = gs1_check_digit(body).unwrap_or('0');
    if given.starts_with(expected) {
        Ok(())
    } else {
        Err(CodeError::CheckDigit { kind, code: digits.to_owned(), expected })
    }
}

/// The GS1 check digit of `body` (a GTIN without its last digit): the digits weighted 3 and 1 from the right,
/// and what brings the sum to a multiple of ten. `None` when `body` is empty or holds anything but digits.
///
/// ```
/// use trove_domain::code::gs1_check_digit;
/// assert_eq!(gs1_check_digit("400638133393"), Some('1'));
/// assert_eq!(gs1_check_digit("03600029145"), Some('2'));
/// assert_eq!(gs1_check_digit("12a"), None);
/// ```
pub fn gs1_check_digit(body: &str) -> Option<char> {
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let sum: u32 =
        body.bytes().rev().enumerate().map(|(i, b)| u32::from(b - b'0') * if i % 2 == 0 { 3 } else { 1 }).sum();
    char::from_digit((10 - sum % 10) % 10, 10)
}

/// The ISBN-10 check character of its first nine digits (`0`–`9` or `X`), `None` unless `body` is nine digits.
///
/// ```
/// use trove_domain::code::isbn10_check_digit;
/// assert_eq!(isbn10_check_digit("030640615"), Some('2'));
/// assert_eq!(isbn10_check_digit("080442957"), Some('X'));
/// ```
pub fn isbn10_check_digit(body: &str) -> Option<char> {
    if body.len() != 9 || !body.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let sum: u32 = body.bytes().zip((2..=10).rev()).map(|(b, w)| u32::from(b - b'0') * w).sum();
    match (11 - sum % 11) % 11 {
        10 => Some('X'),
        n => char::from_digit(n, 10),
    }
}

/// The UPC-A a UPC-E (8 digits: number system 0 or 1, six digits, the check digit) is short for, where it is
/// one. A scanner reading a UPC-E answers these 8 digits, which are not an EAN-8: the GTIN is this UPC-A.
///
/// ```
/// use trove_domain::code::upc_e_to_upc_a;
/// assert_eq!(upc_e_to_upc_a("01234565").as_deref(), Some("012345000065"));
/// assert_eq!(upc_e_to_upc_a("04252614").as_deref(), Some("042100005264"));
/// assert_eq!(upc_e_to_upc_a("21234565"), None);
/// ```
pub fn upc_e_to_upc_a(upc_e: &str) -> Option<String> {
    let b = upc_e.as_bytes();
    if b.len() != 8 || !b.iter().all(u8::is_ascii_digit) || !matches!(b[0], b'0' | b'1') {
        return None;
    }
    let d = &upc_e[1..7];
    let (x, last) = (&d[..5], d.as_bytes()[5]);
    let body = match last {
        b'0'..=b'2' => format!("{}{}0000{}", &d[..2], last as char, &d[2..5]),
        b'3' => format!("{}00000{}", &d[..3], &d[3..5]),
        b'4' => format!("{}00000{}", &d[..4], &d[4..5]),
        _ => format!("{x}0000{}", last as char),
    };
    Some(format!("{}{body}{}", b[0] as char, b[7] as char))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `raw` read with `kind` gives `want`: (kind, key, shown), or the error's message.
    fn check(kind: Option<CodeKind>, raw: &str, want: Result<(CodeKind, &str, &str), &str>) {
        let got = Code::parse(kind, raw);
        match want {
            Ok((k, key, shown)) => {
                let c = got.unwrap_or_else(|e| panic!("{raw:?}: {e}"));
                assert_eq!((c.kind(), c.key(), c.shown()), (k, key, shown), "{raw:?}");
            }
            Err(message) => assert_eq!(got.unwrap_err().to_string(), message, "{raw:?}"),
        }
    }

    use CodeKind::{Gtin, Isbn, Other};

    #[test]
    fn codes_are_read_as_their_kind() {
        check(None, "4006381333931", Ok((Gtin, "04006381333931", "4006381333931")));
        check(None, " 4 006381 333931 ", Ok((Gtin, "04006381333931", "4006381333931")));
        check(None, "96385074", Ok((Gtin, "00000096385074", "96385074")));
        check(None, "036000291452", Ok((Gtin, "00036000291452", "036000291452")));
        check(None, "10012345000017", Ok((Gtin, "10012345000017", "10012345000017")));
        check(Some(Gtin), "9780306406157", Ok((Gtin, "09780306406157", "9780306406157")));
        check(None, "9780306406157", Ok((Isbn, "09780306406157", "9780306406157")));
        check(None, "0-306-40615-2", Ok((Isbn, "09780306406157", "9780306406157")));
        check(None, "ISBN 0-8044-2957-x", Ok((Isbn, "09780804429573", "9780804429573")));
        check(None, "ISBN-13: 978-0-306-40615-7", Ok((Isbn, "09780306406157", "9780306406157")));
        check(Some(Isbn), "080442957X", Ok((Isbn, "09780804429573", "9780804429573")));
        check(None, "AB-12", Ok((Other, "other:ab-12", "AB-12")));
        check(None, "1234", Ok((Other, "other:1234", "1234")));
        check(Some(Other), " 4006381333932 ", Ok((Other, "other:4006381333932", "4006381333932")));
    }

    #[test]
    fn bad_codes_are_refused_with_what_is_wrong() {
        check(None, "  ", Err("a code must not be empty"));
        check(None, "4006381333932", Err("the check digit of gtin 4006381333932 is wrong: it should be 1"));
        check(None, "0-306-40615-3", Err("the check digit of isbn 0306406153 is wrong: it should be 2"));
        check(None, "9780306406158", Err("the check digit of isbn 9780306406158 is wrong: it should be 7"));
        check(Some(Gtin), "40063813339a", Err("gtin \"40063813339a\" must hold only digits"));
        check(None, "123456789", Err("gtin 123456789 has 9 digits; a GTIN has 8, 12, 13 or 14"));
        check(
            None,
            "123456789012345678901",
            Err("gtin 123456789012345678901 has 21 digits; a GTIN has 8, 12, 13 or 14"),
        );
        check(
            Some(Isbn),
            "4006381333931",
            Err("isbn 4006381333931 does not start with 978 or 979, as every ISBN-13 does"),
        );
        check(Some(Isbn), "12345", Err("isbn 12345 has 5 digits; an ISBN has 10 or 13"));
        check(Some(Other), &"x".repeat(65), Err(&format!("code \"{}…\" is longer than 64 characters", "x".repeat(40))));
        check(Some(Other), "a\u{7}b", Err("code \"a?b\" must not contain control characters"));
        assert_eq!(
            "ean".parse::<CodeKind>().unwrap_err().to_string(),
            "\"ean\" is not a kind of code (gtin, isbn or other)"
        );
    }

    #[test]
    fn the_expected_check_digit_is_named() {
        let e = Code::parse(None, "4006381333930").unwrap_err();
        assert_eq!(e, CodeError::CheckDigit { kind: Gtin, code: "4006381333930".into(), expected: '1' });
        assert_eq!(e.code(), "4006381333930");
    }

    #[test]
    fn gtin13_is_the_form_providers_know() {
        let g = |raw| Code::parse(None, raw).unwrap().gtin13();
        assert_eq!(g("96385074").as_deref(), Some("0000096385074"));
        assert_eq!(g("0-306-40615-2").as_deref(), Some("9780306406157"));
        assert_eq!(g("10012345000017"), None);
        assert_eq!(g("AB-12"), None);
    }

    #[test]
    fn upc_e_expands_to_a_gtin() {
        let upc_a = upc_e_to_upc_a("01234565").unwrap();
        assert_eq!(Code::parse(None, &upc_a).unwrap().key(), "00012345000065");
    }

    /// A sheet's text of codes read as a list: `Ok(joined)` of what was kept, or the error's message.
    fn check_list(text: &str, want: Result<&str, &str>) {
        let got = Codes::read_joined(text).map(|c| c.joined()).map_err(|e| e.to_string());
        assert_eq!(got, want.map(str::to_owned).map_err(str::to_owned), "{text:?}");
    }

    #[test]
    fn an_items_codes_are_one_per_key() {
        check_list("", Ok(""));
        check_list("gtin:036000291452;0036000291452", Ok("gtin:036000291452"));
        check_list("0-306-40615-2 ; isbn:9780306406157; AB-1", Ok("isbn:9780306406157;other:AB-1"));
        check_list("other:4006381333932;4006381333931", Ok("other:4006381333932;gtin:4006381333931"));
        check_list("gtin:4006381333931;ean:1", Err("codes[1]: \"ean\" is not a kind of code (gtin, isbn or other)"));
        check_list(
            "96385074;4006381333932",
            Err("codes[1]: the check digit of gtin 4006381333932 is wrong: it should be 1"),
        );
        let many = (0..=CODES_MAX).map(|n| format!("other:shelf {n}")).collect::<Vec<_>>().join(";");
        check_list(&many, Err("an item carries at most 20 codes, not 21"));
    }

    #[test]
    fn codes_are_stored_as_shown_and_read_back_the_same() {
        let codes = Codes::read_joined("036000291452;isbn:0-306-40615-2;other:Box 4").unwrap();
        let json = serde_json::to_string(&codes).unwrap();
        assert_eq!(
            json,
            r#"[{"kind":"gtin","value":"036000291452"},{"kind":"isbn","value":"9780306406157"},{"kind":"other","value":"Box 4"}]"#
        );
        assert_eq!(serde_json::from_str::<Codes>(&json).unwrap(), codes);
        assert!(serde_json::from_str::<Codes>(r#"[{"kind":"gtin","value":"4006381333932"}]"#).is_err());
        assert_eq!(codes.find("00036000291452").map(Code::shown), Some("036000291452"));
    }

    fn digits(n: usize) -> impl Strategy<Value = String> {
        proptest::collection::vec(0u8..10, n).prop_map(|v| v.into_iter().map(|d| char::from(b'0' + d)).collect())
    }

    proptest! {
        #[test]
        fn any_gtin_with_its_check_digit_is_read(len in prop::sample::select(vec![8usize, 12, 13, 14]),
                                                 seed in digits(13), wrong in 1u32..10) {
            let body = &seed[..len - 1];
            let check = gs1_check_digit(body).unwrap();
            let raw = format!("{body}{check}");
            let code = Code::parse(Some(Gtin), &raw).unwrap();
            prop_assert_eq!(code.key(), format!("{raw:0>14}"));
            prop_assert_eq!(code.shown(), raw.as_str());
            let bad = char::from_digit((check.to_digit(10).unwrap() + wrong) % 10, 10).unwrap();
            let refused = Code::parse(Some(Gtin), &format!("{body}{bad}")).unwrap_err();
            prop_assert_eq!(refused, CodeError::CheckDigit { kind: Gtin, code: format!("{body}{bad}"), expected: check });
        }

        #[test]
        fn isbn10_and_its_isbn13_are_one_key(body in digits(9)) {
            let isbn10 = format!("{body}{}", isbn10_check_digit(&body).unwrap());
            let isbn13 = format!("978{body}{}", gs1_check_digit(&format!("978{body}")).unwrap());
            let typed = Code::parse(None, &isbn10).unwrap();
            let scanned = Code::parse(Some(Gtin), &isbn13).unwrap();
            prop_assert_eq!(typed.kind(), Isbn);
            prop_assert_eq!(typed.key(), scanned.key());
            prop_assert_eq!(typed.shown(), isbn13.as_str());
            prop_assert_eq!(typed.isbn10(), Some(isbn10.clone()));
            prop_assert_eq!(scanned.isbn10(), Some(isbn10));
        }

        #[test]
        fn a_code_read_again_from_its_shown_form_is_the_same(raw in "\\PC{1,70}") {
            if let Ok(code) = Code::parse(None, &raw) {
                prop_assert_eq!(Code::parse(Some(code.kind()), code.shown()), Ok(code));
            }
        }
    }
}
