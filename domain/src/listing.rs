//! Selling and giving: the listing draft for an item meant for sale and the share text for one meant to be given
//! away. Both are deterministic text built from what the inventory holds: the same item always gives the same
//! words, and every known fault is told.

use crate::ids::ItemId;
use crate::item::{Condition, Fault, Intent, Item, Severity, TestDone, TestResult};
use crate::money::Currency;
use crate::pricing::Estimate;
use crate::units::Unit;
use serde::Serialize;

/// Longest listing title, in characters: the usual marketplace limit.
pub const TITLE_MAX: usize = 80;
/// Longest share text, in characters.
pub const SHARE_MAX: usize = 500;
/// Longest pick-up area shown in a share text, in characters.
pub const AREA_MAX: usize = 80;

/// Why a draft or a share text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListingError {
    /// The item is meant for something else: only a `sell` item gets a draft, only a `give` item a share text.
    #[error("item {item} is meant to {intent}, not {wanted}")]
    WrongIntent { item: ItemId, intent: Intent, wanted: Intent },
    /// The item left the inventory.
    #[error("item {0} is gone")]
    Gone(ItemId),
}

/// A marketplace listing for an item meant for sale.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListingDraft {
    /// At most [`TITLE_MAX`] characters.
    pub title: String,
    pub condition: Condition,
    pub description: String,
    /// Asking price in minor units: the one set by hand, else the typical price of the latest estimate; `None` if
    /// neither.
    pub price: Option<i64>,
    pub currency: Option<Currency>,
    /// Where `price` comes from; `None` with no price.
    pub price_from: Option<PriceFrom>,
}

/// Where a listing draft's asking price comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PriceFrom {
    /// The asking price set by hand on the item (`details.asking_price`): it wins over any estimate, whatever
    /// the comparables say.
    AskingPrice,
    /// The typical price of the latest estimate (from comparables, or a value set by hand).
    Estimate,
}

/// Refuses an item that is gone or meant for something other than `wanted`.
fn check_intent(item: &Item, wanted: Intent) -> Result<(), ListingError> {
    if item.gone.is_some() {
        return Err(ListingError::Gone(item.id));
    }
    if item.intent != wanted {
        return Err(ListingError::WrongIntent { item: item.id, intent: item.intent, wanted });
    }
    Ok(())
}

/// **The listing draft rule.** For an item with intent `sell` (and not gone):
/// - a title of at most [`TITLE_MAX`] characters: the name, then the identifying facts of the profile and the
///   key specs (charge, current, voltage, power, energy, storage, frequency) that are not already in it, each
///   only if it fits whole; a name too long is cut at a word boundary; a for-parts item says so;
/// - a description that gives the condition in words, discloses every fault with its severity (worst first),
///   says which tests were done with their results and readings (or honestly that none was), lists the current
///   measurements as `value unit` and the accessories included;
/// - the asking price set by hand on the item (`details.asking_price`) when there is one, whatever `latest`
///   says, else the typical price of `latest`; `None` if neither. The draft says which (`price_from`).
///
/// ```
/// use trove_domain::listing::draft;
/// # use trove_domain::{ids::ItemId, item::*, Timestamp};
/// # let at = Timestamp::UNIX_EPOCH;
/// # let mut item = Item { id: ItemId(7), name: ItemName::new("Anker PowerCore 10000").unwrap(),
/// #     item_type: ItemType::new("power_bank").unwrap(), profile: String::new(), condition: Condition::Good,
/// #     intent: Intent::Sell, availability: Availability::Available, project: None, gone: None,
/// #     measurements: vec![], faults: vec![], tests_done: vec![], accessories: vec![], components: vec![],
/// #     quantity: 1, min_quantity: None, units_held: 0, units_lent: 0, loan: None, tags: Tags::default(), codes: Default::default(), details: Default::default(),
/// #     place_path: None, place_id: None, cover: None, created_at: at, updated_at: at, version: 1 };
/// item.intent = trove_domain::item::Intent::Keep;
/// assert_eq!(draft(&item, None).unwrap_err().to_string(), "item 7 is meant to keep, not sell");
/// ```
///
/// # Errors
/// [`ListingError::Gone`] for a gone item, [`ListingError::WrongIntent`] unless the intent is `sell`.
pub fn draft(item: &Item, latest: Option<&Estimate>) -> Result<ListingDraft, ListingError> {
    check_intent(item, Intent::Sell)?;
    let (price, currency, price_from) = match (item.details.asking_price, latest) {
        (Some(hand), _) => (Some(hand.minor), Some(hand.currency), Some(PriceFrom::AskingPrice)),
        (None, Some(e)) => (Some(e.typical), Some(e.currency), Some(PriceFrom::Estimate)),
        (None, None) => (None, None, None),
    };
    Ok(ListingDraft {
        title: title(item),
        condition: item.condition,
        description: description(item),
        price,
        currency,
        price_from,
    })
}

