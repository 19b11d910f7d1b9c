//! Allocation: which spare units fill which requirement of which template, no item giving more units than it
//! has free.
//!
//! The spare items are a [`Stock`]: those with units a project may take ([`Item::units`]: buildable, and for a
//! stock the units no accepted project holds), indexed by type once, so a requirement only ever looks at the
//! items of the types it accepts, and those pass [`Requirement::fits`] (the machine check, without building a
//! reason for a no). A requirement asks for [`Requirement::count`] units (1 for a single thing), from one item
//! or several.
//!
//! Within one template, requirements are matched to units by augmenting paths (a maximum matching, one unit at
//! a time within each item's units), each requirement trying its candidates best first: better condition, then
//! fewer known faults, then the closer fit to the requirement's field bounds, then the lower id. Across
//! templates, a greedy pass adds complete templates one at a time to a joint matching of all their requirements
//! (so units can still move between the templates chosen), each time the one that fits the owner's wish best,
//! then the one that leaves the most other templates addable, so as many projects as possible are complete; no
//! item ever gives more units than it has free. The templates that fit the wish best are proposed even when they
//! cannot be complete, and when fewer than two are complete the best partial ones are added. Optional
//! requirements are filled last, from what is left.

use crate::ids::ItemId;
use crate::item::{Condition, Fault, Item, ItemLine, ItemName, ItemType, Measurement, Severity};
use crate::template::{Facts, Requirement, Template};
use crate::units::Quantity;
use std::cmp::Reverse;
// The indexes of a stock and the matching's maps are keyed by the stock's own strings and indices, hashed by
// the Fx hasher: SipHash, the default, took a large share of a warm proposal at 100,000 items
// (docs/perf/local-planner.md).
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::RefCell;

/// At most this many templates are allocated: more is a list nobody reads.
pub const MAX_ALLOCATIONS: usize = 10;
/// Below this many complete templates, the best partial ones are allocated too.
const MIN_COMPLETE: usize = 2;
/// With partial ones added, allocations stop at this many.
const WITH_PARTIAL: usize = 3;

/// One item as the allocation reads it: borrowed from an [`Item`], or from an [`ItemLine`] (as `list_inventory`
/// shows it: no faults known).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpareItem<'a> {
    pub id: ItemId,
    pub name: &'a ItemName,
    pub item_type: &'a ItemType,
    pub condition: Condition,
    /// The faults known; none for a line.
    pub faults: &'a [Fault],
    /// Every measurement; the current fields derive from it as [`Item::current_measurements`] says.
    pub measurements: &'a [Measurement],
    /// The units a project may take ([`Item::units`]): 0 for an item that is not buildable.
    pub units: u32,
}

impl<'a> From<&'a Item> for SpareItem<'a> {
    fn from(item: &'a Item) -> Self {
        SpareItem {
            id: item.id,
            name: &item.name,
            item_type: &item.item_type,
            condition: item.condition,
            faults: &item.faults,
            measurements: &item.measurements,
            units: item.units().available,
        }
    }
}

impl<'a> From<&'a ItemLine> for SpareItem<'a> {
    fn from(line: &'a ItemLine) -> Self {
        SpareItem {
            id: line.id,
            name: &line.name,
            item_type: &line.item_type,
            condition: line.condition,
            faults: &[],
            measurements: &line.measurements,
            units: line.units().available,
        }
    }
}

/// A severity as a bit of a fault mask.
fn severity_bit(severity: Severity) -> u8 {
    1 << (severity as u8)
}

/// What the machine check and the ranking read of one spare item, looked up once: its type and current fields
/// as indices into the stock's tables, so checking a requirement against thousands of items compares numbers
/// in one array instead of following each item's strings.
#[derive(Debug, Clone)]
struct Entry {
    /// The index of its type in [`Stock::types`].
    item_type: u32,
    condition: Condition,
    /// The severities of its faults, one bit each.
    faults: u8,
    /// [`fault_weight`] of its faults.
    fault_weight: usize,
    /// Its current fields: a range of [`Stock::fields`].
    fields: std::ops::Range<u32>,
}

