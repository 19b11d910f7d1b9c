//! Labels: what a printed label says about an item or a place, and how a scanned code is read back. A label's QR
//! code holds a link a phone can open (`TROVE_PUBLIC_URL` + `/#/items/42`); scanning reads such a link back
//! into the object it names, and nothing else.

use crate::ids::{ItemId, PlaceId};
use std::fmt;

/// What a label is stuck on: an item or a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LabelTarget {
    Item(ItemId),
    Place(PlaceId),
}

impl LabelTarget {
    /// The short code printed under the name, for people reading the label: `I-42`, `P-7`.
    ///
    /// ```
    /// use trove_domain::label::LabelTarget;
    /// use trove_domain::{ItemId, PlaceId};
    /// assert_eq!(LabelTarget::Item(ItemId(42)).short_code(), "I-42");
    /// assert_eq!(LabelTarget::Place(PlaceId(7)).short_code(), "P-7");
    /// ```
    pub fn short_code(self) -> String {
        match self {
            Self::Item(id) => format!("I-{}", id.0),
            Self::Place(id) => format!("P-{}", id.0),
        }
    }

    /// The route of the web page that shows it: `/#/items/42`, `/#/places/7`.
    fn route(self) -> String {
        match self {
            Self::Item(id) => format!("/#/items/{}", id.0),
            Self::Place(id) => format!("/#/places/{}", id.0),
        }
    }
}

/// Why a public URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PublicUrlError {
    #[error("{0:?} is not an http:// or https:// URL")]
    Scheme(String),
    #[error("{0:?} has no host")]
    NoHost(String),
    #[error("{0:?} must not hold white space, control characters, a query or a fragment")]
    Character(String),
}

/// Where people reach Trove from their phones (`TROVE_PUBLIC_URL`): an `http://` or `https://` URL with a host,
/// maybe a path, no query or fragment; kept without a trailing `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl(String);

