//! Units: parsing measured values written the way people write them ("3.4Ah", "3400 mah", "12v", "1TB") and
//! normalising them to one canonical unit per dimension, so that rules compare like with like.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The canonical unit of each dimension Trove knows. Every measurement is stored in one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Unit {
    /// Electric charge (battery capacity).
    #[serde(rename = "mAh")]
    MilliampHour,
    /// Electric current.
    #[serde(rename = "mA")]
    Milliamp,
    /// Voltage.
    #[serde(rename = "V")]
    Volt,
    /// Power.
    #[serde(rename = "W")]
    Watt,
    /// Energy.
    #[serde(rename = "Wh")]
    WattHour,
    /// Length (also screen diagonals given in inches).
    #[serde(rename = "mm")]
    Millimetre,
    /// Mass.
    #[serde(rename = "g")]
    Gram,
    /// Storage and memory, decimal (1 TB = 1000 GB, as drives are sold).
    #[serde(rename = "GB")]
    Gigabyte,
    /// Frequency.
    #[serde(rename = "MHz")]
    Megahertz,
    /// Resistance.
    #[serde(rename = "ohm")]
    Ohm,
    /// Volume.
    #[serde(rename = "ml")]
    Millilitre,
    /// Temperature.
    #[serde(rename = "C")]
    Celsius,
    /// Duration.
    #[serde(rename = "s")]
    Second,
    /// Rotational speed (fans, drives).
    #[serde(rename = "rpm")]
    Rpm,
    /// A plain count (ports, cells, LEDs, pieces).
    #[serde(rename = "pcs")]
    Count,
    /// A ratio in percent (battery health).
    #[serde(rename = "%")]
    Percent,
}

impl Unit {
    /// Every canonical unit, for listings and tests.
    pub const ALL: [Unit; 16] = [
        Unit::MilliampHour,
        Unit::Milliamp,
        Unit::Volt,
        Unit::Watt,
        Unit::WattHour,
        Unit::Millimetre,
        Unit::Gram,
        Unit::Gigabyte,
        Unit::Megahertz,
        Unit::Ohm,
        Unit::Millilitre,
        Unit::Celsius,
        Unit::Second,
        Unit::Rpm,
        Unit::Count,
        Unit::Percent,
    ];

    /// The symbol written after a value ("mAh", "V").
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::MilliampHour => "mAh",
            Unit::Milliamp => "mA",
            Unit::Volt => "V",
            Unit::Watt => "W",
            Unit::WattHour => "Wh",
            Unit::Millimetre => "mm",
            Unit::Gram => "g",
            Unit::Gigabyte => "GB",
            Unit::Megahertz => "MHz",
            Unit::Ohm => "ohm",
            Unit::Millilitre => "ml",
            Unit::Celsius => "C",
            Unit::Second => "s",
            Unit::Rpm => "rpm",
            Unit::Count => "pcs",
            Unit::Percent => "%",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// A value in a canonical unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quantity {
    pub value: f64,
    pub unit: Unit,
}

impl fmt::Display for Quantity {
    /// Writes `value unit` with no needless decimals: "3400 mAh", "19.5 V".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", format_number(self.value), self.unit)
    }
}

impl Quantity {
    /// As people write it, for texts people read (the listing draft, the build pack's lines, the web page): a
    /// storage size under 1 GB in MB and from 1000 GB in TB, a mass from 1 kg in kg, a length from 1 m in m, a
    /// frequency from 1 GHz in GHz, a volume from 1 l in l; anything else as its canonical `value unit`. Values
    /// meant to be read back (an item's `fields`, CSV, the model's tool outputs) stay canonical.
    ///
    /// ```
    /// use trove_domain::units::parse;
    /// assert_eq!(parse("512MB").unwrap().for_people(), "512 MB");
    /// assert_eq!(parse("2TB").unwrap().for_people(), "2 TB");
    /// assert_eq!(parse("3.4Ah").unwrap().for_people(), "3400 mAh");
    /// ```
    pub fn for_people(&self) -> String {
        let big = self.value.abs() >= 1000.0;
        let (value, unit) = match self.unit {
            Unit::Gigabyte if self.value != 0.0 && self.value.abs() < 1.0 => (self.value * 1000.0, "MB"),
            Unit::Gigabyte if big => (self.value / 1000.0, "TB"),
            Unit::Gram if big => (self.value / 1000.0, "kg"),
            Unit::Millimetre if big => (self.value / 1000.0, "m"),
            Unit::Megahertz if big => (self.value / 1000.0, "GHz"),
            Unit::Millilitre if big => (self.value / 1000.0, "l"),
            _ => return self.to_string(),
        };
        format!("{} {unit}", format_number(round_canonical(value)))
    }
}

