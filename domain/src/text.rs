//! Small text rules shared by several parts of the domain, among them **the** check of every text a client
//! gives: [`check`], which refuses control characters. Every constructor of a value made of text calls it, so no
//! route, import or backend can store a NUL byte or an escape sequence.

use std::fmt;

/// Whether a text may hold several lines: notes, descriptions and readings may; names, types and labels may not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// One line: no control character at all, not even a tab.
    One,
    /// Several lines: tab, line feed and a carriage return before a line feed are allowed, nothing else.
    Many,
}

/// A text that holds a control character it may not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} must not contain control characters (found {} at character {at})", Code(*.found))]
pub struct ControlCharacter {
    /// The field the text was given as ("name", "faults[0].text").
    pub field: String,
    /// The first character refused.
    pub found: char,
    /// Its position, counted in characters from 1.
    pub at: usize,
}

/// A character written as its code point (`U+0000`).
struct Code(char);

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "U+{:04X}", u32::from(self.0))
    }
}

/// **The** text check: `raw` holds no control character (Unicode's `Cc`: U+0000 to U+001F, U+007F to U+009F)
/// but, for a text of [`Lines::Many`], tab, line feed and the carriage return of a CRLF. The error names
/// `field`.
///
/// ```
/// use trove_domain::text::{Lines, check};
/// assert!(check("note", "two\nlines\twith a tab", Lines::Many).is_ok());
/// let e = check("name", "a\u{0}b", Lines::One).unwrap_err();
/// assert_eq!(e.to_string(), "name must not contain control characters (found U+0000 at character 2)");
/// ```
///
/// # Errors
/// [`ControlCharacter`] naming the field, the first character refused and where it is.
pub fn check(field: &str, raw: &str, lines: Lines) -> Result<(), ControlCharacter> {
    let mut chars = raw.chars().enumerate().peekable();
    while let Some((n, c)) = chars.next() {
        if !allowed(c, chars.peek().map(|(_, next)| *next), lines) {
            return Err(ControlCharacter { field: field.to_owned(), found: c, at: n + 1 });
        }
    }
    Ok(())
}

/// Whether `c`, followed by `next`, may stand in a text of `lines`.
fn allowed(c: char, next: Option<char>, lines: Lines) -> bool {
    !c.is_control() || (lines == Lines::Many && (c == '\t' || c == '\n' || (c == '\r' && next == Some('\n'))))
}

/// `raw` with every control character [`check`] would refuse made a space: for text a model wrote, which is
/// cleaned, never refused.
///
/// ```
/// use trove_domain::text::{Lines, clean};
/// assert_eq!(clean("a\u{0}b\nc", Lines::One), "a b c");
/// assert_eq!(clean("a\u{0}b\nc", Lines::Many), "a b\nc");
/// ```
pub fn clean(raw: &str, lines: Lines) -> String {
    if check("", raw, lines).is_ok() {
        return raw.to_owned();
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(if allowed(c, chars.peek().copied(), lines) { c } else { ' ' });
    }
    out
}

/// Trims `raw` and cuts it to at most `max` characters (not bytes), on a character boundary.
///
/// ```
/// assert_eq!(trove_domain::text::clip("  héllo  ", 3), "hél");
/// ```
pub fn clip(raw: &str, max: usize) -> String {
    raw.trim().chars().take(max).collect()
}

/// True when `s` is a lower_snake_case word: ASCII lower-case letters, digits and single underscores, starting
/// with a letter.
///
/// ```
/// assert!(trove_domain::text::is_snake_case("power_supply"));
/// assert!(!trove_domain::text::is_snake_case("Power Supply"));
/// ```
pub fn is_snake_case(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !s.contains("__")
        && !s.ends_with('_')
}

/// Turns free text ("Power Supply", "power-supply") into a lower_snake_case word, or `None` when nothing of it
/// is left.
///
/// ```
/// assert_eq!(trove_domain::text::to_snake_case(" Power-Supply 12V ").as_deref(), Some("power_supply_12v"));
/// ```
pub fn to_snake_case(raw: &str) -> Option<String> {
    let mut out = String::new();
    for c in raw.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    while out.starts_with(|c: char| c.is_ascii_digit()) {
        out.remove(0);
        while out.starts_with('_') {
            out.remove(0);
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check_one(raw: &str, lines: Lines, want: Result<(), (char, usize)>) {
        let got = check("note", raw, lines).map_err(|e| (e.found, e.at));
        assert_eq!(got, want, "{raw:?} {lines:?}");
    }

    #[test]
    fn control_characters_are_refused_but_line_breaks_in_many_lines() {
        for (raw, lines, want) in [
            ("plain text, é and 🔋", Lines::One, Ok(())),
            ("", Lines::One, Ok(())),
            ("a\u{0}", Lines::One, Err(('\u{0}', 2))),
            ("a\u{0}", Lines::Many, Err(('\u{0}', 2))),
            ("\u{1b}[31mred", Lines::Many, Err(('\u{1b}', 1))),
            ("del\u{7f}", Lines::One, Err(('\u{7f}', 4))),
            ("c1\u{85}", Lines::Many, Err(('\u{85}', 3))),
            ("tab\there", Lines::One, Err(('\t', 4))),
            ("tab\there", Lines::Many, Ok(())),
            ("line\nbreak", Lines::One, Err(('\n', 5))),
            ("line\nbreak", Lines::Many, Ok(())),
            ("windows\r\nline", Lines::Many, Ok(())),
            ("lone\rreturn", Lines::Many, Err(('\r', 5))),
            ("ends\r", Lines::Many, Err(('\r', 5))),
        ] {
            check_one(raw, lines, want);
        }
        let e = check("faults[0].text", "x\u{7}", Lines::One).unwrap_err();
        assert_eq!(e.to_string(), "faults[0].text must not contain control characters (found U+0007 at character 2)");
    }

    proptest! {
        /// A text is refused exactly when it holds a control character its kind does not allow.
        #[test]
        fn check_refuses_exactly_the_control_characters(raw in "\\PC*", control in 0u32..0x20) {
            prop_assert!(check("f", &raw, Lines::One).is_ok());
            let bad = char::from_u32(control).unwrap();
            let with = format!("{raw}{bad}x");
            prop_assert!(check("f", &with, Lines::One).is_err());
            let many_ok = bad == '\t' || bad == '\n';
            prop_assert_eq!(check("f", &with, Lines::Many).is_ok(), many_ok);
        }
    }

    #[test]
    fn snake_case_rules() {
        for (s, ok) in [
            ("laptop", true),
            ("single_board_computer", true),
            ("led_strip2", true),
            ("", false),
            ("2led", false),
            ("a__b", false),
            ("a_", false),
            ("Laptop", false),
            ("lap top", false),
        ] {
            assert_eq!(is_snake_case(s), ok, "{s:?}");
        }
    }

    #[test]
    fn snake_case_from_free_text() {
        for (raw, want) in [
            ("Hard Drive", Some("hard_drive")),
            ("  --  ", None),
            ("18650 cell", Some("cell")),
            ("USB-C  cable", Some("usb_c_cable")),
        ] {
            assert_eq!(to_snake_case(raw).as_deref(), want, "{raw:?}");
        }
    }
}