/// The spare items a plan may use: the buildable ones, each id once, in id order, indexed by type.
#[derive(Debug, Clone, Default)]
pub struct Stock<'a> {
    /// The buildable items, in id order, each id once.
    items: Vec<SpareItem<'a>>,
    /// For each item, what the check reads of it, in the same order.
    entries: Vec<Entry>,
    /// The current fields of every item, each as (index of its key in `keys`, value), item after item.
    fields: Vec<(u32, Quantity)>,
    /// Each item type's index, and the indices of its items in `items`: a requirement reads only the types it
    /// accepts.
    types: HashMap<&'a str, (u32, Vec<usize>)>,
    /// Each field key's index.
    keys: HashMap<&'a str, u32>,
}

impl<'a> Stock<'a> {
    /// The items of `items` with units a project may take ([`Item::units`]: buildable, not all held), indexed by
    /// type. Of two items with one id, the first is kept.
    pub fn new(items: impl IntoIterator<Item = &'a Item>) -> Self {
        Self::of(items.into_iter().map(SpareItem::from))
    }

    /// [`Stock::new`] over items as the allocation reads them, from whole items or lines.
    pub fn of(items: impl IntoIterator<Item = SpareItem<'a>>) -> Self {
        let mut items: Vec<SpareItem<'a>> = items.into_iter().filter(|i| i.units > 0).collect();
        items.sort_by_key(|i| i.id);
        items.dedup_by_key(|i| i.id);
        let mut stock = Stock { entries: Vec::with_capacity(items.len()), ..Stock::default() };
        let mut current: Vec<&'a Measurement> = Vec::new();
        for (n, item) in items.iter().enumerate() {
            let next = stock.types.len() as u32;
            let (item_type, of_type) = stock.types.entry(item.item_type.as_str()).or_insert((next, Vec::new()));
            of_type.push(n);
            let start = stock.fields.len() as u32;
            // The current-field rule of `Item::current_measurements`: the latest per key, on a tie the later.
            current.clear();
            for m in item.measurements {
                match current.iter_mut().find(|slot| slot.key == m.key) {
                    Some(slot) if slot.at > m.at => {}
                    Some(slot) => *slot = m,
                    None => current.push(m),
                }
            }
            for m in &current {
                let next = stock.keys.len() as u32;
                let key = *stock.keys.entry(m.key.as_str()).or_insert(next);
                stock.fields.push((key, m.quantity()));
            }
            stock.entries.push(Entry {
                item_type: *item_type,
                condition: item.condition,
                faults: item.faults.iter().fold(0, |mask, f| mask | severity_bit(f.severity)),
                fault_weight: fault_weight(item.faults),
                fields: start..stock.fields.len() as u32,
            });
        }
        stock.items = items;
        stock
    }

    /// How many spare items there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when nothing is spare.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The spare items, in id order.
    pub fn items(&self) -> &[SpareItem<'a>] {
        &self.items
    }

    /// The indices of the items that pass `requirement`'s machine check, best first: better condition, fewer
    /// known faults, closer fit to the field bounds, lower id.
    fn candidates(&self, requirement: &Requirement) -> Vec<usize> {
        let asked = Asked {
            requirement,
            types: requirement.item_types.iter().filter_map(|t| Some(self.types.get(t.as_str())?.0)).collect(),
            keys: requirement.fields.iter().map(|b| self.keys.get(b.key.as_str()).copied()).collect(),
        };
        let mut types: Vec<u32> = asked.types.clone();
        types.sort_unstable();
        // A type accepted twice lists its items once.
        types.dedup();
        let mut found: Vec<(u8, usize, f64, ItemId, usize)> = self
            .types
            .values()
            .filter(|(t, _)| types.binary_search(t).is_ok())
            .flat_map(|(_, of_type)| of_type)
            .map(|&n| (n, asked.facts(self, n)))
            .filter(|(_, facts)| requirement.fits_facts(facts))
            .map(|(n, facts)| {
                let entry = &self.entries[n];
                (entry.condition.rank(), entry.fault_weight, facts.distance(), self.items[n].id, n)
            })
            .collect();
        // Ids are unique in the stock, so the order is total and an unstable sort (no buffer) gives the one order.
        found.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.total_cmp(&b.2)).then(a.3.cmp(&b.3)));
        found.into_iter().map(|c| c.4).collect()
    }
}

/// A requirement with its item types and field keys looked up in a stock's tables once.
struct Asked<'r> {
    requirement: &'r Requirement,
    /// The indices of the accepted types the stock has.
    types: Vec<u32>,
    /// For each field bound, the index of its key; `None` when no item has that field.
    keys: Vec<Option<u32>>,
}