/// Writes a number without a trailing ".0" and without float noise ("3400", "19.5", "0.25").
pub fn format_number(value: f64) -> String {
    let mut out = String::new();
    write_number(&mut out, value);
    out
}

/// Appends a number as [`format_number`] writes it, without allocating for whole numbers (the common case of
/// long listings).
pub fn write_number(out: &mut String, value: f64) {
    use std::fmt::Write as _;
    let rounded = round_canonical(value);
    if rounded.fract() == 0.0 && rounded.abs() < 1e15 {
        let _ = write!(out, "{}", rounded as i64);
    } else {
        let start = out.len();
        let _ = write!(out, "{rounded:.6}");
        let trimmed = out[start..].trim_end_matches('0').trim_end_matches('.').len();
        out.truncate(start + trimmed);
    }
}

/// Why a value or unit could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The text holds no number.
    #[error("no number in {0:?}")]
    NoNumber(String),
    /// The unit is not one Trove knows.
    #[error("unknown unit {0:?}")]
    UnknownUnit(String),
    /// The value is not finite.
    #[error("value is not a finite number")]
    NotFinite,
}

/// Rounds away float noise (3.4 * 1000 = 3400.0000000000005) at a millionth of the canonical unit.
fn round_canonical(value: f64) -> f64 {
    let r = (value * 1e6).round() / 1e6;
    if r == 0.0 { 0.0 } else { r }
}

