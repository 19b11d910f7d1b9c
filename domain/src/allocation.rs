//! Allocation: which spare item fills which requirement of which template, each item used once.
//!
//! The spare items are a [`Stock`]: the buildable ones ([`Item::buildable`]), indexed by type once, so a
//! requirement only ever looks at the items of the types it accepts, and those pass [`Requirement::fits`] (the
//! machine check, without building a reason for a no).
//!
//! Within one template, requirements are matched to items by augmenting paths (a maximum matching), each
//! requirement trying its candidates best first: better condition, then fewer known faults, then the closer fit
//! to the requirement's field bounds, then the lower id. Across templates, a greedy pass adds complete templates
//! one at a time to a joint matching of all their requirements (so items can still move between the templates
//! chosen), each time the one that fits the owner's wish best, then the one that leaves the most other templates
//! addable, so as many projects as possible are complete; an item is never used twice. The templates that fit
//! the wish best are proposed even when they cannot be complete, and when fewer than two are complete the best
//! partial ones are added. Optional requirements are filled last, from what is left.

use crate::ids::ItemId;
use crate::item::{Condition, Fault, Item, ItemLine, ItemName, ItemType, Measurement, Severity};
use crate::template::{Facts, Requirement, Template};
use crate::units::Quantity;
use std::cmp::Reverse;
// The indexes of a stock and the matching's maps are keyed by the stock's own strings and indices, hashed by
// the Fx hasher: SipHash, the default, took 15% of a warm proposal at 100,000 items (BENCHMARKS.md, "Local planner").
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
    /// [`Item::buildable`]'s answer.
    buildable: bool,
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
            buildable: item.is_buildable(),
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
            buildable: line.is_buildable(),
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
    /// The buildable items of `items` ([`Item::buildable`]), indexed by type. Of two items with one id, the
    /// first is kept.
    pub fn new(items: impl IntoIterator<Item = &'a Item>) -> Self {
        Self::of(items.into_iter().map(SpareItem::from))
    }

    /// [`Stock::new`] over items as the allocation reads them, from whole items or lines.
    pub fn of(items: impl IntoIterator<Item = SpareItem<'a>>) -> Self {
        let mut items: Vec<SpareItem<'a>> = items.into_iter().filter(|i| i.buildable).collect();
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

/// A template allocated: the item chosen for each of its requirements.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation<'a> {
    /// The template's index in the templates given to [`allocate`].
    pub template: usize,
    /// For each requirement of the template, in order, its item; `None` where no spare item is left for it.
    pub filled: Vec<Option<SpareItem<'a>>>,
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

    fn required_count(&self) -> usize {
        self.required().count()
    }

    /// How many free items could fill its non-optional requirements, summed: the smaller, the more particular
    /// the template is about its items, and the sooner it should have them.
    fn choice(&self, free: &[bool]) -> usize {
        self.required().map(|r| self.candidates[r].iter().filter(|&&i| free[i]).count()).sum()
    }

    /// A maximum matching of the non-optional requirements to free items: for each requirement, the item index
    /// or `None`. Requirements with the fewest free candidates go first, each trying its best candidate first.
    fn matching(&self, free: &[bool]) -> Vec<Option<usize>> {
        let mut order: Vec<usize> = self.required().collect();
        order.sort_by_key(|&r| (self.candidates[r].iter().filter(|&&i| free[i]).count(), r));
        let mut holder: HashMap<usize, usize> = HashMap::default();
        let mut filled: Vec<Option<usize>> = vec![None; self.template.requirements.len()];
        for r in order {
            let mut seen = HashSet::default();
            self.augment(r, free, &mut holder, &mut filled, &mut seen);
        }
        filled
    }

    /// Kuhn's augmenting path: gives requirement `r` an item, moving earlier requirements to other items of theirs
    /// when that frees one.
    fn augment(
        &self,
        r: usize,
        free: &[bool],
        holder: &mut HashMap<usize, usize>,
        filled: &mut [Option<usize>],
        seen: &mut HashSet<usize>,
    ) -> bool {
        for &i in &self.candidates[r] {
            if !free[i] || !seen.insert(i) {
                continue;
            }
            let moved = match holder.get(&i).copied() {
                None => true,
                Some(other) => self.augment(other, free, holder, filled, seen),
            };
            if moved {
                holder.insert(i, r);
                filled[r] = Some(i);
                return true;
            }
        }
        false
    }
}

/// A matching of the non-optional requirements of several templates at once to distinct items. It holds only
/// what is matched (a few dozen requirements), never a slot per spare item, so trying a template on a copy
/// costs the same at 100 items and at 100,000.
#[derive(Debug, Clone, Default)]
struct Joint {
    /// The requirements matched, as (template, requirement) indices, in the order they were added.
    nodes: Vec<(usize, usize)>,
    /// For each node, its item.
    filled: Vec<Option<usize>>,
    /// For each item held, the node holding it.
    holder: HashMap<usize, usize>,
}