/// Units whose values buyers search for, so they may go in a title.
const TITLE_UNITS: [Unit; 7] =
    [Unit::MilliampHour, Unit::Milliamp, Unit::Volt, Unit::Watt, Unit::WattHour, Unit::Gigabyte, Unit::Megahertz];

/// Words that mark a profile part as a serial number, which has no place in a public title.
const SERIAL_MARKS: [&str; 4] = ["serial", "s/n", "sn:", "sn "];

fn title(item: &Item) -> String {
    let name = one_line(item.name.as_str());
    let for_parts = item.condition == Condition::ForParts && !mentions(&name, "parts") && !mentions(&name, "spares");
    let suffix = if for_parts { " - for parts" } else { "" };
    let room = TITLE_MAX - suffix.chars().count();
    let mut title = cut_at_word(&name, room);
    for fact in title_facts(item) {
        if mentions(&title, &fact) {
            continue;
        }
        let longer = format!("{title}, {fact}");
        if longer.chars().count() <= room {
            title = longer;
        }
    }
    title + suffix
}

/// Identifying facts for a title: the profile's parts (a `key: value` part gives its value; serials and long
/// parts are left out), then the key specs among the current fields.
fn title_facts(item: &Item) -> Vec<String> {
    let mut facts: Vec<String> = Vec::new();
    for part in item.profile.split([',', ';', '|', '\n']) {
        let lower = part.to_lowercase();
        if SERIAL_MARKS.iter().any(|m| lower.contains(m)) {
            continue;
        }
        let value = part.split_once(':').map_or(part, |(_, v)| v);
        let value = one_line(value);
        if !value.is_empty() && value.chars().count() <= 30 {
            facts.push(value);
        }
    }
    for m in item.current_fields().values() {
        if TITLE_UNITS.contains(&m.unit) {
            facts.push(m.quantity().for_people());
        }
    }
    facts
}

/// True when `text` already says `fact`, ignoring case, spaces and punctuation ("4GB" says "4 GB").
fn mentions(text: &str, fact: &str) -> bool {
    let squash = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect::<String>();
    let fact = squash(fact);
    !fact.is_empty() && squash(text).contains(&fact)
}

fn description(item: &Item) -> String {
    let mut lines: Vec<String> = vec![one_line(item.name.as_str())];
    let profile = one_line(&item.profile);
    if !profile.is_empty() {
        lines.push(profile);
    }
    lines.push(String::new());
    lines.push(format!("Condition: {}.", item.condition.human()));
    lines.push(String::new());
    if item.faults.is_empty() {
        lines.push("Known faults: none.".to_owned());
    } else {
        lines.push("Known faults (all of them):".to_owned());
        lines.extend(
            worst_first(&item.faults).iter().map(|f| format!("- {} ({} fault)", one_line(&f.text), f.severity)),
        );
    }
    lines.push(String::new());
    if item.tests_done.is_empty() {
        lines.push("Tests: none done, so it is sold as seen; nothing beyond what is written here was checked.".into());
    } else {
        lines.push("Tests done:".to_owned());
        lines.extend(item.tests_done.iter().map(|t| format!("- {}", test_in_words(t))));
    }
    let fields = item.current_fields();
    if !fields.is_empty() {
        lines.push(String::new());
        lines.push("Measurements:".to_owned());
        lines.extend(
            fields.iter().map(|(k, m)| format!("- {}: {}", k.as_str().replace('_', " "), m.quantity().for_people())),
        );
    }
    lines.push(String::new());
    if item.accessories.is_empty() {
        lines.push("Included: the item only, no accessories.".to_owned());
    } else {
        lines.push("Included:".to_owned());
        lines.extend(item.accessories.iter().map(|a| format!("- {}", one_line(a))));
    }
    lines.join("\n")
}