impl<'r> Asked<'r> {
    fn facts<'s>(&'s self, stock: &'s Stock<'_>, n: usize) -> StockFacts<'s, 'r> {
        let entry = &stock.entries[n];
        StockFacts { asked: self, entry, fields: &stock.fields[entry.fields.start as usize..entry.fields.end as usize] }
    }
}

/// One stock item's facts for an [`Asked`] requirement.
struct StockFacts<'s, 'r> {
    asked: &'s Asked<'r>,
    entry: &'s Entry,
    fields: &'s [(u32, Quantity)],
}

impl StockFacts<'_, '_> {
    /// How far the item's fields sit from what the requirement asks: 0 when it asks nothing. A two-sided bound
    /// prefers the middle; a one-sided bound prefers the value nearest the bound (the smallest drive that is
    /// big enough), leaving larger items for requirements that need them.
    fn distance(&self) -> f64 {
        self.asked
            .requirement
            .fields
            .iter()
            .enumerate()
            .filter_map(|(n, b)| {
                let v = self.field(n)?.value;
                Some(match (b.min, b.max) {
                    (Some(lo), Some(hi)) => (v - (lo + hi) / 2.0).abs() / (hi - lo).max(f64::EPSILON),
                    (Some(lo), None) => (v - lo) / lo.abs().max(1.0),
                    (None, Some(hi)) => (hi - v) / hi.abs().max(1.0),
                    (None, None) => 0.0,
                })
            })
            .sum()
    }
}

impl Facts for StockFacts<'_, '_> {
    fn type_accepted(&self) -> bool {
        self.asked.types.contains(&self.entry.item_type)
    }

    fn condition(&self) -> Condition {
        self.entry.condition
    }

    fn has_fault(&self, severities: &[Severity]) -> bool {
        severities.iter().any(|&s| self.entry.faults & severity_bit(s) != 0)
    }

    fn field(&self, n: usize) -> Option<Quantity> {
        let key = self.asked.keys[n]?;
        self.fields.iter().find(|(k, _)| *k == key).map(|(_, q)| *q)
    }
}

/// How much the known faults weigh against an item that passes a check anyway (minor ones, or major ones where
/// only blocking ones disqualify): an item without faults is preferred.
fn fault_weight(faults: &[Fault]) -> usize {
    faults.iter().map(|f| 1 + f.severity as usize * 10).sum()
}

/// A template allocated: the items chosen for each of its requirements, with the units each gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation<'a> {
    /// The template's index in the templates given to [`allocate`].
    pub template: usize,
    /// For each requirement of the template, in order, its items and how many units each gives (a requirement of
    /// 4 cells may take 3 from one stock and 1 from another); empty where no spare unit is left for it, short of
    /// its count where too few are.
    pub filled: Vec<Vec<(SpareItem<'a>, u32)>>,
}

/// One requirement's fill: the index of each item it takes units of, with the units.
type Fill = Vec<(usize, u32)>;

/// The units a fill holds.
fn units_of(fill: &Fill) -> u32 {
    fill.iter().map(|(_, u)| u).sum()
}

/// One more unit of item `i` in the fill.
fn add_unit(fill: &mut Fill, i: usize) {
    match fill.iter_mut().find(|(j, _)| *j == i) {
        Some((_, u)) => *u += 1,
        None => fill.push((i, 1)),
    }
}

/// One unit of item `i` less in the fill; true when the fill no longer holds `i` at all.
fn remove_unit(fill: &mut Fill, i: usize) -> bool {
    let Some(n) = fill.iter().position(|(j, _)| *j == i) else { return true };
    fill[n].1 -= 1;
    if fill[n].1 == 0 {
        fill.remove(n);
        return true;
    }
    false
}

/// Who holds the units of each item a matching uses: for each item index, the units taken and the nodes (a
/// requirement's index, or a joint matching's node) holding them. Holds only the items used, never a slot per
/// spare item, so trying a template on a copy costs the same at 100 items and at 100,000.
#[derive(Debug, Clone, Default)]
struct Holders(HashMap<usize, (u32, Vec<usize>)>);

impl Holders {
    fn used(&self, i: usize) -> u32 {
        self.0.get(&i).map_or(0, |(u, _)| *u)
    }

    fn of(&self, i: usize) -> Vec<usize> {
        self.0.get(&i).map(|(_, h)| h.clone()).unwrap_or_default()
    }