impl PublicUrl {
    /// ```
    /// use trove_domain::label::PublicUrl;
    /// assert_eq!(PublicUrl::new(" https://trove.example/ ").unwrap().as_str(), "https://trove.example");
    /// assert!(PublicUrl::new("ftp://trove.example").is_err());
    /// ```
    ///
    /// # Errors
    /// The [`PublicUrlError`] naming what is wrong.
    pub fn new(raw: &str) -> Result<Self, PublicUrlError> {
        let t = raw.trim();
        let lower = t.to_ascii_lowercase();
        let rest = if lower.starts_with("http://") {
            &t[7..]
        } else if lower.starts_with("https://") {
            &t[8..]
        } else {
            return Err(PublicUrlError::Scheme(t.to_owned()));
        };
        if t.chars().any(|c| c.is_whitespace() || c.is_control() || c == '?' || c == '#') {
            return Err(PublicUrlError::Character(t.to_owned()));
        }
        let host = rest.split('/').next().unwrap_or_default();
        if host.is_empty() || host.starts_with(':') || host.contains('@') {
            return Err(PublicUrlError::NoHost(t.to_owned()));
        }
        Ok(Self(t.trim_end_matches('/').to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The link a label's QR code holds.
    ///
    /// ```
    /// use trove_domain::label::{LabelTarget, PublicUrl};
    /// use trove_domain::ItemId;
    /// let url = PublicUrl::new("http://192.168.1.20:8080").unwrap();
    /// assert_eq!(url.link(LabelTarget::Item(ItemId(42))), "http://192.168.1.20:8080/#/items/42");
    /// ```
    pub fn link(&self, target: LabelTarget) -> String {
        format!("{}{}", self.0, target.route())
    }

    /// Reads a scanned text back into the object it links to: only a link of ours (this URL, ignoring the case
    /// of the scheme and host, then `/#/items/ID` or `/#/places/ID`) names one; anything else is `None`.
    ///
    /// ```
    /// use trove_domain::label::{LabelTarget, PublicUrl};
    /// use trove_domain::PlaceId;
    /// let url = PublicUrl::new("https://trove.example").unwrap();
    /// assert_eq!(url.read("https://trove.example/#/places/7"), Some(LabelTarget::Place(PlaceId(7))));
    /// assert_eq!(url.read("https://elsewhere.example/#/places/7"), None);
    /// ```
    pub fn read(&self, scanned: &str) -> Option<LabelTarget> {
        let scanned = scanned.trim();
        let head = scanned.get(..self.0.len())?;
        if !head.eq_ignore_ascii_case(&self.0) {
            return None;
        }
        let rest = &scanned[self.0.len()..];
        let (kind, id) = rest.strip_prefix("/#/")?.split_once('/')?;
        if id.is_empty() || id.len() > 18 || !id.bytes().all(|b| b.is_ascii_digit()) || id.starts_with('0') {
            return None;
        }
        let id: i64 = id.parse().ok()?;
        match kind {
            "items" => Some(LabelTarget::Item(ItemId(id))),
            "places" => Some(LabelTarget::Place(PlaceId(id))),
            _ => None,
        }
    }
}

impl fmt::Display for PublicUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A name set in at most `lines` lines of at most `width` characters: broken between words where it can be
/// (inside a word too long for a line), the last line shortened with "…" when the name does not fit.
///
/// ```
/// use trove_domain::label::fit;
/// assert_eq!(fit("Raspberry Pi 4 Model B 8GB", 12, 2), ["Raspberry Pi", "4 Model B…"]);
/// assert_eq!(fit("Pi", 12, 2), ["Pi"]);
/// ```
pub fn fit(name: &str, width: usize, lines: usize) -> Vec<String> {
    let width = width.max(2);
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in name.split_whitespace().flat_map(|w| chunks(w, width)) {
        let len = line.chars().count();
        if len == 0 {
            line = word;
        } else if len + 1 + word.chars().count() <= width {
            line.push(' ');
            line.push_str(&word);
        } else {
            out.push(std::mem::replace(&mut line, word));
        }
    }
    if !line.is_empty() {
        out.push(line);
    }
    if out.len() > lines {
        out.truncate(lines);
        if let Some(last) = out.last_mut() {
            let kept: String = last.chars().take(width - 1).collect();
            *last = format!("{}…", kept.trim_end());
        }
    }
    out
}

/// The places a place is in (`names`, outermost first) set in at most `lines` lines of at most `width` characters,
/// joined with " / " and ending with " /": when they do not fit, the outermost go first, marked by a leading "…",
/// so the nearest places (which tell the many "Box 1"s apart) are kept.
///
/// ```
/// use trove_domain::label::fit_path;
/// assert_eq!(fit_path(&["Garage", "Shelf 2"], 20, 1), ["Garage / Shelf 2 /"]);
/// assert_eq!(fit_path(&["House", "Garage", "Shelf 2"], 14, 1), ["… / Shelf 2 /"]);
/// assert!(fit_path(&[], 20, 2).is_empty());
/// ```
pub fn fit_path(names: &[&str], width: usize, lines: usize) -> Vec<String> {
    for dropped in 0..names.len() {
        let kept = names[dropped..].join(" / ");
        let text = if dropped == 0 { format!("{kept} /") } else { format!("… / {kept} /") };
        let set = fit(&text, width, lines + 1);
        if set.len() <= lines {
            return set;
        }
    }
    names.last().map(|last| fit(&format!("… / {last} /"), width, lines)).unwrap_or_default()
}

/// A word cut into pieces of at most `width` characters.
fn chunks(word: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    chars.chunks(width).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_urls_are_checked() {
        let check = |raw: &str, want: Result<&str, &str>| {
            assert_eq!(
                PublicUrl::new(raw).map(|u| u.to_string()).map_err(|e| e.to_string()),
                want.map(str::to_owned).map_err(str::to_owned),
                "{raw:?}"
            );
        };
        check("http://127.0.0.1:8080", Ok("http://127.0.0.1:8080"));
        check("HTTPS://Trove.example/base/", Ok("HTTPS://Trove.example/base"));
        check("trove.example", Err("\"trove.example\" is not an http:// or https:// URL"));
        check("ftp://x", Err("\"ftp://x\" is not an http:// or https:// URL"));
        check("http://", Err("\"http://\" has no host"));
        check("http:///path", Err("\"http:///path\" has no host"));
        check("http://a b", Err("\"http://a b\" must not hold white space, control characters, a query or a fragment"));
        check(
            "http://x/?q",
            Err("\"http://x/?q\" must not hold white space, control characters, a query or a fragment"),
        );
        check(
            "http://x/#/",
            Err("\"http://x/#/\" must not hold white space, control characters, a query or a fragment"),
        );
    }

    #[test]
    fn only_our_links_read_back() {
        let url = PublicUrl::new("http://trove.local:8080/home").unwrap();
        for target in [LabelTarget::Item(ItemId(1)), LabelTarget::Place(PlaceId(987_654))] {
            assert_eq!(url.read(&url.link(target)), Some(target));
        }
        let check = |scanned: &str, want: Option<LabelTarget>| assert_eq!(url.read(scanned), want, "{scanned:?}");
        check(" HTTP://TROVE.local:8080/home/#/items/5\n", Some(LabelTarget::Item(ItemId(5))));
        check("http://trove.local:8080/#/items/5", None);
        check("http://other.local:8080/home/#/items/5", None);
        check("http://trove.local:8080/home/#/projects/5", None);
        check("http://trove.local:8080/home/#/items/", None);
        check("http://trove.local:8080/home/#/items/05", None);
        check("http://trove.local:8080/home/#/items/-5", None);
        check("http://trove.local:8080/home/#/items/5x", None);
        check("http://trove.local:8080/home/#/items/99999999999999999999", None);
        check("http://trove", None);
        check("", None);
    }

    #[test]
    fn names_fit_their_lines() {
        let check = |name: &str, width, lines, want: &[&str]| assert_eq!(fit(name, width, lines), want, "{name:?}");
        check("Pi", 10, 2, &["Pi"]);
        check("USB-C charger 65 W", 10, 2, &["USB-C", "charger 6…"]);
        check("USB-C charger", 10, 2, &["USB-C", "charger"]);
        check("Supercalifragilistic", 8, 2, &["Supercal", "ifragil…"]);
        check("a b c d e f g h", 3, 2, &["a b", "c…"]);
        check("one two", 20, 1, &["one two"]);
        check("one two three", 7, 1, &["one tw…"]);
        check("Über-Regal Fach 3", 10, 3, &["Über-Regal", "Fach 3"]);
        check("   ", 10, 2, &[]);
        for (name, width, lines) in [("Raspberry Pi 4 Model B 8GB with case", 9, 2), ("ééééééééééééé", 4, 3)]
        {
            let got = fit(name, width, lines);
            assert!(got.len() <= lines && got.iter().all(|l| l.chars().count() <= width), "{got:?}");
        }
    }
}