/// A test in words: "capacity test: passed, 3350 mAh (at 0.5 A)".
pub(crate) fn test_in_words(t: &TestDone) -> String {
    let result = match t.result {
        TestResult::Pass => "passed",
        TestResult::Fail => "failed",
    };
    let mut s = format!("{}: {result}", one_line(&t.name));
    if let Some(v) = t.value {
        s.push_str(&format!(", {v}"));
    }
    if let Some(n) = t.note.as_deref().map(one_line).filter(|n| !n.is_empty()) {
        s.push_str(&format!(" ({n})"));
    }
    s
}

/// Faults, worst first; equal severities keep their recorded order.
fn worst_first(faults: &[Fault]) -> Vec<&Fault> {
    let mut sorted: Vec<&Fault> = faults.iter().collect();
    sorted.sort_by_key(|f| std::cmp::Reverse(severity_rank(f.severity)));
    sorted
}

fn severity_rank(s: Severity) -> u8 {
    match s {
        Severity::Minor => 0,
        Severity::Major => 1,
        Severity::Blocking => 2,
    }
}

/// **The share text rule.** For an item with intent `give` (and not gone): a short, friendly give-away post of
/// at most [`SHARE_MAX`] characters saying what it is, its condition, what works (tests passed), what does not
/// (faults, worst first, and failed tests), what comes with it (accessories) and, when `pickup_area` is given,
/// "Pick-up from {area}". When it is too long, lists lose their last entries ("and 2 more"): accessories
/// first, then what works, faults last; words are never cut.
///
/// ```
/// use trove_domain::listing::share_text;
/// # use trove_domain::{ids::ItemId, item::*, Timestamp};
/// # let at = Timestamp::UNIX_EPOCH;
/// # let mut item = Item { id: ItemId(7), name: ItemName::new("Anker PowerCore 10000").unwrap(),
/// #     item_type: ItemType::new("power_bank").unwrap(), profile: String::new(), condition: Condition::Good,
/// #     intent: Intent::Sell, availability: Availability::Available, project: None, gone: None,
/// #     measurements: vec![], faults: vec![], tests_done: vec![], accessories: vec![], components: vec![],
/// #     quantity: 1, min_quantity: None, units_held: 0, units_lent: 0, loan: None, tags: Tags::default(), codes: Default::default(), details: Default::default(),
/// #     place_path: None, place_id: None, cover: None, created_at: at, updated_at: at, version: 1 };
/// item.intent = trove_domain::item::Intent::Give;
/// let text = share_text(&item, Some("Leeds")).unwrap();
/// assert!(text.starts_with("Free to a good home: Anker PowerCore 10000."));
/// assert!(text.ends_with("Pick-up from Leeds."));
/// ```
///
/// # Errors
/// [`ListingError::Gone`] for a gone item, [`ListingError::WrongIntent`] unless the intent is `give`.
pub fn share_text(item: &Item, pickup_area: Option<&str>) -> Result<String, ListingError> {
    check_intent(item, Intent::Give)?;
    let name = one_line(item.name.as_str());
    let area = pickup_area.map(|a| cut_at_word(&one_line(a), AREA_MAX)).filter(|a| !a.is_empty());
    let works: Vec<String> =
        item.tests_done.iter().filter(|t| t.result == TestResult::Pass).map(|t| one_line(&t.name)).collect();
    let mut broken: Vec<String> = worst_first(&item.faults)
        .iter()
        .map(|f| match f.severity {
            Severity::Minor => one_line(&f.text),
            s => format!("{} ({s})", one_line(&f.text)),
        })
        .collect();
    broken.extend(
        item.tests_done
            .iter()
            .filter(|t| t.result == TestResult::Fail)
            .map(|t| format!("failed {}", one_line(&t.name))),
    );
    let with: Vec<String> = item.accessories.iter().map(|a| one_line(a)).collect();
    let lists = [&works, &broken, &with];
    let mut shown = lists.map(Vec::len);
    loop {
        let text = render_share(&name, item, area.as_deref(), lists, shown);
        if text.chars().count() <= SHARE_MAX {
            return Ok(text);
        }
        // Accessories go first, then what works; faults are the last thing to leave out.
        match [2, 0, 1].into_iter().find(|&i| shown[i] > 0) {
            Some(i) => shown[i] -= 1,
            None => return Ok(cut_at_word(&text, SHARE_MAX)),
        }
    }
}