    /// Node `node` takes one more unit of item `i`.
    fn take(&mut self, i: usize, node: usize) {
        let (used, nodes) = self.0.entry(i).or_default();
        *used += 1;
        if !nodes.contains(&node) {
            nodes.push(node);
        }
    }

    /// Node `node` gives back one unit of item `i`; `gone` when it holds none of it any more.
    fn give_back(&mut self, i: usize, node: usize, gone: bool) {
        if let Some((used, nodes)) = self.0.get_mut(&i) {
            *used -= 1;
            if gone {
                nodes.retain(|&n| n != node);
            }
        }
    }
}

/// Kuhn's augmenting path, by units: gives `node` one more unit from its candidates (`candidates(node)`, best
/// first) within each item's capacity (`capacity[i]`), moving a unit another node holds to one of that node's
/// other candidates when that frees one. With every count and capacity 1 it is the classic maximum matching.
fn augment<'c>(
    node: usize,
    candidates: &impl Fn(usize) -> &'c [usize],
    capacity: &impl Fn(usize) -> u32,
    holders: &mut Holders,
    fills: &mut [Fill],
    seen: &mut HashSet<usize>,
) -> bool {
    for &i in candidates(node) {
        let cap = capacity(i);
        if cap == 0 || !seen.insert(i) {
            continue;
        }
        if holders.used(i) < cap {
            holders.take(i, node);
            add_unit(&mut fills[node], i);
            return true;
        }
        for other in holders.of(i) {
            if other != node && augment(other, candidates, capacity, holders, fills, seen) {
                let gone = remove_unit(&mut fills[other], i);
                holders.give_back(i, other, gone);
                holders.take(i, node);
                add_unit(&mut fills[node], i);
                return true;
            }
        }
    }
    false
}

/// One template's requirements and, for each, the indices of the items passing its check, best first.
struct Options<'t> {
    template: &'t Template,
    candidates: Vec<Vec<usize>>,
}

impl<'t> Options<'t> {
    fn new(template: &'t Template, candidates: &impl Fn(&Requirement) -> Vec<usize>) -> Self {
        Self { template, candidates: template.requirements.iter().map(candidates).collect() }
    }

    fn required(&self) -> impl Iterator<Item = usize> + '_ {
        self.template.requirements.iter().enumerate().filter(|(_, r)| !r.optional).map(|(n, _)| n)
    }

    /// The units its non-optional requirements ask for, summed (one per requirement when none asks for more).
    fn required_units(&self) -> u32 {
        self.required().map(|r| self.template.requirements[r].count).sum()
    }

    /// How many free items could fill its non-optional requirements, summed: the smaller, the more particular
    /// the template is about its items, and the sooner it should have them.
    fn choice(&self, free: &[u32]) -> usize {
        self.required().map(|r| self.candidates[r].iter().filter(|&&i| free[i] > 0).count()).sum()
    }

    /// A maximum matching of the non-optional requirements' units to the free units: for each requirement, its
    /// fill. Requirements with the fewest free candidates go first, each trying its best candidate first.
    fn matching(&self, free: &[u32]) -> Vec<Fill> {
        let mut order: Vec<usize> = self.required().collect();
        order.sort_by_key(|&r| (self.candidates[r].iter().filter(|&&i| free[i] > 0).count(), r));
        let mut holders = Holders::default();
        let mut fills: Vec<Fill> = vec![Vec::new(); self.template.requirements.len()];
        for r in order {
            for _ in 0..self.template.requirements[r].count {
                let mut seen = HashSet::default();
                let found =
                    augment(r, &|n| self.candidates[n].as_slice(), &|i| free[i], &mut holders, &mut fills, &mut seen);
                if !found {
                    break;
                }
            }
        }
        fills
    }
}

/// A matching of the non-optional requirements of several templates at once to the spare units, within each
/// item's units. It holds only what is matched (a few dozen requirements), never a slot per spare item.
#[derive(Debug, Clone, Default)]
struct Joint {
    /// The requirements matched, as (template, requirement) indices, in the order they were added.
    nodes: Vec<(usize, usize)>,
    /// For each node, its fill.
    fills: Vec<Fill>,
    holders: Holders,
}

