//! The function tools of the proposal loop and their compact outputs.
//!
//! Tool outputs are resent at every step of the loop, so their size is paid for again and again. The seed's
//! `list_inventory` gives each buildable item's id, name, item_type, profile, condition, intent, availability and
//! current fields as `value unit`; here each of those is written once for all the lines it applies to: intent and
//! availability in the header (they are the same for every buildable item), the type and its fields' names and
//! units in a `#type|key unit|...` line, and one `id+condition name|profile|values` line per item, the condition a
//! letter after the id (none for `good`) and the values space-separated in the type's order. Nothing reads these outputs back but the model: the local planner
//! plans from the stores, and the tests read the format back only to show nothing is lost.

use std::collections::HashMap;
use std::fmt::Write as _;
use trove_domain::item::{Condition, Item, ItemLine, Measurement};
use trove_domain::template::{Requirement, Template};
use trove_domain::units::{Unit, write_number};

/// Name of the tool listing every buildable item.
pub const LIST_INVENTORY: &str = "list_inventory";
/// Name of the tool listing the templates.
pub const TEMPLATE_CATALOG: &str = "template_catalog";
/// Name of the tool giving one item in full.
pub const ITEM_DETAILS: &str = "item_details";

const INVENTORY_HEADER: &str = "items a build may use (intent keep, available; items no catalogue requirement can take are \
left out; item_details gives an item's profile, every field, faults and tests): #type|field unit|... (the fields \
some requirement bounds) then per row ids+condition[xN] name|values (- unmeasured); ids: one id, or like items' ids \
(same name, condition, values and units) joined by commas, a-b for every id from a to b; condition N new, L \
like_new, F fair, P poor, X for_parts, else good; xN: N units available (a stock) of each, else 1; ^ in place of \
the name: the row above's name; a line =words opens rows named words then the row's own text, up to the next = \
line (a bare = closes it) or # line";
const CATALOG_HEADER: &str =
    "templates; id|label|goal|effort|requirements as key: label (key? = optional, key xN = N units)";

/// Makes a free text safe for one column: no column separator, no line break.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_cell(&mut out, text);
    out
}

/// Which items some requirement of `templates` may take ([`Requirement::may_fit`]): the requirements indexed by
/// the item types they accept, so each item is checked only against those of its own type.
pub struct Takers<'t> {
    by_type: HashMap<&'t str, Vec<&'t Requirement>>,
}

impl<'t> Takers<'t> {
    pub fn of(templates: &'t [Template]) -> Self {
        let mut by_type: HashMap<&str, Vec<&Requirement>> = HashMap::new();
        for requirement in templates.iter().flat_map(|t| &t.requirements) {
            for item_type in &requirement.item_types {
                by_type.entry(item_type.as_str()).or_default().push(requirement);
            }
        }
        Self { by_type }
    }

    /// Whether some requirement may take `item`.
    pub fn may_take(&self, item: &ItemLine) -> bool {
        self.by_type.get(item.item_type.as_str()).is_some_and(|rs| rs.iter().any(|r| r.may_fit(item)))
    }

    /// Whether some requirement taking items of `item_type` bounds the field `key`: the fields the machine check
    /// reads of that type, the only ones a listing needs to show.
    pub fn bound(&self, item_type: &str, key: &str) -> bool {
        self.by_type.get(item_type).is_some_and(|rs| rs.iter().any(|r| r.fields.iter().any(|b| b.key.as_str() == key)))
    }
}

/// The output of `list_inventory`: of `items` (the caller passes only buildable ones), those some requirement of
/// `templates` may take, since no build can use the others.
///
/// Items are grouped by type, so the type and its fields' names and units are written once per type, and only
/// the fields some requirement taking that type bounds are shown: the rest, and the profile, are in
/// `item_details`, which the model asks of the items it considers. Like items (same name, condition, shown values
/// and available units: a box of identical cells entered one by one, or cables alike in all a build checks) are
/// one row whose ids are joined by commas, a run of consecutive ids written `a-b`. Each row carries its ids with
/// the condition's letter (none for `good`), the units available when more than one, the name and the values;
/// rows are in name order, and a row with the name of the row above writes `^` for it:
///
/// ```text
/// items a build may use (...)
/// #lithium_cell|capacity mAh
/// 12-13,19 Samsung 25R 18650|2500
/// 14F ^|2400
/// 15 ^|-
/// ```
pub fn inventory_output<'a>(items: impl IntoIterator<Item = &'a ItemLine>, templates: &[Template]) -> String {
    inventory_output_with(items, templates, Levers::ALL)
}

/// What makes the listing small, each of which may be switched off to measure what it saves
/// (`bench/proposal_cost`); Trove always lists with [`Levers::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levers {
    /// Leave out items no requirement of the catalogue may take.
    pub only_takeable: bool,
    /// One row for like items, their ids joined.
    pub like_items_together: bool,
    /// `^` for a row's name and profile when the row above has the same, or for its name alone.
    pub ditto: bool,
    /// Rows without the profile (`item_details` gives it), so items differing only there are alike.
    pub no_profile: bool,
    /// Only the fields some requirement taking the type bounds (`item_details` gives every field).
    pub only_bound_fields: bool,
    /// A run of consecutive ids in a row written `a-b`.
    pub id_runs: bool,
    /// Rows whose names begin with the same words, next to each other, under one `=words` line naming them
    /// ([`stem_runs`]; only with `no_profile`).
    pub stems: bool,
}