impl Joint {
    /// Adds template `t`'s non-optional requirements, moving items between requirements already matched where
    /// that frees one. True when every requirement got an item; otherwise the matching is spoiled and the caller
    /// drops it (it works on a clone).
    fn add(&mut self, options: &[Options<'_>], t: usize) -> bool {
        let mut order: Vec<usize> = options[t].required().collect();
        order.sort_by_key(|&r| (options[t].candidates[r].len(), r));
        for r in order {
            self.nodes.push((t, r));
            self.filled.push(None);
            let mut seen = HashSet::default();
            if !self.augment(options, self.nodes.len() - 1, &mut seen) {
                return false;
            }
        }
        true
    }

    /// Kuhn's augmenting path for one node, trying its candidates best first.
    fn augment(&mut self, options: &[Options<'_>], node: usize, seen: &mut HashSet<usize>) -> bool {
        let (t, r) = self.nodes[node];
        for &i in &options[t].candidates[r] {
            if !seen.insert(i) {
                continue;
            }
            let moved = match self.holder.get(&i).copied() {
                None => true,
                Some(other) => self.augment(options, other, seen),
            };
            if moved {
                self.holder.insert(i, node);
                self.filled[node] = Some(i);
                return true;
            }
        }
        false
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

/// A template chosen, by index, with the item index chosen for each requirement.
struct Chosen {
    template: usize,
    filled: Vec<Option<usize>>,
}

fn covered(filled: &[Option<usize>]) -> usize {
    filled.iter().flatten().count()
}

fn take(free: &mut [bool], filled: &[Option<usize>]) {
    for &i in filled.iter().flatten() {
        free[i] = false;
    }
}

/// **The** allocation rule: which templates to propose from `stock` and which item fills each requirement (see
/// the module's documentation), at most [`MAX_ALLOCATIONS`]; what fits the owner's wish comes first, the rest in
/// the order chosen. `wished` gives each template's fit to the wish ([`Template::relevance`]; all 0, or empty,
/// without one). Every item filled passes its requirement's check, and no item fills two requirements.
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
/// assert_eq!(allocations[0].filled[0].map(|i| i.id), Some(ItemId(7)));
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
    let mut free = vec![true; stock.len()];
    let mut left: Vec<usize> = (0..templates.len()).collect();
    let mut chosen: Vec<Chosen> = Vec::new();

    // Complete templates. Items are not fixed to a template until the end: a joint matching over the
    // requirements of every template chosen so far proves they can all be complete at once. Each round adds the
    // template that fits the wish best, then the one leaving the most other templates still addable, then the one
    // putting more items to use, then the more particular one.
    let mut joint = Joint::default();
    while joint.templates().len() < MAX_ALLOCATIONS {
        let addable: Vec<(usize, Joint)> = left
            .iter()
            .filter_map(|&t| {
                let mut with = joint.clone();
                with.add(&options, t).then_some((t, with))
            })
            .collect();
        let best = addable
            .iter()
            .map(|(t, with)| {
                let spoiled = addable.iter().filter(|(o, _)| o != t && !with.clone().add(&options, *o)).count();
                let key = (
                    Reverse(wished(*t)),
                    spoiled,
                    usize::MAX - options[*t].required_count(),
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
        let mut filled = vec![None; templates[t].requirements.len()];
        for (node, &(nt, r)) in joint.nodes.iter().enumerate() {
            if nt == t {
                filled[r] = joint.filled[node];
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
            if covered(&filled) > 0 {
                take(&mut free, &filled);
                chosen.push(Chosen { template: t, filled });
                left.retain(|&l| l != t);
            }
        }
    }

    // Too few complete ones: the best partial ones too, with at least half their requirements covered.
    if chosen.len() < MIN_COMPLETE {
        while chosen.len() < WITH_PARTIAL {
            let best = left
                .iter()
                .map(|&t| (t, options[t].matching(&free)))
                .filter(|(t, filled)| {
                    let have = covered(filled);
                    have > 0 && have * 2 >= options[*t].required_count()
                })
                .max_by(|(a, fa), (b, fb)| {
                    let (ha, na) = (covered(fa), options[*a].required_count());
                    let (hb, nb) = (covered(fb), options[*b].required_count());
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

    // Optional requirements, from what is left, in the order the templates were chosen.
    for c in &mut chosen {
        for (r, requirement) in templates[c.template].requirements.iter().enumerate() {
            if !requirement.optional {
                continue;
            }
            if let Some(&i) = options[c.template].candidates[r].iter().find(|&&i| free[i]) {
                free[i] = false;
                c.filled[r] = Some(i);
            }
        }
    }
    chosen
        .into_iter()
        .map(|c| Allocation {
            template: c.template,
            filled: c.filled.into_iter().map(|i| i.map(|i| stock.items[i])).collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
