//! Receipts: what the model read from a photo or a PDF of a receipt or an order confirmation, and the rules that
//! judge it. The reading is model text: every value is checked here. What does not add up (lines that do not sum
//! to the total, a date in the future, a currency that is no ISO code) is said, never silently corrected; a line
//! the rules cannot read is dropped with a note.

use crate::item::Purchase;
use crate::money::{Currency, Money};
use crate::text::{Lines, clean, clip};
use chrono::NaiveDate;

/// Most lines kept from one receipt.
pub const LINES_MAX: usize = 100;
/// Longest line description kept, in characters.
pub const DESCRIPTION_MAX: usize = 200;
/// Largest quantity of one line.
pub const QUANTITY_MAX: u32 = 10_000;

/// A receipt as the model answered it; nothing here is validated yet.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReceipt {
    pub vendor: Option<String>,
    /// As printed, read as `YYYY-MM-DD`.
    pub date: Option<String>,
    pub currency: Option<String>,
    pub lines: Vec<ModelReceiptLine>,
    /// The total paid, in major units.
    pub total: Option<f64>,
}

/// One line as the model read it: amounts in major units.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReceiptLine {
    pub description: String,
    pub quantity: f64,
    /// The price of the whole line (quantity times the unit price).
    pub price: f64,
}

/// One line after the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptLine {
    pub description: String,
    pub quantity: u32,
    /// The whole line's price, `None` without a known currency.
    pub price: Option<Money>,
}

impl ReceiptLine {
    /// What one unit cost: the line's price over its quantity, rounded to the minor unit.
    pub fn each(&self) -> Option<Money> {
        let p = self.price?;
        let q = i64::from(self.quantity.max(1));
        Some(Money { minor: (p.minor + q / 2) / q, currency: p.currency })
    }
}

/// A receipt after the rules, and what did not add up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub vendor: Option<String>,
    pub date: Option<NaiveDate>,
    pub currency: Option<Currency>,
    pub lines: Vec<ReceiptLine>,
    pub total: Option<Money>,
    /// Each check that failed, in words ("the lines add up to EUR 41.00, the total says EUR 45.00").
    pub problems: Vec<String>,
}

impl Receipt {
    /// How the kept receipt is captioned: its vendor and day ("Screwfix, 2026-11-30"), what of them was read.
    pub fn caption(&self) -> String {
        [self.vendor.clone(), self.date.map(|d| d.to_string())].into_iter().flatten().collect::<Vec<_>>().join(", ")
    }

    /// The purchase a line's item gains: the receipt's day and vendor, the line's unit price.
    pub fn purchase(&self, line: &ReceiptLine) -> Purchase {
        Purchase { date: self.date, price: line.each(), vendor: self.vendor.clone() }
    }
}

/// How far the lines' sum may be from the total, in minor units: a rounding of each line's price.
fn tolerance(lines: usize) -> i64 {
    i64::try_from(lines).unwrap_or(i64::MAX).max(1)
}