impl Levers {
    pub const ALL: Levers = Levers {
        only_takeable: true,
        like_items_together: true,
        ditto: true,
        no_profile: true,
        only_bound_fields: true,
        id_runs: true,
        stems: true,
    };
    pub const NONE: Levers = Levers {
        only_takeable: false,
        like_items_together: false,
        ditto: false,
        no_profile: false,
        only_bound_fields: false,
        id_runs: false,
        stems: false,
    };
}

/// [`inventory_output`] with only some of its [`Levers`].
pub fn inventory_output_with<'a>(
    items: impl IntoIterator<Item = &'a ItemLine>,
    templates: &[Template],
    levers: Levers,
) -> String {
    let takers = Takers::of(templates);
    let mut sorted: Vec<&ItemLine> =
        items.into_iter().filter(|i| !levers.only_takeable || takers.may_take(i)).collect();
    sorted.sort_by(|a, b| a.item_type.cmp(&b.item_type).then(a.id.cmp(&b.id)));
    let mut out = String::with_capacity(INVENTORY_HEADER.len() + sorted.len() * 24);
    out.push_str(INVENTORY_HEADER);
    let mut start = 0;
    while start < sorted.len() {
        let item_type = &sorted[start].item_type;
        let end = start + sorted[start..].iter().take_while(|i| &i.item_type == item_type).count();
        write_type(&mut out, item_type.as_str(), &sorted[start..end], &takers, levers);
        start = end;
    }
    out
}

/// One row of the listing before it is written: what makes items alike, and their ids.
struct Row<'a> {
    name: String,
    profile: String,
    condition: Condition,
    available: u32,
    values: String,
    ids: Vec<&'a ItemLine>,
}

impl Row<'_> {
    /// What like items share, in the order rows are listed.
    fn likeness(&self) -> (&str, &str, &str, u32, &str) {
        (&self.name, &self.profile, condition_code(self.condition), self.available, &self.values)
    }
}

/// Writes one type's header line and its rows.
fn write_type(out: &mut String, item_type: &str, group: &[&ItemLine], takers: &Takers, levers: Levers) {
    // Each item's current fields, read once.
    let fields: Vec<Vec<&Measurement>> = group.iter().map(|item| item.current_measurements()).collect();
    // The type's columns: every (key, unit) measured on any of its items. A key measured in two dimensions
    // (capacity in mAh and in Wh) gets two columns, so no value is lost.
    let mut columns: Vec<(&str, Unit)> = Vec::new();
    for m in fields.iter().flatten() {
        if levers.only_bound_fields && !takers.bound(item_type, m.key.as_str()) {
            continue;
        }
        if !columns.contains(&(m.key.as_str(), m.unit)) {
            columns.push((m.key.as_str(), m.unit));
        }
    }
    columns.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.symbol().cmp(b.1.symbol())));
    let _ = write!(out, "\n#{item_type}");
    for (key, unit) in &columns {
        let _ = write!(out, "|{key} {unit}");
    }
    let mut rows: Vec<Row> = group
        .iter()
        .zip(&fields)
        .map(|(item, fields)| {
            let mut values = String::new();
            for (i, column) in columns.iter().enumerate() {
                if i > 0 {
                    values.push(' ');
                }
                match fields.iter().find(|m| (m.key.as_str(), m.unit) == *column) {
                    Some(m) => write_number(&mut values, m.value),
                    None => values.push('-'),
                }
            }
            Row {
                name: cell(item.name.as_str()),
                profile: if levers.no_profile { String::new() } else { cell(&item.profile) },
                condition: item.condition,
                available: item.units().available,
                values,
                ids: vec![*item],
            }
        })
        .collect();
    // Like items next to each other (then by id), and merged into the first of them.
    rows.sort_by(|a, b| a.likeness().cmp(&b.likeness()).then(a.ids[0].id.0.cmp(&b.ids[0].id.0)));
    let mut merged: Vec<Row> = Vec::with_capacity(rows.len());
    for row in rows {
        match merged.last_mut() {
            Some(last) if levers.like_items_together && last.likeness() == row.likeness() => {
                last.ids.extend(row.ids);
            }
            _ => merged.push(row),
        }
    }
    // Runs of rows whose names begin with the same words, under one `=words` line naming them.
    let cuts: Vec<Option<usize>> = if levers.stems && levers.no_profile {
        let names: Vec<&str> = merged.iter().map(|row| row.name.as_str()).collect();
        stem_runs(&names)
    } else {
        vec![None; merged.len()]
    };
    let mut open: Option<&str> = None;
    let mut above: Option<(&str, &str)> = None;
    for (row, cut) in merged.iter().zip(&cuts) {
        let group = cut.map(|cut| &row.name[..cut]);
        if group != open {
            // A new stem replaces the one open; a bare `=` closes it before a row named in full.
            out.push_str("\n=");
            out.push_str(group.unwrap_or_default());
            open = group;
        }
        out.push('\n');
        let ids: Vec<i64> = row.ids.iter().map(|item| item.id.0).collect();
        write_ids(out, &ids, levers.id_runs);
        out.push_str(condition_code(row.condition));
        if row.available > 1 {
            let _ = write!(out, "x{}", row.available);
        }
        // `ids name`: a space costs nothing (the name's first word takes it), a separator a token per row.
        out.push(' ');
        match above {
            Some((name, _)) if levers.ditto && levers.no_profile && name == row.name => out.push('^'),
            _ if let Some(cut) = cut => out.push_str(&row.name[cut + 1..]),
            _ if levers.no_profile => out.push_str(&row.name),
            Some((name, profile)) if levers.ditto && name == row.name && profile == row.profile => out.push('^'),
            Some((name, _)) if levers.ditto && name == row.name => {
                out.push_str("^|");
                out.push_str(&row.profile);
            }
            _ => {
                out.push_str(&row.name);
                out.push('|');
                out.push_str(&row.profile);
            }
        }
        if !columns.is_empty() {
            out.push('|');
            out.push_str(&row.values);
        }
        above = Some((&row.name, &row.profile));
    }
}