/// Looks a unit spelling up: returns the canonical unit and the factor that turns a value in that spelling into
/// the canonical unit. Case is ignored, except where it is the only thing telling two units apart and people do
/// write it ("M" for mega only in "MHz"/"Mb"; "m" for milli elsewhere).
///
/// ```
/// use trove_domain::units::{lookup_unit, Unit};
/// assert_eq!(lookup_unit("Ah"), Some((Unit::MilliampHour, 1000.0)));
/// assert_eq!(lookup_unit("TB"), Some((Unit::Gigabyte, 1000.0)));
/// ```
pub fn lookup_unit(spelling: &str) -> Option<(Unit, f64)> {
    let s = spelling.trim().trim_end_matches('.');
    let lower = s.to_lowercase();
    let compact: String = lower.chars().filter(|c| !c.is_whitespace()).collect();
    use Unit::*;
    let found = match compact.as_str() {
        "mah" | "milliamphour" | "milliamphours" | "milliamp-hours" | "milliampere-hours" => (MilliampHour, 1.0),
        "ah" | "amphour" | "amphours" | "amp-hours" | "ampere-hours" => (MilliampHour, 1000.0),
        "ma" | "milliamp" | "milliamps" | "milliampere" | "milliamperes" => (Milliamp, 1.0),
        "a" | "amp" | "amps" | "ampere" | "amperes" => (Milliamp, 1000.0),
        "µa" | "ua" | "microamp" | "microamps" => (Milliamp, 0.001),
        "v" | "volt" | "volts" | "vdc" | "vac" => (Volt, 1.0),
        "mv" | "millivolt" | "millivolts" => (Volt, 0.001),
        "kv" | "kilovolt" | "kilovolts" => (Volt, 1000.0),
        "w" | "watt" | "watts" => (Watt, 1.0),
        "mw" | "milliwatt" | "milliwatts" => (Watt, 0.001),
        "kw" | "kilowatt" | "kilowatts" => (Watt, 1000.0),
        "wh" | "watthour" | "watthours" | "watt-hour" | "watt-hours" => (WattHour, 1.0),
        "kwh" | "kilowatthour" | "kilowatthours" | "kilowatt-hours" => (WattHour, 1000.0),
        "mwh" | "milliwatthour" | "milliwatthours" => (WattHour, 0.001),
        "mm" | "millimetre" | "millimetres" | "millimeter" | "millimeters" => (Millimetre, 1.0),
        "cm" | "centimetre" | "centimetres" | "centimeter" | "centimeters" => (Millimetre, 10.0),
        "m" | "metre" | "metres" | "meter" | "meters" => (Millimetre, 1000.0),
        "km" | "kilometre" | "kilometres" | "kilometer" | "kilometers" => (Millimetre, 1_000_000.0),
        "in" | "inch" | "inches" | "\"" | "''" | "”" => (Millimetre, 25.4),
        "ft" | "foot" | "feet" | "'" => (Millimetre, 304.8),
        "g" | "gram" | "grams" | "gr" => (Gram, 1.0),
        "mg" | "milligram" | "milligrams" => (Gram, 0.001),
        "kg" | "kilogram" | "kilograms" | "kilo" | "kilos" => (Gram, 1000.0),
        "lb" | "lbs" | "pound" | "pounds" => (Gram, 453.59237),
        "oz" | "ounce" | "ounces" => (Gram, 28.349523125),
        "gb" | "gigabyte" | "gigabytes" | "gbyte" | "gbytes" | "g b" => (Gigabyte, 1.0),
        "mb" | "megabyte" | "megabytes" | "mbyte" | "mbytes" => (Gigabyte, 0.001),
        "kb" | "kilobyte" | "kilobytes" => (Gigabyte, 0.000_001),
        "tb" | "terabyte" | "terabytes" => (Gigabyte, 1000.0),
        "pb" | "petabyte" | "petabytes" => (Gigabyte, 1_000_000.0),
        "gib" | "gibibyte" | "gibibytes" => (Gigabyte, 1.073_741_824),
        "mib" | "mebibyte" | "mebibytes" => (Gigabyte, 0.001_048_576),
        "tib" | "tebibyte" | "tebibytes" => (Gigabyte, 1_099.511_627_776),
        "mhz" | "megahertz" => (Megahertz, 1.0),
        "ghz" | "gigahertz" => (Megahertz, 1000.0),
        "khz" | "kilohertz" => (Megahertz, 0.001),
        "hz" | "hertz" => (Megahertz, 0.000_001),
        "ohm" | "ohms" | "ω" => (Ohm, 1.0),
        "mohm" | "milliohm" | "milliohms" | "mω" => (Ohm, 0.001),
        "kohm" | "kohms" | "kiloohm" | "kiloohms" | "kω" => (Ohm, 1000.0),
        "ml" | "millilitre" | "millilitres" | "milliliter" | "milliliters" => (Millilitre, 1.0),
        "l" | "litre" | "litres" | "liter" | "liters" => (Millilitre, 1000.0),
        "c" | "°c" | "degc" | "celsius" => (Celsius, 1.0),
        "s" | "sec" | "secs" | "second" | "seconds" => (Second, 1.0),
        "ms" | "millisecond" | "milliseconds" => (Second, 0.001),
        "min" | "mins" | "minute" | "minutes" => (Second, 60.0),
        "h" | "hr" | "hrs" | "hour" | "hours" => (Second, 3600.0),
        "rpm" | "r/min" => (Rpm, 1.0),
        "pcs" | "pc" | "x" | "count" | "piece" | "pieces" | "ports" | "port" | "cells" | "cell" | "leds" | "led"
        | "units" | "unit" | "" => (Count, 1.0),
        "%" | "percent" | "pct" => (Percent, 1.0),
        _ => return None,
    };
    // Mega-watts and milli-watts share a spelling once case is folded; only milli is plausible for gear, so the
    // lower-case reading stands. "MA" (mega-amps) is likewise read as milliamps.
    Some(found)
}

/// Converts `value` written in `unit` (any spelling [`lookup_unit`] knows) to the canonical unit.
///
/// ```
/// use trove_domain::units::{normalise, Unit};
/// let q = normalise(3.4, "Ah").unwrap();
/// assert_eq!((q.value, q.unit), (3400.0, Unit::MilliampHour));
/// ```
///
/// # Errors
/// [`UnitError::UnknownUnit`] for a spelling it does not know, [`UnitError::NotFinite`] for NaN or infinity.
pub fn normalise(value: f64, unit: &str) -> Result<Quantity, UnitError> {
    if !value.is_finite() {
        return Err(UnitError::NotFinite);
    }
    let (unit_c, factor) = lookup_unit(unit).ok_or_else(|| UnitError::UnknownUnit(unit.trim().to_owned()))?;
    let value = round_canonical(value * factor);
    if !value.is_finite() {
        return Err(UnitError::NotFinite);
    }
    Ok(Quantity { value, unit: unit_c })
}