impl Joint {
    /// Adds template `t`'s non-optional requirements, moving units between requirements already matched where
    /// that frees some. True when every requirement got all its units; otherwise the matching is spoiled and the
    /// caller drops it (it works on a clone).
    fn add(&mut self, options: &[Options<'_>], capacity: &impl Fn(usize) -> u32, t: usize) -> bool {
        let mut order: Vec<usize> = options[t].required().collect();
        order.sort_by_key(|&r| (options[t].candidates[r].len(), r));
        for r in order {
            self.nodes.push((t, r));
            self.fills.push(Vec::new());
            let node = self.nodes.len() - 1;
            let nodes = &self.nodes;
            let candidates = |n: usize| options[nodes[n].0].candidates[nodes[n].1].as_slice();
            for _ in 0..options[t].template.requirements[r].count {
                let mut seen = HashSet::default();
                if !augment(node, &candidates, capacity, &mut self.holders, &mut self.fills, &mut seen) {
                    return false;
                }
            }
        }
        true
    }

    /// The templates matched, in the order they were added.
    fn templates(&self) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for &(t, _) in &self.nodes {
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }
}

/// A template chosen, by index, with each requirement's fill.
struct Chosen {
    template: usize,
    filled: Vec<Fill>,
}

/// The units of the non-optional requirements a template's fills cover.
fn covered(options: &Options<'_>, filled: &[Fill]) -> u32 {
    options.required().map(|r| units_of(&filled[r])).sum()
}

fn take(free: &mut [u32], filled: &[Fill]) {
    for &(i, u) in filled.iter().flatten() {
        free[i] -= u;
    }
}

/// **The** allocation rule: which templates to propose from `stock` and which units of which items fill each
/// requirement (see the module's documentation), at most [`MAX_ALLOCATIONS`]; what fits the owner's wish comes
/// first, the rest in the order chosen. `wished` gives each template's fit to the wish ([`Template::relevance`];
/// all 0, or empty, without one). Every item filled passes its requirement's check, a requirement never gets
/// more than its count, and no item gives more units than it has spare ([`SpareItem::units`]).
///
/// ```
/// use trove_domain::allocation::{Stock, allocate};
/// use trove_domain::item::{Condition, Intent, ItemName, ItemType, NewItem};
/// use trove_domain::template::{NewTemplate, requirement};
/// use trove_domain::{ItemId, TemplateId, Timestamp};
///
/// let board = requirement("board", "a single-board computer", &["single_board_computer"], None, false, vec![]);
/// let template = NewTemplate::new("Ad-blocker", "Block ads.", "an hour", &[], vec![board.unwrap()]).unwrap();
/// let pi = NewItem::new(
///     ItemName::new("Raspberry Pi 3").unwrap(),
///     ItemType::new("single_board_computer").unwrap(),
///     String::new(),
///     Condition::Good,
///     Intent::Keep,
/// )
/// .stored(ItemId(7), Timestamp::default());
/// let items = [pi];
/// let allocations = allocate(&[template.with_id(TemplateId(1))], &Stock::new(&items), &[]);
/// assert_eq!(allocations[0].filled[0].iter().map(|(i, units)| (i.id, *units)).collect::<Vec<_>>(), [(ItemId(7), 1)]);
/// ```
pub fn allocate<'a>(templates: &[Template], stock: &Stock<'a>, wished: &[u32]) -> Vec<Allocation<'a>> {
    // Templates share checks (the built-in catalogue's 118 requirements are 78 distinct ones): each distinct
    // check reads the stock once ([`Requirement::same_check`]).
    let known: RefCell<Vec<(Requirement, Vec<usize>)>> = RefCell::new(Vec::new());
    allocate_over(templates, stock, wished, &|r| {
        if let Some((_, found)) = known.borrow().iter().find(|(k, _)| k.same_check(r)) {
            return found.clone();
        }
        let found = stock.candidates(r);
        known.borrow_mut().push((r.clone(), found.clone()));
        found
    })
}