/// Judges a receipt read by the model, on `today` (a date after it is in the future).
///
/// ```
/// use trove_domain::receipt::{ModelReceipt, ModelReceiptLine, read};
/// let line = |d: &str, q: f64, p: f64| ModelReceiptLine { description: d.into(), quantity: q, price: p };
/// let answer = ModelReceipt {
///     vendor: Some("Screwfix".into()),
///     date: Some("2026-11-30".into()),
///     currency: Some("GBP".into()),
///     lines: vec![line("Drill", 1.0, 89.99), line("Bits", 2.0, 10.00)],
///     total: Some(99.99),
/// };
/// let r = read(&answer, chrono::NaiveDate::from_ymd_opt(2026, 12, 4).unwrap());
/// assert!(r.problems.is_empty());
/// assert_eq!(r.lines[1].each().unwrap().minor, 500);
/// ```
pub fn read(answer: &ModelReceipt, today: NaiveDate) -> Receipt {
    let mut problems = Vec::new();
    let vendor = answer.vendor.as_deref().map(|v| clip(&clean(v, Lines::One), 200)).filter(|v| !v.trim().is_empty());
    let currency = match answer.currency.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        None => {
            problems.push("the receipt names no currency, so its prices are not kept".to_owned());
            None
        }
        Some(c) => match Currency::new(&c.to_ascii_uppercase()) {
            Ok(c) => Some(c),
            Err(_) => {
                problems.push(format!("the currency {c:?} is not an ISO 4217 code, so its prices are not kept"));
                None
            }
        },
    };
    let date = match answer.date.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        None => None,
        Some(d) => match NaiveDate::parse_from_str(d, "%Y-%m-%d") {
            Ok(day) if day > today => {
                problems.push(format!("the date {day} is in the future, so it is not kept"));
                None
            }
            Ok(day) => Some(day),
            Err(_) => {
                problems.push(format!("the date {d:?} is not a day (YYYY-MM-DD), so it is not kept"));
                None
            }
        },
    };
    let money = |amount: f64| currency.and_then(|c| Money::from_major(amount, c).ok());
    let mut lines = Vec::new();
    for (i, l) in answer.lines.iter().enumerate() {
        if lines.len() == LINES_MAX {
            problems.push(format!("only the first {LINES_MAX} lines are kept"));
            break;
        }
        let description = clip(&clean(&l.description, Lines::One), DESCRIPTION_MAX);
        if description.trim().is_empty() {
            problems.push(format!("line {} has no description and is left out", i + 1));
            continue;
        }
        let quantity = if l.quantity.is_finite() && l.quantity >= 1.0 && l.quantity.fract() == 0.0 {
            (l.quantity as u32).min(QUANTITY_MAX)
        } else {
            problems.push(format!("line {} ({description}) has no whole quantity; 1 is kept", i + 1));
            1
        };
        let price = if l.price.is_finite() && l.price >= 0.0 {
            money(l.price)
        } else {
            problems.push(format!("line {} ({description}) has no price", i + 1));
            None
        };
        lines.push(ReceiptLine { description: description.trim().to_owned(), quantity, price });
    }
    if lines.is_empty() {
        problems.push("no line of the receipt could be read".to_owned());
    }
    let total = answer.total.filter(|t| t.is_finite() && *t >= 0.0).and_then(money);
    if let (Some(total), Some(c)) = (total, currency) {
        let priced: Vec<i64> = lines.iter().filter_map(|l| l.price.map(|p| p.minor)).collect();
        if priced.len() == lines.len() && !lines.is_empty() {
            let sum: i64 = priced.iter().sum();
            if (sum - total.minor).abs() > tolerance(lines.len()) {
                problems.push(format!(
                    "the lines add up to {}, the total says {}: a line may be missing or misread",
                    Money { minor: sum, currency: c },
                    total
                ));
            }
        }
    }
    Receipt { vendor, date, currency, lines, total, problems }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 12, d).unwrap()
    }

    fn line(d: &str, q: f64, p: f64) -> ModelReceiptLine {
        ModelReceiptLine { description: d.into(), quantity: q, price: p }
    }

    fn answer(lines: Vec<ModelReceiptLine>, total: Option<f64>) -> ModelReceipt {
        ModelReceipt {
            vendor: Some(" Screwfix ".into()),
            date: Some("2026-12-01".into()),
            currency: Some("gbp".into()),
            lines,
            total,
        }
    }

    #[test]
    fn lines_that_add_up_are_kept_with_their_unit_prices() {
        let r = read(&answer(vec![line("Drill", 1.0, 89.99), line("AA cells", 4.0, 3.0)], Some(92.99)), day(4));
        assert_eq!(r.problems, Vec::<String>::new());
        assert_eq!(
            (r.vendor.as_deref(), r.date, r.currency.map(|c| c.to_string())),
            (Some("Screwfix"), Some(day(1)), Some("GBP".into()))
        );
        assert_eq!(r.lines[1].quantity, 4);
        assert_eq!(r.lines[1].each().unwrap().minor, 75);
        assert_eq!(r.caption(), "Screwfix, 2026-12-01");
        let p = r.purchase(&r.lines[0]);
        assert_eq!((p.date, p.price.unwrap().minor, p.vendor.as_deref()), (Some(day(1)), 8_999, Some("Screwfix")));
        // Within a rounding per line.
        let r = read(&answer(vec![line("A", 3.0, 10.0), line("B", 1.0, 0.01)], Some(10.02)), day(4));
        assert!(r.problems.is_empty(), "{:?}", r.problems);
    }

    #[test]
    fn what_does_not_add_up_is_said() {
        let r = read(&answer(vec![line("Drill", 1.0, 89.99), line("Bits", 1.0, 10.0)], Some(120.0)), day(4));
        assert_eq!(
            r.problems,
            vec!["the lines add up to GBP 99.99, the total says GBP 120.00: a line may be missing or misread"]
        );
        assert_eq!(r.lines.len(), 2, "the lines are still offered");

        let mut future = answer(vec![line("Drill", 1.0, 1.0)], Some(1.0));
        future.date = Some("2026-12-25".into());
        future.currency = Some("pounds".into());
        let r = read(&future, day(4));
        assert_eq!(r.date, None);
        assert_eq!(r.lines[0].price, None, "no price without a known currency");
        assert!(r.problems.iter().any(|p| p.contains("2026-12-25 is in the future")), "{:?}", r.problems);
        assert!(r.problems.iter().any(|p| p.contains("\"pounds\" is not an ISO 4217 code")), "{:?}", r.problems);

        let r = read(&answer(vec![line("  ", 1.0, 1.0), line("Cable", 0.5, -2.0)], None), day(4));
        assert_eq!(r.lines.len(), 1);
        assert_eq!((r.lines[0].quantity, r.lines[0].price), (1, None));
        assert_eq!(r.problems.len(), 3, "{:?}", r.problems);
        let r = read(&answer(Vec::new(), Some(3.0)), day(4));
        assert_eq!(r.problems, vec!["no line of the receipt could be read"]);
    }
}
