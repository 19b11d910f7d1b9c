//! The value report: what a household owns and what it is worth, item by item, with totals per room, per type and
//! per currency, as an insurer is sent it. The figures are never converted between currencies: each total is kept
//! per currency.
//!
//! An item's current value is its latest price report's: the typical price of an estimate grounded in web
//! comparables, or a value a person set by hand, with when that was; an item never priced, or whose latest
//! search found too little evidence, has none. A stock's value counts every unit it has.

use crate::item::Item;
use crate::money::{Currency, Money};
use crate::pricing::{PriceReport, PriceSource};
use crate::{ItemId, Timestamp};
use chrono::Duration;
use std::collections::{BTreeMap, HashMap};

/// Where an item's current value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueSource {
    /// The typical price of the latest estimate, made at this time.
    Estimate { at: Timestamp },
    /// A value set by hand at this time.
    Hand { at: Timestamp },
}

impl ValueSource {
    pub fn at(self) -> Timestamp {
        match self {
            Self::Estimate { at } | Self::Hand { at } => at,
        }
    }
}

/// An item's current value per unit, and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CurrentValue {
    pub each: Money,
    pub source: ValueSource,
}

/// An item's current value from its latest price report (`latest`): its estimate's typical price; `None` without
/// a report or when the latest found too little evidence (an older estimate is out of date once a newer search
/// found nothing to go by).
pub fn current_value(latest: Option<&PriceReport>) -> Option<CurrentValue> {
    let report = latest?;
    let estimate = report.estimate.as_ref()?;
    Some(CurrentValue {
        each: Money { minor: estimate.typical, currency: estimate.currency },
        source: match report.source {
            PriceSource::Search => ValueSource::Estimate { at: report.at },
            PriceSource::Hand => ValueSource::Hand { at: report.at },
        },
    })
}

/// Whether "Refresh values" prices an item again, from its latest report: it has no estimate, or its latest
/// search is older than `max_age`. A value set by hand is the person's word and is never searched over.
pub fn needs_value(latest: Option<&PriceReport>, now: Timestamp, max_age: Duration) -> bool {
    match latest {
        Some(r) if r.source == PriceSource::Hand => false,
        Some(r) if r.estimate.is_some() => now - r.at > max_age,
        _ => true,
    }
}

/// The items "Refresh values" prices, from the household's present `items` and their latest reports: those that
/// [`needs_value`] (a gone one is not priced), never valued first, then the oldest estimate first, ties by id.
pub fn to_refresh(
    items: &[Item],
    latest: &HashMap<ItemId, PriceReport>,
    now: Timestamp,
    max_age: Duration,
) -> Vec<ItemId> {
    let mut wanted: Vec<(Option<Timestamp>, ItemId)> = items
        .iter()
        .filter(|i| i.gone.is_none())
        .filter(|i| needs_value(latest.get(&i.id), now, max_age))
        .map(|i| (latest.get(&i.id).filter(|r| r.estimate.is_some()).map(|r| r.at), i.id))
        .collect();
    // `None` (never valued) sorts first.
    wanted.sort();
    wanted.into_iter().map(|(_, id)| id).collect()
}

/// One item's line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueLine {
    pub item: ItemId,
    /// The room it is in: the outermost place of its path; `None` for an item in no place.
    pub room: Option<String>,
    pub item_type: String,
    /// Units counted: a single thing is 1, a stock used up 0.
    pub quantity: u32,
    /// What was paid for all of them (the purchase price is per item as recorded).
    pub paid: Option<Money>,
    pub current: Option<CurrentValue>,
    /// The current value of every unit.
    pub current_total: Option<Money>,
}

/// Sums per currency: paid and current.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sums {
    /// The items counted (lines, not units).
    pub items: u64,
    pub paid: BTreeMap<Currency, i64>,
    pub current: BTreeMap<Currency, i64>,
    /// Items without a current value.
    pub unvalued: u64,
}