/// [`allocate`] with the candidates of each requirement given by `candidates` (the stock's index; the tests
/// compare it with a check of every item).
fn allocate_over<'a>(
    templates: &[Template],
    stock: &Stock<'a>,
    wished: &[u32],
    candidates: &impl Fn(&Requirement) -> Vec<usize>,
) -> Vec<Allocation<'a>> {
    let wished = |t: usize| wished.get(t).copied().unwrap_or(0);
    let options: Vec<Options<'_>> = templates.iter().map(|t| Options::new(t, candidates)).collect();
    let mut free: Vec<u32> = stock.items.iter().map(|i| i.units).collect();
    let capacity = |i: usize| stock.items[i].units;
    let mut left: Vec<usize> = (0..templates.len()).collect();
    let mut chosen: Vec<Chosen> = Vec::new();

    // Complete templates. Units are not fixed to a template until the end: a joint matching over the
    // requirements of every template chosen so far proves they can all be complete at once. Each round adds the
    // template that fits the wish best, then the one leaving the most other templates still addable, then the one
    // putting more units to use, then the more particular one.
    let mut joint = Joint::default();
    while joint.templates().len() < MAX_ALLOCATIONS {
        let addable: Vec<(usize, Joint)> = left
            .iter()
            .filter_map(|&t| {
                let mut with = joint.clone();
                with.add(&options, &capacity, t).then_some((t, with))
            })
            .collect();
        let best = addable
            .iter()
            .map(|(t, with)| {
                let spoiled =
                    addable.iter().filter(|(o, _)| o != t && !with.clone().add(&options, &capacity, *o)).count();
                let key = (
                    Reverse(wished(*t)),
                    spoiled,
                    Reverse(options[*t].required_units()),
                    options[*t].choice(&free),
                    *t,
                );
                (key, with)
            })
            .min_by_key(|(key, _)| *key);
        let Some(((.., t), with)) = best else { break };
        joint = with.clone();
        left.retain(|&l| l != t);
    }
    for t in joint.templates() {
        let mut filled = vec![Vec::new(); templates[t].requirements.len()];
        for (node, &(nt, r)) in joint.nodes.iter().enumerate() {
            if nt == t {
                filled[r] = joint.fills[node].clone();
            }
        }
        take(&mut free, &filled);
        chosen.push(Chosen { template: t, filled });
    }

    // The templates that fit the wish best but cannot be complete: allocated with what there is, so the owner
    // sees what is missing for what they asked.
    let best_fit = left.iter().map(|&t| wished(t)).max().unwrap_or(0);
    if best_fit > 0 && chosen.iter().all(|c| wished(c.template) < best_fit) {
        for t in left.clone().into_iter().filter(|&t| wished(t) == best_fit) {
            let filled = options[t].matching(&free);
            if covered(&options[t], &filled) > 0 {
                take(&mut free, &filled);
                chosen.push(Chosen { template: t, filled });
                left.retain(|&l| l != t);
            }
        }
    }

    // Too few complete ones: the best partial ones too, with at least half their units covered.
    if chosen.len() < MIN_COMPLETE {
        while chosen.len() < WITH_PARTIAL {
            let best = left
                .iter()
                .map(|&t| (t, options[t].matching(&free)))
                .filter(|(t, filled)| {
                    let have = covered(&options[*t], filled);
                    have > 0 && have * 2 >= options[*t].required_units()
                })
                .max_by(|(a, fa), (b, fb)| {
                    let (ha, na) = (u64::from(covered(&options[*a], fa)), u64::from(options[*a].required_units()));
                    let (hb, nb) = (u64::from(covered(&options[*b], fb)), u64::from(options[*b].required_units()));
                    (ha * nb).cmp(&(hb * na)).then(ha.cmp(&hb)).then(b.cmp(a))
                });
            let Some((t, filled)) = best else { break };
            take(&mut free, &filled);
            chosen.push(Chosen { template: t, filled });
            left.retain(|&l| l != t);
        }
    }

    // What fits the wish comes first; the rest keeps its order.
    chosen.sort_by_key(|c| Reverse(wished(c.template)));
    chosen.truncate(MAX_ALLOCATIONS);

    // Optional requirements, from what is left, in the order the templates were chosen, best candidate first.
    for c in &mut chosen {
        for (r, requirement) in templates[c.template].requirements.iter().enumerate() {
            if !requirement.optional {
                continue;
            }
            let mut wanted = requirement.count;
            for &i in &options[c.template].candidates[r] {
                let units = wanted.min(free[i]);
                if units > 0 {
                    free[i] -= units;
                    c.filled[r].push((i, units));
                    wanted -= units;
                }
                if wanted == 0 {
                    break;
                }
            }
        }
    }
    chosen
        .into_iter()
        .map(|c| Allocation {
            template: c.template,
            filled: c.filled.into_iter().map(|f| f.into_iter().map(|(i, u)| (stock.items[i], u)).collect()).collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