/// Where runs of `names` (in listing order) that begin with the same words are put under one stem: for each name,
/// the byte length of its stem (the words before a space), or `None` for a name written in full.
///
/// From the first name not yet in a run, every stem it has (each of its words but the last, and the words before
/// them) is tried for the run of names that follow with the same one; the run kept is the one that saves the most
/// text (its stem written once instead of on each row, the stem line's own cost taken off), if any does. A run
/// of one saves nothing.
///
/// ```text
/// [HDMI cable 2 m black, HDMI cable 2 m white, HDMI cable 5 m, USB-C cable]
///   -> [Some(10), Some(10), Some(10), None]     (=HDMI cable: 2 m black, 2 m white, 5 m)
/// ```
fn stem_runs(names: &[&str]) -> Vec<Option<usize>> {
    /// What a stem line costs beyond its words, in characters: the line break, `=`, and the bare `=` that may
    /// close it.
    const STEM_LINE: usize = 4;
    let mut cuts = vec![None; names.len()];
    let mut i = 0;
    while i < names.len() {
        let mut best: Option<(usize, usize, usize)> = None;
        for (cut, _) in names[i].match_indices(' ') {
            let stem = &names[i][..cut];
            let run = names[i..]
                .iter()
                .take_while(|n| n.len() > cut + 1 && n.as_bytes()[cut] == b' ' && n.starts_with(stem))
                .count();
            // Written once instead of `run` times, with the space after it.
            let saved = (run.saturating_sub(1) * (cut + 1)).saturating_sub(STEM_LINE);
            if saved > 0 && best.is_none_or(|(most, _, _)| saved >= most) {
                best = Some((saved, cut, run));
            }
        }
        match best {
            Some((_, cut, run)) => {
                cuts[i..i + run].fill(Some(cut));
                i += run;
            }
            None => i += 1,
        }
    }
    cuts
}

/// Writes a row's ids (ascending) joined by commas, with `runs` a run of three or more consecutive ids as `a-b`
/// (a run of two is as short either way).
///
/// ```text
/// [3, 4, 5, 6, 9, 11, 12] -> 3-6,9,11,12
/// ```
fn write_ids(out: &mut String, ids: &[i64], runs: bool) {
    let mut i = 0;
    while i < ids.len() {
        if i > 0 {
            out.push(',');
        }
        let mut end = i;
        while runs && end + 1 < ids.len() && ids[end + 1] == ids[end] + 1 {
            end += 1;
        }
        if end >= i + 2 {
            let _ = write!(out, "{}-{}", ids[i], ids[end]);
            i = end + 1;
        } else {
            let _ = write!(out, "{}", ids[i]);
            i += 1;
        }
    }
}

/// The condition's letter in the listing; `good`, the most common, has none.
fn condition_code(c: Condition) -> &'static str {
    match c {
        Condition::New => "N",
        Condition::LikeNew => "L",
        Condition::Good => "",
        Condition::Fair => "F",
        Condition::Poor => "P",
        Condition::ForParts => "X",
    }
}

/// Appends a free text as one column: no column separator, no line break.
fn push_cell(out: &mut String, text: &str) {
    out.extend(text.trim().chars().map(|c| if matches!(c, '|' | '\n' | '\r') { ' ' } else { c }));
}

/// The output of `template_catalog`.
pub fn catalog_output(templates: &[Template]) -> String {
    let mut out = String::from(CATALOG_HEADER);
    for t in templates {
        let reqs = t
            .requirements
            .iter()
            .map(|r| {
                let count = if r.count > 1 { format!(" x{}", r.count) } else { String::new() };
                format!("{}{}{count}: {}", r.key, if r.optional { "?" } else { "" }, cell(&r.label).replace(';', ","))
            })
            .collect::<Vec<_>>()
            .join("; ");
        out.push_str(&format!("\n{}|{}|{}|{}|{}", t.id, cell(&t.label), cell(&t.goal), cell(&t.effort), reqs));
    }
    out
}