impl Sums {
    fn add(&mut self, line: &ValueLine) {
        self.items += 1;
        if let Some(p) = line.paid {
            *self.paid.entry(p.currency).or_default() += p.minor;
        }
        match line.current_total {
            Some(c) => *self.current.entry(c.currency).or_default() += c.minor,
            None => self.unvalued += 1,
        }
    }
}

/// The report: a line per item (in the order given), and the totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValueReport {
    pub lines: Vec<ValueLine>,
    /// Per room (outermost place), `None` for the items in no place.
    pub by_room: BTreeMap<Option<String>, Sums>,
    pub by_type: BTreeMap<String, Sums>,
    pub total: Sums,
}

/// The value report of `items` (gone ones left out: the household no longer has them), each valued by its latest
/// price report in `latest`.
///
/// ```
/// use trove_domain::report::value_report;
/// let report = value_report(&[], &Default::default());
/// assert!(report.lines.is_empty() && report.total.current.is_empty());
/// ```
pub fn value_report(items: &[Item], latest: &HashMap<ItemId, PriceReport>) -> ValueReport {
    let mut report = ValueReport::default();
    for item in items.iter().filter(|i| i.gone.is_none()) {
        // A stock used up (0 units) is worth nothing now; a single thing is 1.
        let quantity = item.quantity;
        let current = current_value(latest.get(&item.id));
        let line = ValueLine {
            item: item.id,
            room: item.place_path.as_ref().map(|p| p.steps()[0].name.to_string()),
            item_type: item.item_type.to_string(),
            quantity,
            paid: item.details.purchase.as_ref().and_then(|p| p.price),
            current,
            current_total: current.map(|c| Money { minor: c.each.minor * i64::from(quantity), ..c.each }),
        };
        report.by_room.entry(line.room.clone()).or_default().add(&line);
        report.by_type.entry(line.item_type.clone()).or_default().add(&line);
        report.total.add(&line);
        report.lines.push(line);
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::{Condition, GoneReason, ItemDetails, Purchase};
    use crate::pricing::Estimate;
    use crate::testing::{at, item, path};

    fn eur() -> Currency {
        Currency::new("EUR").unwrap()
    }

    fn gbp() -> Currency {
        Currency::new("GBP").unwrap()
    }

    fn report(id: i64, day: u32, estimate: Option<(i64, Currency)>) -> PriceReport {
        PriceReport {
            item_id: ItemId(id),
            at: at(day),
            comparables: Vec::new(),
            dropped: Vec::new(),
            estimate: estimate.map(|(typical, currency)| Estimate {
                low: typical / 2,
                typical,
                high: typical * 2,
                currency,
            }),
            searches: 1,
            source: PriceSource::Search,
        }
    }

    #[test]
    fn items_are_valued_by_their_latest_estimate_and_summed_per_room_type_and_currency() {
        let mut drill = item(1, "drill", Condition::Good);
        drill.place_path = path("Garage / Shelf 2");
        drill.details = ItemDetails {
            purchase: Some(Purchase {
                date: None,
                price: Some(Money { minor: 12_999, currency: eur() }),
                vendor: None,
            }),
            ..ItemDetails::default()
        }
        .into();
        let mut cells = item(2, "battery", Condition::Good);
        cells.quantity = 4;
        cells.place_path = path("Garage");
        let mut lamp = item(3, "lamp", Condition::Good);
        lamp.place_path = path("Living room");
        let unpriced = item(4, "drill", Condition::Good);
        let mut used_up = item(6, "battery", Condition::Good);
        used_up.quantity = 0;
        let mut gone = item(5, "lamp", Condition::Good);
        gone.gone = Some(crate::item::Gone { reason: GoneReason::Sold, at: at(3), note: None });
        let latest: HashMap<ItemId, PriceReport> = [
            (ItemId(1), report(1, 2, Some((6_000, eur())))),
            (ItemId(2), report(2, 2, Some((350, eur())))),
            (ItemId(3), report(3, 2, Some((2_000, gbp())))),
            (ItemId(4), report(4, 2, None)),
            (ItemId(5), report(5, 2, Some((100, eur())))),
        ]
        .into();
        let latest = {
            let mut l = latest;
            l.insert(ItemId(6), report(6, 2, Some((350, eur()))));
            l
        };
        let r = value_report(&[drill, cells, lamp, unpriced, gone, used_up], &latest);
        assert_eq!(r.lines.len(), 5, "the gone item is left out");
        assert_eq!(r.lines[4].current_total, Some(Money { minor: 0, currency: eur() }), "a stock used up");
        assert_eq!(r.lines[1].current_total, Some(Money { minor: 1_400, currency: eur() }), "4 units at 3.50");
        assert_eq!(r.lines[0].current.unwrap().source, ValueSource::Estimate { at: at(2) });
        assert_eq!(r.lines[3].current, None, "the latest search found too little evidence");
        // Never converted: a total per currency.
        assert_eq!(r.total.current, BTreeMap::from([(eur(), 7_400), (gbp(), 2_000)]));
        assert_eq!(r.total.paid, BTreeMap::from([(eur(), 12_999)]));
        assert_eq!((r.total.unvalued, r.total.items), (1, 5));
        let garage = &r.by_room[&Some("Garage".to_owned())];
        assert_eq!(garage.current, BTreeMap::from([(eur(), 7_400)]), "the shelf is in the garage");
        assert_eq!(r.by_room[&None].unvalued, 1);
        assert_eq!(r.by_type["drill"].current, BTreeMap::from([(eur(), 6_000)]));
        assert_eq!(r.by_type["drill"].unvalued, 1);
    }

    #[test]
    fn a_value_is_refreshed_when_missing_or_older_than_asked() {
        let now = at(20);
        let week = Duration::days(7);
        assert!(needs_value(None, now, week));
        assert!(needs_value(Some(&report(1, 19, None)), now, week), "no estimate");
        assert!(!needs_value(Some(&report(1, 19, Some((100, eur())))), now, week));
        assert!(needs_value(Some(&report(1, 10, Some((100, eur())))), now, week), "ten days old");
        let by_hand = crate::pricing::hand_value(ItemId(1), at(1), Money { minor: 100, currency: eur() });
        assert!(!needs_value(Some(&by_hand), now, week), "a value set by hand is kept");
    }

    #[test]
    fn refresh_prices_the_never_valued_first_then_the_oldest_and_leaves_hand_values() {
        let items: Vec<Item> = (1..=6).map(|i| item(i, "drill", Condition::Good)).collect();
        let mut gone = items[5].clone();
        gone.gone = Some(crate::item::Gone { reason: GoneReason::Sold, at: at(3), note: None });
        let items = [&items[..5], &[gone]].concat();
        let latest: HashMap<ItemId, PriceReport> = [
            (ItemId(1), report(1, 2, Some((100, eur())))),
            (ItemId(2), report(2, 1, Some((100, eur())))),
            (ItemId(3), crate::pricing::hand_value(ItemId(3), at(1), Money { minor: 5, currency: eur() })),
            (ItemId(4), report(4, 19, Some((100, eur())))),
        ]
        .into();
        // 5 never priced, then 2 (day 1) before 1 (day 2); 3 by hand and 4 fresh are kept; 6 is gone.
        assert_eq!(to_refresh(&items, &latest, at(20), Duration::days(7)), vec![ItemId(5), ItemId(2), ItemId(1)]);
    }

    #[test]
    fn a_value_set_by_hand_is_the_current_value_until_a_newer_report() {
        let by_hand = crate::pricing::hand_value(ItemId(1), at(5), Money { minor: 9_000, currency: eur() });
        let v = current_value(Some(&by_hand)).unwrap();
        assert_eq!((v.each.minor, v.source), (9_000, ValueSource::Hand { at: at(5) }));
        assert_eq!(v.source.at(), at(5));
        let searched = report(1, 6, Some((7_000, eur())));
        assert_eq!(current_value(Some(&searched)).unwrap().source, ValueSource::Estimate { at: at(6) });
    }
}