/// Reads a measured value as people write it: a number, optional space, a unit. A comma between digit groups of
/// three is a thousands separator ("1,000 mAh"); otherwise a single comma is a decimal mark ("3,7 V").
///
/// ```
/// use trove_domain::units::{parse, Unit};
/// assert_eq!(parse("3400 mah").unwrap().value, 3400.0);
/// assert_eq!(parse("12v").unwrap().unit, Unit::Volt);
/// assert_eq!(parse("1TB").unwrap().value, 1000.0);
/// ```
///
/// # Errors
/// [`UnitError::NoNumber`] when the text does not start with a number, [`UnitError::UnknownUnit`] when the rest
/// is not a unit it knows.
pub fn parse(text: &str) -> Result<Quantity, UnitError> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == ','
                || ((c == '-' || c == '+') && i == 0)
                || ((c == 'e' || c == 'E') && is_exponent(t, i)))
        })
        .map_or(t.len(), |(i, _)| i);
    let (number, rest) = t.split_at(end);
    let value = parse_number(number).ok_or_else(|| UnitError::NoNumber(text.to_owned()))?;
    normalise(value, rest)
}

/// True when the `e` at byte `i` of `t` starts an exponent ("1e3"), not a unit ("3 e").
fn is_exponent(t: &str, i: usize) -> bool {
    let before = t[..i].chars().last().is_some_and(|c| c.is_ascii_digit());
    let after = t[i + 1..].chars().next().is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '+');
    before && after
}

