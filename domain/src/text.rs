//! Small text rules shared by several parts of the domain.

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