/// Writes the share text with the first `shown` entries of each list (works, broken, with).
fn render_share(name: &str, item: &Item, area: Option<&str>, lists: [&Vec<String>; 3], shown: [usize; 3]) -> String {
    let [works, broken, with] = lists;
    let mut parts = vec![format!("Free to a good home: {name}."), format!("Condition: {}.", item.condition.human())];
    if !works.is_empty() {
        parts.push(format!("Tested and working: {}.", some_of(works, shown[0], "checks")));
    } else if item.tests_done.is_empty() {
        parts.push("Not tested.".to_owned());
    }
    if broken.is_empty() {
        parts.push("No known faults.".to_owned());
    } else {
        parts.push(format!("Not working or faulty: {}.", some_of(broken, shown[1], "faults")));
    }
    if !with.is_empty() {
        parts.push(format!("Comes with {}.", some_of(with, shown[2], "accessories")));
    }
    if let Some(a) = area {
        parts.push(format!("Pick-up from {a}."));
    }
    parts.join(" ")
}

/// "a, b and c"; with fewer shown, "a and 2 more"; with none shown, "3 faults".
fn some_of(items: &[String], shown: usize, noun: &str) -> String {
    let shown = shown.min(items.len());
    let rest = items.len() - shown;
    let head = &items[..shown];
    match (head, rest) {
        ([], n) => format!("{n} {noun}"),
        (h, 0) if h.len() == 1 => h[0].clone(),
        (h, 0) => format!("{} and {}", h[..h.len() - 1].join(", "), h[h.len() - 1]),
        (h, n) => format!("{} and {n} more", h.join(", ")),
    }
}