fn parse_number(raw: &str) -> Option<f64> {
    let raw = raw.trim_end_matches([',', '.']);
    if raw.is_empty() || !raw.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let normalised = if raw.contains(',') {
        let groups: Vec<&str> = raw.split(',').collect();
        let thousands = groups.len() > 1
            && groups[1..].iter().enumerate().all(|(i, g)| {
                let digits = g.split('.').next().unwrap_or(g);
                digits.len() == 3
                    && digits.chars().all(|c| c.is_ascii_digit())
                    && (i + 2 == groups.len() || !g.contains('.'))
            })
            && !groups[0].is_empty();
        if thousands {
            raw.replace(',', "")
        } else if groups.len() == 2 && !raw.contains('.') {
            raw.replace(',', ".")
        } else {
            return None;
        }
    } else {
        raw.to_owned()
    };
    normalised.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(text: &str, expected: Option<(f64, Unit)>) {
        let got = parse(text).ok().map(|q| (q.value, q.unit));
        assert_eq!(got, expected, "parse({text:?})");
    }

    #[test]
    fn common_spellings() {
        use Unit::*;
        check("3.4Ah", Some((3400.0, MilliampHour)));
        check("3400 mah", Some((3400.0, MilliampHour)));
        check("3400mAh", Some((3400.0, MilliampHour)));
        check("10Ah", Some((10000.0, MilliampHour)));
        check("5 V", Some((5.0, Volt)));
        check("12v", Some((12.0, Volt)));
        check("19.5V", Some((19.5, Volt)));
        check("3,7 V", Some((3.7, Volt)));
        check("65 W", Some((65.0, Watt)));
        check("1TB", Some((1000.0, Gigabyte)));
        check("500 GB", Some((500.0, Gigabyte)));
        check("512MB", Some((0.512, Gigabyte)));
        check("2.4 GHz", Some((2400.0, Megahertz)));
        check("1,000 mAh", Some((1000.0, MilliampHour)));
        check("1,500,000 mAh", Some((1_500_000.0, MilliampHour)));
        check("2A", Some((2000.0, Milliamp)));
        check("500 mA", Some((500.0, Milliamp)));
        check("27\"", Some((685.8, Millimetre)));
        check("27 in", Some((685.8, Millimetre)));
        check("1.2 kg", Some((1200.0, Gram)));
        check("99.9 Wh", Some((99.9, WattHour)));
        check("4 pcs", Some((4.0, Count)));
        check("4", Some((4.0, Count)));
        check("85%", Some((85.0, Percent)));
        check("-20 C", Some((-20.0, Celsius)));
        check("1e3 mAh", Some((1000.0, MilliampHour)));
        check("", None);
        check("volts", None);
        check("12 parsecs", None);
        check("1,2,3 V", None);
    }

    #[test]
    fn display_is_value_space_unit() {
        assert_eq!(parse("3.4Ah").unwrap().to_string(), "3400 mAh");
        assert_eq!(parse("19.5V").unwrap().to_string(), "19.5 V");
        assert_eq!(parse("512MB").unwrap().to_string(), "0.512 GB");
        for (text, people) in [
            ("512MB", "512 MB"),
            ("0.25 TB", "250 GB"),
            ("1500 GB", "1.5 TB"),
            ("1.2 kg", "1.2 kg"),
            ("850 g", "850 g"),
            ("1650 mm", "1.65 m"),
            ("2.4 GHz", "2.4 GHz"),
            ("500 MHz", "500 MHz"),
            ("1500 ml", "1.5 l"),
            ("10 Ah", "10000 mAh"),
            ("0 GB", "0 GB"),
        ] {
            assert_eq!(parse(text).unwrap().for_people(), people, "{text}");
        }
    }

    #[test]
    fn every_canonical_symbol_reads_back_as_itself() {
        for unit in Unit::ALL {
            let q = normalise(7.0, unit.symbol()).unwrap();
            assert_eq!((q.value, q.unit), (7.0, unit), "{unit:?}");
        }
    }

    proptest! {
        /// Whatever the spacing and case, a canonical value written out reads back to itself.
        #[test]
        fn written_value_reads_back(value in 0u32..10_000_000, idx in 0usize..16, space in any::<bool>(), upper in any::<bool>()) {
            let unit = Unit::ALL[idx];
            let mut sym = unit.symbol().to_owned();
            if upper && unit != Unit::Percent { sym = sym.to_uppercase(); }
            let text = format!("{value}{}{sym}", if space { " " } else { "" });
            let q = parse(&text).unwrap();
            prop_assert_eq!(q.unit, unit);
            prop_assert_eq!(q.value, f64::from(value));
        }

        /// Scaling units are consistent: x Ah is always 1000x mAh, x TB is 1000x GB, x kg is 1000x g.
        #[test]
        fn scaled_spellings_agree(value in 0.0f64..100_000.0) {
            for (big, small) in [("Ah", "mAh"), ("TB", "GB"), ("kg", "g"), ("A", "mA"), ("m", "mm")] {
                let a = normalise(value, big).unwrap();
                let b = normalise(value * 1000.0, small).unwrap();
                prop_assert_eq!(a.unit, b.unit);
                prop_assert!((a.value - b.value).abs() <= 1e-6 * a.value.abs().max(1.0));
            }
        }

        /// The parser never panics, whatever it is given.
        #[test]
        fn parse_never_panics(text in ".{0,24}") {
            let _ = parse(&text);
        }

        /// Formatting then parsing a quantity gives the same quantity.
        #[test]
        fn display_round_trips(value in -1_000_000.0f64..1_000_000.0, idx in 0usize..16) {
            let q = normalise(value, Unit::ALL[idx].symbol()).unwrap();
            let back = parse(&q.to_string()).unwrap();
            prop_assert_eq!(back.unit, q.unit);
            prop_assert!((back.value - q.value).abs() < 1e-5);
        }

        /// What people read says the same quantity: it parses back to it (to the precision written).
        #[test]
        fn the_form_for_people_reads_back(value in -1_000_000.0f64..1_000_000.0, idx in 0usize..16) {
            let q = normalise(value, Unit::ALL[idx].symbol()).unwrap();
            let back = parse(&q.for_people()).unwrap();
            prop_assert_eq!(back.unit, q.unit);
            prop_assert!((back.value - q.value).abs() <= 1e-3 * q.value.abs().max(1.0), "{} -> {}", q, q.for_people());
        }
    }
}
