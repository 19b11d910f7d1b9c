//! Money: integer minor units with a currency for prices, integer micro-USD for spend. Never `f64`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An ISO 4217 currency code: three upper-case ASCII letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Currency([u8; 3]);

/// Why a money value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error("currency {0:?} is not a three-letter ISO 4217 code")]
    BadCurrency(String),
    #[error("amount {0:?} is not a non-negative decimal number")]
    BadAmount(String),
    #[error("amount {0:?} has more than {1} decimals")]
    TooPrecise(String, u32),
    #[error("amount is too large")]
    TooLarge,
}

impl Currency {
    /// Reads a currency code, upper-casing it ("gbp" is GBP).
    ///
    /// # Errors
    /// [`MoneyError::BadCurrency`] unless it is three ASCII letters.
    pub fn new(code: &str) -> Result<Self, MoneyError> {
        let t = code.trim();
        let b = t.as_bytes();
        if b.len() == 3 && b.iter().all(u8::is_ascii_alphabetic) {
            Ok(Self([b[0].to_ascii_uppercase(), b[1].to_ascii_uppercase(), b[2].to_ascii_uppercase()]))
        } else {
            Err(MoneyError::BadCurrency(code.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }

    /// Minor units in one major unit: 100 for most currencies, 1 for those without (JPY, KRW, ...), 1000 for
    /// the three-decimal ones (BHD, KWD, ...).
    pub fn minor_per_major(&self) -> i64 {
        match self.as_str() {
            "JPY" | "KRW" | "ISK" | "CLP" | "VND" | "HUF" | "UGX" | "PYG" | "XAF" | "XOF" => 1,
            "BHD" | "KWD" | "OMR" | "JOD" | "TND" | "IQD" | "LYD" => 1000,
            _ => 100,
        }
    }

    fn decimals(&self) -> u32 {
        match self.minor_per_major() {
            1 => 0,
            1000 => 3,
            _ => 2,
        }
    }
}

impl TryFrom<String> for Currency {
    type Error = MoneyError;
    fn try_from(s: String) -> Result<Self, MoneyError> {
        Self::new(&s)
    }
}

impl From<Currency> for String {
    fn from(c: Currency) -> String {
        c.as_str().to_owned()
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A price: integer minor units (pence, cents) of a currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Money {
    pub minor: i64,
    pub currency: Currency,
}

impl Money {
    /// Converts a decimal amount in major units (as a model or a person writes it: 45, 45.5, 45.99) to minor
    /// units, rounding half away from zero. A non-finite or negative amount is refused.
    ///
    /// ```
    /// use trove_domain::money::{Currency, Money};
    /// let gbp = Currency::new("GBP").unwrap();
    /// assert_eq!(Money::from_major(45.99, gbp).unwrap().minor, 4599);
    /// ```
    ///
    /// # Errors
    /// [`MoneyError::BadAmount`] for a negative or non-finite amount, [`MoneyError::TooLarge`] past 10^12.
    pub fn from_major(amount: f64, currency: Currency) -> Result<Self, MoneyError> {
        if !amount.is_finite() || amount < 0.0 {
            return Err(MoneyError::BadAmount(amount.to_string()));
        }
        if amount > 1e12 {
            return Err(MoneyError::TooLarge);
        }
        let minor = (amount * currency.minor_per_major() as f64).round() as i64;
        Ok(Self { minor, currency })
    }
}

impl Money {
    /// The amount in major units, without the currency: "45.99", "4500" (JPY), "-3.50".
    ///
    /// ```
    /// use trove_domain::money::{Currency, Money};
    /// assert_eq!(Money { minor: -350, currency: Currency::new("EUR").unwrap() }.amount(), "-3.50");
    /// assert_eq!(Money { minor: 4500, currency: Currency::new("JPY").unwrap() }.amount(), "4500");
    /// ```
    pub fn amount(&self) -> String {
        let per = self.currency.minor_per_major();
        let d = self.currency.decimals() as usize;
        if d == 0 {
            self.minor.to_string()
        } else {
            let sign = if self.minor < 0 { "-" } else { "" };
            let abs = self.minor.unsigned_abs();
            format!("{sign}{}.{:0d$}", abs / per as u64, abs % per as u64)
        }
    }
}

impl fmt::Display for Money {
    /// "GBP 45.99", "JPY 4500".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.currency, self.amount())
    }
}

/// An amount of US dollars in integer millionths: how spend is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MicroUsd(pub i64);

impl MicroUsd {
    /// Reads a decimal USD amount ("1.25", "0.0025", "40") exactly, without going through `f64`.
    ///
    /// ```
    /// use trove_domain::money::MicroUsd;
    /// assert_eq!(MicroUsd::parse_usd("1.25").unwrap(), MicroUsd(1_250_000));
    /// assert_eq!(MicroUsd::parse_usd("0.0025").unwrap(), MicroUsd(2_500));
    /// ```
    ///
    /// # Errors
    /// [`MoneyError::BadAmount`] for anything but a non-negative decimal, [`MoneyError::TooPrecise`] past six
    /// decimals, [`MoneyError::TooLarge`] when it does not fit.
    pub fn parse_usd(raw: &str) -> Result<Self, MoneyError> {
        let t = raw.trim();
        let bad = || MoneyError::BadAmount(raw.to_owned());
        let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
        if (whole.is_empty() && frac.is_empty())
            || !whole.chars().all(|c| c.is_ascii_digit())
            || !frac.chars().all(|c| c.is_ascii_digit())
        {
            return Err(bad());
        }
        if frac.len() > 6 {
            return Err(MoneyError::TooPrecise(raw.to_owned(), 6));
        }
        let whole: i64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| MoneyError::TooLarge)? };
        let frac_micro: i64 = format!("{frac:0<6}").parse().map_err(|_| bad())?;
        whole.checked_mul(1_000_000).and_then(|w| w.checked_add(frac_micro)).map(Self).ok_or(MoneyError::TooLarge)
    }

    /// As dollars with six decimals, trailing zeros trimmed to two ("1.25", "0.0025").
    pub fn to_usd_string(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let mut frac = format!("{:06}", abs % 1_000_000);
        while frac.len() > 2 && frac.ends_with('0') {
            frac.pop();
        }
        format!("{sign}{}.{frac}", abs / 1_000_000)
    }
}

impl std::ops::Add for MicroUsd {
    type Output = MicroUsd;
    fn add(self, rhs: MicroUsd) -> MicroUsd {
        MicroUsd(self.0.saturating_add(rhs.0))
    }
}

impl std::iter::Sum for MicroUsd {
    fn sum<I: Iterator<Item = MicroUsd>>(iter: I) -> MicroUsd {
        iter.fold(MicroUsd(0), |a, b| a + b)
    }
}

impl fmt::Display for MicroUsd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "USD {}", self.to_usd_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn currencies() {
        assert_eq!(Currency::new(" gbp ").unwrap().as_str(), "GBP");
        assert!(Currency::new("GB").is_err());
        assert!(Currency::new("G8P").is_err());
        assert_eq!(Currency::new("JPY").unwrap().minor_per_major(), 1);
    }

    #[test]
    fn money_display_and_rounding() {
        let gbp = Currency::new("GBP").unwrap();
        assert_eq!(Money::from_major(45.0, gbp).unwrap().to_string(), "GBP 45.00");
        assert_eq!(Money::from_major(0.105, gbp).unwrap().minor, 11);
        assert_eq!(Money::from_major(4500.0, Currency::new("JPY").unwrap()).unwrap().to_string(), "JPY 4500");
        assert_eq!(Money::from_major(1.5, Currency::new("KWD").unwrap()).unwrap().to_string(), "KWD 1.500");
        assert!(Money::from_major(-1.0, gbp).is_err());
        assert!(Money::from_major(f64::NAN, gbp).is_err());
    }

    #[test]
    fn usd_parsing() {
        for (raw, want) in [
            ("1.25", Ok(1_250_000)),
            ("4.25", Ok(4_250_000)),
            ("0.15", Ok(150_000)),
            ("0.0025", Ok(2_500)),
            ("40", Ok(40_000_000)),
            (".5", Ok(500_000)),
            ("1.", Ok(1_000_000)),
            ("", Err(())),
            ("-1", Err(())),
            ("1.2.3", Err(())),
            ("1.0000001", Err(())),
            ("abc", Err(())),
        ] {
            assert_eq!(MicroUsd::parse_usd(raw).map(|m| m.0).map_err(|_| ()), want, "{raw:?}");
        }
        assert_eq!(MicroUsd(1_250_000).to_usd_string(), "1.25");
        assert_eq!(MicroUsd(2_500).to_usd_string(), "0.0025");
        assert_eq!(MicroUsd(7).to_usd_string(), "0.000007");
    }

    proptest! {
        #[test]
        fn usd_round_trips(micro in 0i64..1_000_000_000_000) {
            let m = MicroUsd(micro);
            prop_assert_eq!(MicroUsd::parse_usd(&m.to_usd_string()).unwrap(), m);
        }
    }
}