/// Collapses every run of whitespace (newlines included) into one space and trims: owner text stays on one line.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Cuts `text` to at most `max` characters at a word boundary, dropping the punctuation left dangling; a single
/// word longer than `max` is cut at `max`.
///
/// ```
/// use trove_domain::listing::cut_at_word;
/// assert_eq!(cut_at_word("Raspberry Pi 4, Model B", 16), "Raspberry Pi 4");
/// assert_eq!(cut_at_word("Supercalifragilistic", 5), "Super");
/// ```
pub fn cut_at_word(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    let at_boundary = text.chars().nth(max).is_some_and(char::is_whitespace);
    let cut =
        if at_boundary { head.as_str() } else { head.rfind(char::is_whitespace).map_or(head.as_str(), |i| &head[..i]) };
    let cut = cut.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '-' | '(' | '/' | '&'));
    if cut.is_empty() { head.trim_end().to_owned() } else { cut.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::{Gone, GoneReason, ItemName};
    use crate::testing::{at, item, measure};
    use crate::units::Quantity;
    use proptest::prelude::*;

    fn power_bank() -> Item {
        let mut i = item(7, "power_bank", Condition::Good);
        i.name = ItemName::new("Anker PowerCore 10000").unwrap();
        i.profile = "Anker, model: A1263, serial: AK123456, USB-C PD".into();
        i.intent = Intent::Sell;
        measure(&mut i, "capacity", 10.0, "Ah", 1);
        measure(&mut i, "weight", 180.0, "g", 1);
        measure(&mut i, "output_current", 3.0, "A", 1);
        i.faults.push(Fault::new("scuffed case", Severity::Minor).unwrap());
        i.faults.push(Fault::new("USB-A port loose", Severity::Major).unwrap());
        let cap = Quantity { value: 8900.0, unit: Unit::MilliampHour };
        i.tests_done.push(TestDone::new("capacity test", TestResult::Pass, Some(cap), at(2), Some("at 1 A")).unwrap());
        i.tests_done.push(TestDone::new("pass-through charging", TestResult::Fail, None, at(2), None).unwrap());
        i.accessories = vec!["USB-C cable".into(), "pouch".into()];
        i
    }

    fn gbp_estimate() -> Estimate {
        Estimate { low: 1500, typical: 1800, high: 2200, currency: Currency::new("GBP").unwrap() }
    }

    #[test]
    fn a_draft_tells_everything() {
        let d = draft(&power_bank(), Some(&gbp_estimate())).unwrap();
        assert_eq!(d.title, "Anker PowerCore 10000, A1263, USB-C PD, 10000 mAh, 3000 mA");
        assert_eq!(d.condition, Condition::Good);
        assert_eq!((d.price, d.currency), (Some(1800), Some(Currency::new("GBP").unwrap())));
        assert_eq!(
            d.description,
            "Anker PowerCore 10000\n\
             Anker, model: A1263, serial: AK123456, USB-C PD\n\
             \n\
             Condition: good.\n\
             \n\
             Known faults (all of them):\n\
             - USB-A port loose (major fault)\n\
             - scuffed case (minor fault)\n\
             \n\
             Tests done:\n\
             - capacity test: passed, 8900 mAh (at 1 A)\n\
             - pass-through charging: failed\n\
             \n\
             Measurements:\n\
             - capacity: 10000 mAh\n\
             - output current: 3000 mA\n\
             - weight: 180 g\n\
             \n\
             Included:\n\
             - USB-C cable\n\
             - pouch"
        );
        assert_eq!(draft(&power_bank(), Some(&gbp_estimate())).unwrap(), d, "the same item gives the same text");
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        let mut i = item(11, "single_board_computer", Condition::Good);
        i.name = ItemName::new("Raspberry Pi Zero W").unwrap();
        i.intent = Intent::Sell;
        measure(&mut i, "ram", 512.0, "MB", 1);
        measure(&mut i, "storage", 2.0, "TB", 1);
        let d = draft(&i, None).unwrap();
        assert!(d.description.contains("- ram: 512 MB\n- storage: 2 TB"), "{}", d.description);
        assert_eq!(d.title, "Raspberry Pi Zero W, 512 MB, 2 TB");
    }

    #[test]
    fn a_bare_draft_is_honest_about_it() {
        let mut i = item(9, "hard_drive", Condition::ForParts);
        i.name = ItemName::new("WD Blue 1TB").unwrap();
        i.intent = Intent::Sell;
        let d = draft(&i, None).unwrap();
        assert_eq!(d.title, "WD Blue 1TB - for parts");
        assert_eq!((d.price, d.currency), (None, None));
        assert_eq!(
            d.description,
            "WD Blue 1TB\n\nCondition: for parts or not working.\n\nKnown faults: none.\n\n\
             Tests: none done, so it is sold as seen; nothing beyond what is written here was checked.\n\n\
             Included: the item only, no accessories."
        );
    }

    #[test]
    fn titles() {
        fn check(input: (&str, &str, Condition), expected: &str) {
            let mut i = power_bank();
            i.name = ItemName::new(input.0).unwrap();
            i.profile = input.1.into();
            i.condition = input.2;
            let got = draft(&i, None).unwrap().title;
            assert!(got.chars().count() <= TITLE_MAX, "{got:?}");
            assert_eq!(got, expected, "{input:?}");
        }
        use Condition::{ForParts, Good};
        check(("Power bank", "", Good), "Power bank, 10000 mAh, 3000 mA");
        check(("Power bank 10000mAh", "", Good), "Power bank 10000mAh, 3000 mA");
        check(("Power bank", "S/N 99812, Anker | 3A", Good), "Power bank, Anker, 3A, 10000 mAh, 3000 mA");
        check(("Power bank", "", ForParts), "Power bank, 10000 mAh, 3000 mA - for parts");
        check(("Power bank spares or repair", "", ForParts), "Power bank spares or repair, 10000 mAh, 3000 mA");
        check(
            ("A very long descriptive name for a power bank that goes on and on about itself forever", "", Good),
            "A very long descriptive name for a power bank that goes on and on about itself",
        );
        check(
            ("A very long descriptive name for a power bank that goes on and on about it", "", Good),
            "A very long descriptive name for a power bank that goes on and on about it",
        );
        check(
            ("A very long descriptive name for a power bank that goes on and on, about itself", "", ForParts),
            "A very long descriptive name for a power bank that goes on and on - for parts",
        );
        check((&"x".repeat(120), "", Good), &"x".repeat(80));
        check(("Héllo wörld ünïcode", "ßßß", Good), "Héllo wörld ünïcode, ßßß, 10000 mAh, 3000 mA");
    }

    #[test]
    fn refusals() {
        fn check(setup: &dyn Fn(&mut Item), expected: (Result<(), &str>, Result<(), &str>)) {
            let mut i = power_bank();
            setup(&mut i);
            let d = draft(&i, None).map(|_| ()).map_err(|e| e.to_string());
            let s = share_text(&i, None).map(|_| ()).map_err(|e| e.to_string());
            assert_eq!((d, s), (expected.0.map_err(str::to_owned), expected.1.map_err(str::to_owned)));
        }
        check(&|_| {}, (Ok(()), Err("item 7 is meant to sell, not give")));
        check(
            &|i| i.intent = Intent::Keep,
            (Err("item 7 is meant to keep, not sell"), Err("item 7 is meant to keep, not give")),
        );
        check(&|i| i.intent = Intent::Give, (Err("item 7 is meant to give, not sell"), Ok(())));
        check(
            &|i| i.gone = Some(Gone { reason: GoneReason::Sold, at: at(3), note: None }),
            (Err("item 7 is gone"), Err("item 7 is gone")),
        );
    }

    #[test]
    fn an_asking_price_set_by_hand_comes_before_any_estimate() {
        let gbp = Currency::new("GBP").unwrap();
        let eur = Currency::new("EUR").unwrap();
        let estimate = Estimate { low: 1000, typical: 1500, high: 2000, currency: gbp };
        let mut i = power_bank();
        let check =
            |item: &Item, latest: Option<&Estimate>, expected: (Option<i64>, Option<Currency>, Option<PriceFrom>)| {
                let d = draft(item, latest).unwrap();
                assert_eq!((d.price, d.currency, d.price_from), expected, "{latest:?}");
            };
        check(&i, None, (None, None, None));
        check(&i, Some(&estimate), (Some(1500), Some(gbp), Some(PriceFrom::Estimate)));
        // A hand-set price wins whatever the comparables say: above, below or in another currency.
        i.details.asking_price = Some(crate::money::Money { minor: 1250, currency: eur });
        let above = Estimate { low: 5000, typical: 9000, high: 12000, currency: eur };
        let below = Estimate { low: 1, typical: 2, high: 3, currency: eur };
        for latest in [Some(&estimate), Some(&above), Some(&below), None] {
            check(&i, latest, (Some(1250), Some(eur), Some(PriceFrom::AskingPrice)));
        }
    }

    fn giveaway() -> Item {
        let mut i = power_bank();
        i.intent = Intent::Give;
        i
    }

    #[test]
    fn share_texts() {
        type Setup<'a> = &'a dyn Fn(&mut Item);
        fn check(input: (Setup, Option<&str>), expected: &str) {
            let mut i = giveaway();
            input.0(&mut i);
            let got = share_text(&i, input.1).unwrap();
            assert!(got.chars().count() <= SHARE_MAX, "{got:?}");
            assert_eq!(got, expected);
        }
        check(
            (&|_| {}, Some("  Leeds\n LS6 ")),
            "Free to a good home: Anker PowerCore 10000. Condition: good. Tested and working: capacity test. \
             Not working or faulty: USB-A port loose (major), scuffed case and failed pass-through charging. \
             Comes with USB-C cable and pouch. Pick-up from Leeds LS6.",
        );
        check(
            (
                &|i| {
                    i.faults.clear();
                    i.tests_done.clear();
                    i.accessories.clear();
                },
                None,
            ),
            "Free to a good home: Anker PowerCore 10000. Condition: good. Not tested. No known faults.",
        );
        check(
            (&|i| i.tests_done.retain(|t| t.result == TestResult::Fail), Some(" ")),
            "Free to a good home: Anker PowerCore 10000. Condition: good. \
             Not working or faulty: USB-A port loose (major), scuffed case and failed pass-through charging. \
             Comes with USB-C cable and pouch.",
        );
        // Too long: the accessories go first, a whole entry at a time.
        check(
            (
                &|i| {
                    i.accessories = (1..=40).map(|n| format!("spare cable number {n}")).collect();
                    i.faults.truncate(1);
                    i.tests_done.truncate(1);
                },
                Some("Leeds"),
            ),
            "Free to a good home: Anker PowerCore 10000. Condition: good. Tested and working: capacity test. \
             Not working or faulty: scuffed case. Comes with spare cable number 1, spare cable number 2, spare cable \
             number 3, spare cable number 4, spare cable number 5, spare cable number 6, spare cable number 7, spare \
             cable number 8, spare cable number 9, spare cable number 10, spare cable number 11, spare cable number \
             12, spare cable number 13, spare cable number 14 and 26 more. Pick-up from Leeds.",
        );
    }

    fn words() -> impl Strategy<Value = String> {
        "[A-Za-zé0-9]{1,25}( [A-Za-zé0-9]{1,25}){0,10}"
    }

    proptest! {
        #[test]
        fn a_share_text_always_fits(
            name in "[A-Za-z0-9]{1,40}( [A-Za-z0-9]{1,40}){0,6}",
            faults in prop::collection::vec(words(), 0..30),
            accessories in prop::collection::vec(words(), 0..30),
            tests in prop::collection::vec((words(), any::<bool>()), 0..30),
            area in prop::option::of(words()),
        ) {
            let mut i = giveaway();
            i.name = ItemName::new(&crate::text::clip(&name, 200)).unwrap();
            i.faults = faults.iter().map(|f| Fault::new(f, Severity::Major).unwrap()).collect();
            i.accessories = accessories;
            i.tests_done = tests
                .iter()
                .map(|(n, ok)| {
                    let result = if *ok { TestResult::Pass } else { TestResult::Fail };
                    TestDone::new(n, result, None, at(2), None).unwrap()
                })
                .collect();
            let text = share_text(&i, area.as_deref()).unwrap();
            prop_assert!(text.chars().count() <= SHARE_MAX, "{} characters", text.chars().count());
            prop_assert!(text.starts_with("Free to a good home: "));
            prop_assert_eq!(share_text(&i, area.as_deref()).unwrap(), text.clone());
            // Faults are the last list to be trimmed: the worst is always told while it fits.
            if let Some(f) = i.faults.first()
                && f.text.chars().count() <= 150
                && i.name.as_str().chars().count() <= 60
            {
                prop_assert!(text.contains(&f.text), "{text:?}");
            }
        }

        #[test]
        fn a_title_always_fits(name in "[A-Za-zé0-9]{1,30}( [A-Za-zé0-9,]{1,30}){0,12}", profile in words()) {
            let mut i = power_bank();
            i.name = ItemName::new(&crate::text::clip(&name, 200)).unwrap();
            i.profile = profile;
            let t = draft(&i, None).unwrap().title;
            prop_assert!(t.chars().count() <= TITLE_MAX);
            prop_assert!(!t.is_empty());
        }

        #[test]
        fn cutting_keeps_whole_words(text in "[a-z]{1,12}( [a-z]{1,12}){0,20}", max in 12usize..120) {
            let cut = cut_at_word(&text, max);
            prop_assert!(cut.chars().count() <= max);
            prop_assert!(text.starts_with(&cut));
            let whole = text.len() == cut.len() || text[cut.len()..].starts_with(' ');
            prop_assert!(whole, "{cut:?} cuts a word of {text:?}");
        }
    }
}