/// The output of `item_details` for one item: its line (with type, intent and availability, since it may be
/// any item of the household) and its faults, tests, accessories and components.
pub fn details_output(item: &Item) -> String {
    let mut out = format!(
        "id|name|item_type|condition|intent|availability|profile|fields\n{}|{}|{}|{}|{}|{}|{}|{}",
        item.id,
        cell(item.name.as_str()),
        item.item_type,
        item.condition,
        item.intent,
        item.availability,
        cell(&item.profile),
        item.fields_line()
    );
    if item.quantity != 1 {
        let units = item.units();
        let _ = write!(
            out,
            "\nunits: {} in all, {} held by projects, {} available",
            item.quantity, units.held, units.available
        );
    }
    if item.gone.is_some() {
        out.push_str("\ngone: yes");
    }
    let faults = item.faults.iter().map(|f| format!("{}: {}", f.severity, cell(&f.text))).collect::<Vec<_>>();
    out.push_str(&format!("\nfaults: {}", if faults.is_empty() { "none".into() } else { faults.join("; ") }));
    let tests = item
        .tests_done
        .iter()
        .map(|t| {
            let value = t.value.map(|v| format!(" {v}")).unwrap_or_default();
            format!("{} {}{value}", cell(&t.name), t.result)
        })
        .collect::<Vec<_>>();
    out.push_str(&format!("\ntests: {}", if tests.is_empty() { "none".into() } else { tests.join("; ") }));
    let acc = item.accessories.iter().map(|a| cell(a)).collect::<Vec<_>>();
    out.push_str(&format!("\naccessories: {}", if acc.is_empty() { "none".into() } else { acc.join("; ") }));
    let comps = item.components.iter().map(ToString::to_string).collect::<Vec<_>>();
    out.push_str(&format!("\ncomponents: {}", if comps.is_empty() { "none".into() } else { comps.join(", ") }));
    out
}

/// The output of a tool that failed: `{"error": "..."}`.
pub fn error_output(message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use trove_domain::item::Severity;
    use trove_domain::units::{self, Quantity};

    /// One line of `list_inventory`, read back.
    #[derive(Debug, Clone, PartialEq)]
    pub struct InventoryLine {
        pub id: i64,
        pub name: String,
        pub item_type: String,
        pub condition: Condition,
        pub profile: String,
        pub fields: Vec<(String, Quantity)>,
        /// Units available: 1 unless the line says `xN`.
        pub units: u32,
    }

    /// Reads a `list_inventory` output back, one line per item (a row of like items gives one per id); rows that
    /// do not parse are skipped.
    pub fn parse_inventory(output: &str) -> Vec<InventoryLine> {
        let mut item_type = String::new();
        let mut columns: Vec<(String, String)> = Vec::new();
        let mut above = (String::new(), String::new());
        let mut stem: Option<String> = None;
        let mut out = Vec::new();
        for line in output.lines().skip(1) {
            if let Some(words) = line.strip_prefix('=') {
                stem = Some(words.to_owned()).filter(|w| !w.is_empty());
                continue;
            }
            if let Some(header) = line.strip_prefix('#') {
                stem = None;
                let mut parts = header.split('|');
                item_type = parts.next().unwrap_or_default().trim().to_owned();
                columns = parts
                    .filter_map(|c| c.trim().rsplit_once(' ').map(|(k, u)| (k.to_owned(), u.to_owned())))
                    .collect();
                continue;
            }
            let Some((ids, rest)) = line.split_once(' ') else { continue };
            let cols: Vec<&str> = rest.split('|').collect();
            let (name, profile, values) = match (cols.as_slice(), columns.is_empty()) {
                (["^"], true) => (above.0.clone(), above.1.clone(), ""),
                (["^", values], false) => (above.0.clone(), above.1.clone(), *values),
                ([name], true) => (name.to_string(), String::new(), ""),
                ([name, profile], true) => (name.to_string(), profile.to_string(), ""),
                ([name, values], false) => (name.to_string(), String::new(), *values),
                ([name, profile, values], false) => (name.to_string(), profile.to_string(), *values),
                _ => continue,
            };
            let name = match &stem {
                _ if name == "^" => above.0.clone(),
                Some(stem) => format!("{stem} {name}"),
                None => name,
            };
            above = (name.clone(), profile.clone());
            let values: Vec<&str> = if columns.is_empty() { Vec::new() } else { values.split(' ').collect() };
            if values.len() != columns.len() {
                continue;
            }
            let (ids, units) = match ids.split_once('x') {
                Some((ids, n)) => (ids, n.parse().unwrap_or(0)),
                None => (ids, 1),
            };
            let code_at = ids.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(ids.len());
            let condition = Condition::ALL.iter().copied().find(|c| condition_code(*c) == &ids[code_at..]);
            let Some(condition) = condition else { continue };
            let fields: Vec<(String, Quantity)> = columns
                .iter()
                .zip(&values)
                .filter(|(_, v)| **v != "-")
                .filter_map(|((k, u), v)| Some((k.clone(), units::normalise(v.parse().ok()?, u).ok()?)))
                .collect();
            let ids = ids[..code_at].split(',').flat_map(|id| -> Vec<i64> {
                match id.split_once('-') {
                    Some((a, b)) => match (a.parse(), b.parse()) {
                        (Ok(a), Ok(b)) => (a..=b).collect(),
                        _ => Vec::new(),
                    },
                    None => id.parse().into_iter().collect(),
                }
            });
            for id in ids {
                out.push(InventoryLine {
                    id,
                    name: name.clone(),
                    item_type: item_type.clone(),
                    condition,
                    profile: profile.clone(),
                    fields: fields.clone(),
                    units,
                });
            }
        }
        out
    }

    /// One line of `template_catalog`, read back.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct CatalogLine {
        pub id: i64,
        pub label: String,
        /// `(key, optional, count)` of each requirement.
        pub requirements: Vec<(String, bool, u32)>,
    }

    /// Reads a `template_catalog` output back; lines that do not parse are skipped.
    pub fn parse_catalog(output: &str) -> Vec<CatalogLine> {
        output
            .lines()
            .skip(1)
            .filter_map(|line| {
                let cols: Vec<&str> = line.splitn(5, '|').collect();
                let [id, label, _goal, _effort, reqs] = cols[..] else { return None };
                let requirements = reqs
                    .split("; ")
                    .filter_map(|r| {
                        let (key, _) = r.split_once(':')?;
                        let (key, count) = match key.trim().split_once(" x") {
                            Some((key, n)) => (key, n.parse().ok()?),
                            None => (key.trim(), 1),
                        };
                        Some(match key.strip_suffix('?') {
                            Some(k) => (k.to_owned(), true, count),
                            None => (key.to_owned(), false, count),
                        })
                    })
                    .collect();
                Some(CatalogLine { id: id.trim().parse().ok()?, label: label.to_owned(), requirements })
            })
            .collect()
    }

    /// The faults of an `item_details` output, read back.
    pub fn parse_details_faults(output: &str) -> Vec<(Severity, String)> {
        output
            .lines()
            .find_map(|l| l.strip_prefix("faults: "))
            .filter(|f| *f != "none")
            .map(|f| {
                f.split("; ")
                    .filter_map(|x| {
                        let (sev, text) = x.split_once(": ")?;
                        Some((Severity::parse(sev)?, text.to_owned()))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    use chrono::{TimeZone, Utc};
    use trove_domain::item::{
        Fault, Intent, ItemName, ItemType, Measurement, MeasurementSource, NewItem, TestDone, TestResult,
    };
    use trove_domain::template::{FieldBound, NewTemplate, requirement};
    use trove_domain::{ItemId, TemplateId};

    fn item(id: i64, name: &str, item_type: &str) -> Item {
        let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let (name, item_type) = (ItemName::new(name).unwrap(), ItemType::new(item_type).unwrap());
        let mut new = NewItem::new(name, item_type, "Brand | Model\nline two".into(), Condition::LikeNew, Intent::Keep);
        new.measurements = vec![
            Measurement::new("capacity", 3.4, "Ah", at, MeasurementSource::Label).unwrap(),
            Measurement::new("voltage", 3.7, "V", at, MeasurementSource::Label).unwrap(),
        ];
        new.faults = vec![Fault::new("dent", Severity::Minor).unwrap()];
        new.tests_done =
            vec![TestDone::new("capacity test", TestResult::Pass, units::parse("3300 mAh").ok(), at, None).unwrap()];
        new.accessories = vec!["case".into()];
        new.components = vec![ItemId(4)];
        new.stored(ItemId(id), at)
    }

    fn lines(items: &[Item]) -> Vec<ItemLine> {
        items.iter().map(ItemLine::from).collect()
    }

    /// A catalogue of one template taking any item of `types`, whatever its condition and fields, and with an
    /// optional requirement of each type bounding capacity and voltage (so the listing shows them).
    fn taking(types: &[&str]) -> Vec<Template> {
        let bounds = || {
            vec![
                FieldBound::new("capacity", Some(0.0), None, "mAh").unwrap(),
                FieldBound::new("voltage", Some(0.0), None, "V").unwrap(),
            ]
        };
        let reqs = types
            .iter()
            .flat_map(|t| {
                let measured = requirement(&format!("{t}_measured"), "measured", &[t], None, true, bounds());
                [requirement(t, "any", &[t], None, false, vec![]).unwrap(), measured.unwrap()]
            })
            .collect();
        vec![NewTemplate::new("Anything", "Use it.", "an hour", &[], reqs).unwrap().with_id(TemplateId(1))]
    }

    /// The listing of `items` under a catalogue taking every type among them.
    fn listed(items: &[Item]) -> String {
        let mut types: Vec<&str> = items.iter().map(|i| i.item_type.as_str()).collect();
        types.sort_unstable();
        types.dedup();
        inventory_output(&lines(items), &taking(&types))
    }

    #[test]
    fn inventory_round_trips_and_groups_by_type_and_condition() {
        let mut pi = item(1, "Pi", "single_board_computer");
        pi.measurements.clear();
        let mut worn = item(4, "Cell D", "lithium_cell");
        worn.condition = Condition::Fair;
        worn.measurements.retain(|m| m.key.as_str() == "voltage");
        let mut good = item(3, "Cell A", "lithium_cell");
        good.condition = Condition::Good;
        // A stock of 10 with 4 held by a project: 6 available.
        good.quantity = 10;
        good.units_held = 4;
        let items = [good, pi, worn, item(2, "Cell B", "lithium_cell")];
        let out = listed(&items);
        assert_eq!(
            out.lines().skip(1).collect::<Vec<_>>(),
            vec![
                "#lithium_cell|capacity mAh|voltage V",
                "=Cell",
                "3x6 A|3400 3.7",
                "2L B|3400 3.7",
                "4F D|- 3.7",
                "#single_board_computer",
                "1L Pi",
            ]
        );
        let back = parse_inventory(&out);
        let summary: Vec<(i64, &str, Condition, usize)> =
            back.iter().map(|l| (l.id, l.item_type.as_str(), l.condition, l.fields.len())).collect();
        assert_eq!(
            summary,
            vec![
                (3, "lithium_cell", Condition::Good, 2),
                (2, "lithium_cell", Condition::LikeNew, 2),
                (4, "lithium_cell", Condition::Fair, 1),
                (1, "single_board_computer", Condition::LikeNew, 0),
            ]
        );
        assert_eq!(back[0].fields[0].0, "capacity");
        assert_eq!(back[0].fields[0].1, Quantity { value: 3400.0, unit: Unit::MilliampHour });
        assert_eq!(back[2].fields, vec![("voltage".to_owned(), Quantity { value: 3.7, unit: Unit::Volt })]);
        assert_eq!(back.iter().map(|l| l.units).collect::<Vec<_>>(), [6, 1, 1, 1]);
        assert_eq!(back[1].name, "Cell B");
        // The profile is not on the row: item_details gives it.
        assert_eq!(back[0].profile, "");
        assert!(!out.contains("Brand"), "{out}");
        assert!(details_output(&items[0]).contains("|Brand   Model line two|"));
    }

    #[test]
    fn a_key_measured_in_two_dimensions_keeps_both_values() {
        let mut pack = item(7, "Pack", "battery_pack");
        pack.measurements.retain(|m| m.key.as_str() == "capacity");
        let mut other = item(8, "Other pack", "battery_pack");
        other.measurements =
            vec![Measurement::new("capacity", 99.0, "Wh", pack.created_at, MeasurementSource::Label).unwrap()];
        let out = listed(&[pack, other]);
        assert_eq!(out.lines().nth(1), Some("#battery_pack|capacity Wh|capacity mAh"), "{out}");
        let back = parse_inventory(&out);
        // Rows in name order: "Other pack" first.
        assert_eq!(back[0].fields, vec![("capacity".to_owned(), Quantity { value: 99.0, unit: Unit::WattHour })]);
        assert_eq!(back[1].fields, vec![("capacity".to_owned(), Quantity { value: 3400.0, unit: Unit::MilliampHour })]);
    }

    #[test]
    fn the_listing_shows_the_current_fields() {
        let mut cell = item(9, "Cell", "lithium_cell");
        let at = |d: u32| Utc.with_ymd_and_hms(2026, 2, d, 0, 0, 0).unwrap();
        cell.measurements = [(3400.0, 2), (3100.0, 5), (2900.0, 3), (3000.0, 5), (2500.0, 1)]
            .iter()
            .map(|(v, d)| Measurement::new("capacity", *v, "mAh", at(*d), MeasurementSource::Test).unwrap())
            .collect();
        let current: Vec<(&str, f64)> = cell.current_fields().iter().map(|(k, m)| (k.as_str(), m.value)).collect();
        assert_eq!(current, vec![("capacity", 3000.0)], "the later recorded of two at the same time");
        let shown: Vec<(&str, f64)> = cell.current_measurements().iter().map(|m| (m.key.as_str(), m.value)).collect();
        assert_eq!(shown, current);
        assert!(listed(&[cell]).ends_with("|3000"));
    }

    #[test]
    fn like_items_share_a_row_and_a_repeated_name_is_written_once() {
        // 4 differs from 5, 6 and 9 only by its profile, which the row does not show: they are alike.
        let cells: Vec<Item> = [5, 9, 6].iter().map(|id| item(*id, "Cell", "lithium_cell")).collect();
        let mut worn = item(7, "Cell", "lithium_cell");
        worn.condition = Condition::Fair;
        let mut stock = item(8, "Cell", "lithium_cell");
        stock.quantity = 4;
        let mut other = item(4, "Cell", "lithium_cell");
        other.profile = "another brand".into();
        let items: Vec<Item> = cells.into_iter().chain([worn, stock, other]).collect();
        let out = listed(&items);
        assert_eq!(
            out.lines().skip(1).collect::<Vec<_>>(),
            vec!["#lithium_cell|capacity mAh|voltage V", "7F Cell|3400 3.7", "4-6,9L ^|3400 3.7", "8Lx4 ^|3400 3.7",],
            "{out}"
        );
        let back = parse_inventory(&out);
        let ids: Vec<(i64, Condition, u32, &str)> =
            back.iter().map(|l| (l.id, l.condition, l.units, l.profile.as_str())).collect();
        assert_eq!(
            ids,
            vec![
                (7, Condition::Fair, 1, ""),
                (4, Condition::LikeNew, 1, ""),
                (5, Condition::LikeNew, 1, ""),
                (6, Condition::LikeNew, 1, ""),
                (9, Condition::LikeNew, 1, ""),
                (8, Condition::LikeNew, 4, ""),
            ]
        );
        assert!(back.iter().all(|l| l.name == "Cell" && l.fields.len() == 2), "{back:?}");
    }

    #[test]
    fn only_items_some_requirement_may_take_are_listed() {
        let bound = FieldBound::new("capacity", Some(3000.0), None, "mAh").unwrap();
        let cell = requirement("cell", "a cell", &["lithium_cell"], Some(Condition::Fair), false, vec![bound]);
        let board = requirement("board", "a board", &["single_board_computer"], None, false, vec![]);
        let template = NewTemplate::new("Light", "Light up.", "an hour", &[], vec![cell.unwrap(), board.unwrap()]);
        let catalogue = vec![template.unwrap().with_id(TemplateId(1))];
        let fits = item(1, "Good cell", "lithium_cell");
        let mut poor = item(2, "Poor cell", "lithium_cell");
        poor.condition = Condition::Poor;
        let mut weak = item(3, "Weak cell", "lithium_cell");
        weak.measurements.retain(|m| m.key.as_str() == "voltage");
        weak.measurements
            .push(Measurement::new("capacity", 2.0, "Ah", weak.created_at, MeasurementSource::Test).unwrap());
        let mut unmeasured = item(4, "Unmeasured cell", "lithium_cell");
        unmeasured.measurements.clear();
        // A major fault is not on the line: only its details tell, so the item stays listed.
        let mut faulty = item(5, "Faulty cell", "lithium_cell");
        faulty.faults = vec![Fault::new("swollen", Severity::Major).unwrap()];
        let lamp = item(6, "Lamp", "lamp");
        let pi = item(7, "Pi", "single_board_computer");
        let all = [fits, poor, weak, unmeasured, faulty, lamp, pi];
        let ids: Vec<i64> = parse_inventory(&inventory_output(&lines(&all), &catalogue)).iter().map(|l| l.id).collect();
        assert_eq!(ids, vec![5, 1, 7]);
        // Nothing is listed for a household without templates: no build can use anything.
        assert_eq!(inventory_output(&lines(&all), &[]).lines().count(), 1);
        // With every lever off, every item given is listed.
        let every = inventory_output_with(&lines(&all), &catalogue, Levers::NONE);
        assert_eq!(parse_inventory(&every).len(), all.len());
    }

    #[test]
    fn names_beginning_with_the_same_words_share_a_stem_line() {
        let named = |id, name: &str| {
            let mut cable = item(id, name, "cable");
            cable.measurements.clear();
            cable
        };
        let items = [
            named(1, "HDMI cable 2 m black"),
            named(2, "HDMI cable 2 m white"),
            named(3, "HDMI cable 2 m white"),
            named(4, "HDMI cable 5 m"),
            named(5, "USB-C cable 1 m red"),
            named(6, "USB-C cable 1 m blue"),
            named(7, "Cat6 cable"),
            named(8, "Velcro ties"),
        ];
        let out = listed(&items);
        assert_eq!(
            out.lines().skip(1).collect::<Vec<_>>(),
            vec![
                "#cable",
                "7L Cat6 cable",
                "=HDMI cable",
                "1L 2 m black",
                "2,3L 2 m white",
                "4L 5 m",
                "=USB-C cable 1 m",
                "6L blue",
                "5L red",
                "=",
                "8L Velcro ties",
            ],
            "{out}"
        );
        let back: Vec<(i64, String)> = parse_inventory(&out).into_iter().map(|l| (l.id, l.name)).collect();
        let mut expected: Vec<(i64, String)> = items.iter().map(|i| (i.id.0, i.name.as_str().to_owned())).collect();
        expected.sort_by_key(|(id, name)| (name.clone(), *id));
        assert_eq!(back, expected);
        // Without the lever every row names its item in full.
        let full = inventory_output_with(&lines(&items), &taking(&["cable"]), Levers { stems: false, ..Levers::ALL });
        assert!(!full.lines().any(|l| l.starts_with('=')), "{full}");
        assert!(full.contains("\n1L HDMI cable 2 m black\n"), "{full}");
    }

    #[test]
    fn a_run_of_consecutive_ids_is_written_from_first_to_last() {
        let check = |ids: &[i64], expected: &str| {
            let mut out = String::new();
            write_ids(&mut out, ids, true);
            assert_eq!(out, expected, "{ids:?}");
        };
        check(&[7], "7");
        check(&[3, 4], "3,4");
        check(&[3, 4, 5, 6, 9, 11, 12], "3-6,9,11,12");
        check(&[1, 3, 4, 5], "1,3-5");
        check(&[10, 11, 12, 20, 21, 22, 23], "10-12,20-23");
        let mut out = String::new();
        write_ids(&mut out, &[3, 4, 5], false);
        assert_eq!(out, "3,4,5");
        // Read back, a row of a run names every id in it.
        let cells: Vec<Item> = (20..=25).map(|id| item(id, "Cell", "lithium_cell")).collect();
        let back: Vec<i64> = parse_inventory(&listed(&cells)).iter().map(|l| l.id).collect();
        assert_eq!(back, (20..=25).collect::<Vec<_>>());
    }

    #[test]
    fn only_the_fields_some_requirement_bounds_are_listed_and_details_give_the_rest() {
        let mut cell = item(1, "Cell", "lithium_cell");
        let at = cell.created_at;
        cell.measurements.push(Measurement::new("weight", 46.0, "g", at, MeasurementSource::Label).unwrap());
        let mut other = item(2, "Cell", "lithium_cell");
        other.measurements.push(Measurement::new("weight", 48.0, "g", at, MeasurementSource::Label).unwrap());
        // A requirement bounding capacity: capacity is shown, voltage and weight are not.
        let bound = FieldBound::new("capacity", Some(3000.0), None, "mAh").unwrap();
        let cells = requirement("cell", "a cell", &["lithium_cell"], None, false, vec![bound]).unwrap();
        let catalogue =
            vec![NewTemplate::new("Light", "Light up.", "an hour", &[], vec![cells]).unwrap().with_id(TemplateId(1))];
        let items = [cell, other];
        let out = inventory_output(&lines(&items), &catalogue);
        // The two differ only in weight, which no requirement reads: one row.
        assert_eq!(out.lines().skip(1).collect::<Vec<_>>(), vec!["#lithium_cell|capacity mAh", "1,2L Cell|3400"]);
        let details = details_output(&items[0]);
        assert!(details.contains("voltage") && details.contains("weight") && details.contains("capacity"), "{details}");
        // Without the lever, every field is a column and the two are two rows.
        let all = Levers { only_bound_fields: false, ..Levers::ALL };
        let every = inventory_output_with(&lines(&items), &catalogue, all);
        assert_eq!(every.lines().nth(1), Some("#lithium_cell|capacity mAh|voltage V|weight g"), "{every}");
        assert_eq!(parse_inventory(&every).len(), 2);
        assert_eq!(every.lines().count(), 4, "{every}");
    }

    #[test]
    fn the_listing_is_the_same_whatever_order_the_items_come_in() {
        let mut items: Vec<Item> = (1..=12)
            .map(|id| {
                let mut cell = item(id, if id % 3 == 0 { "Cell A" } else { "Cell B" }, "lithium_cell");
                cell.condition = if id % 2 == 0 { Condition::Good } else { Condition::Fair };
                cell
            })
            .collect();
        let first = listed(&items);
        items.reverse();
        items.swap(2, 7);
        assert_eq!(listed(&items), first, "the cached prefix must be byte-identical for the same items");
    }

    #[test]
    fn catalog_round_trips() {
        let t = NewTemplate::new(
            "Console",
            "Play | games",
            "an afternoon",
            &[],
            vec![
                requirement("controller", "an SBC; with HDMI", &["single_board_computer"], None, false, vec![])
                    .unwrap(),
                requirement("pad", "a pad", &["gamepad"], None, true, vec![]).unwrap().with_count(2).unwrap(),
            ],
        )
        .unwrap()
        .with_id(TemplateId(7));
        let out = catalog_output(&[t]);
        assert_eq!(
            out.lines().nth(1).unwrap(),
            "7|Console|Play   games|an afternoon|controller: an SBC, with HDMI; pad? x2: a pad"
        );
        let back = parse_catalog(&out);
        assert_eq!(
            back,
            vec![CatalogLine {
                id: 7,
                label: "Console".into(),
                requirements: vec![("controller".into(), false, 1), ("pad".into(), true, 2)]
            }]
        );
    }

    #[test]
    fn details_carry_everything_else() {
        let out = details_output(&item(5, "Cell", "lithium_cell"));
        assert!(out.contains("\n5|Cell|lithium_cell|like_new|keep|available|"), "{out}");
        assert!(out.contains("faults: minor: dent"));
        assert!(out.contains("tests: capacity test pass 3300 mAh"));
        assert!(out.contains("accessories: case"));
        assert!(out.contains("components: 4"));
        assert_eq!(parse_details_faults(&out), vec![(Severity::Minor, "dent".to_owned())]);
        assert!(!out.contains("units:"), "a single thing says nothing of units");
        let mut stock = item(6, "AA cell", "aa_cell");
        stock.quantity = 10;
        stock.units_held = 4;
        assert!(details_output(&stock).contains("\nunits: 10 in all, 4 held by projects, 6 available"));
    }

    #[test]
    fn error_output_is_json() {
        assert_eq!(error_output("no tool named fly"), r#"{"error":"no tool named fly"}"#);
    }
}
