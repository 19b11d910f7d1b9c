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
use crate::item::Item;
use crate::template::{Requirement, Template};
use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

/// At most this many templates are allocated: more is a list nobody reads.
pub const MAX_ALLOCATIONS: usize = 10;
/// Below this many complete templates, the best partial ones are allocated too.
const MIN_COMPLETE: usize = 2;
/// With partial ones added, allocations stop at this many.
const WITH_PARTIAL: usize = 3;

/// The spare items a plan may use: the buildable ones, each id once, in id order, indexed by type.
#[derive(Debug, Clone, Default)]
pub struct Stock<'a> {
    /// The buildable items, in id order, each id once.
    items: Vec<&'a Item>,
    /// For each item type, the indices of its items in `items`: a requirement reads only the types it accepts.
    by_type: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Stock<'a> {
    /// The buildable items of `items` ([`Item::buildable`]), indexed by type. Of two items with one id, the
    /// first is kept.
    pub fn new(items: impl IntoIterator<Item = &'a Item>) -> Self {
        let mut items: Vec<&'a Item> = items.into_iter().filter(|i| i.is_buildable()).collect();
        items.sort_by_key(|i| i.id);
        items.dedup_by_key(|i| i.id);
        let mut by_type: HashMap<&'a str, Vec<usize>> = HashMap::new();
        for (n, item) in items.iter().enumerate() {
            by_type.entry(item.item_type.as_str()).or_default().push(n);
        }
        Self { items, by_type }
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
    pub fn items(&self) -> &[&'a Item] {
        &self.items
    }

    /// The indices of the items that pass `requirement`'s machine check, best first: better condition, fewer
    /// known faults, closer fit to the field bounds, lower id.
    fn candidates(&self, requirement: &Requirement) -> Vec<usize> {
        let mut found: Vec<(u8, usize, f64, ItemId, usize)> = requirement
            .item_types
            .iter()
            .filter_map(|t| self.by_type.get(t.as_str()))
            .flatten()
            .map(|&n| (n, self.items[n]))
            .filter(|(_, item)| requirement.fits(item))
            .map(|(n, item)| (item.condition.rank(), fault_weight(item), distance(requirement, item), item.id, n))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.total_cmp(&b.2)).then(a.3.cmp(&b.3)));
        // A type accepted twice lists its items twice; equal ids sort next to each other.
        found.dedup_by_key(|c| c.4);
        found.into_iter().map(|c| c.4).collect()
    }
}

/// How far an item's fields sit from what the requirement asks: 0 when it asks nothing. A two-sided bound
/// prefers the middle; a one-sided bound prefers the value nearest the bound (the smallest drive that is big
/// enough), leaving larger items for requirements that need them.
fn distance(requirement: &Requirement, item: &Item) -> f64 {
    requirement
        .fields
        .iter()
        .filter_map(|b| {
            let v = item.field(b.key.as_str())?.value;
            Some(match (b.min, b.max) {
                (Some(lo), Some(hi)) => (v - (lo + hi) / 2.0).abs() / (hi - lo).max(f64::EPSILON),
                (Some(lo), None) => (v - lo) / lo.abs().max(1.0),
                (None, Some(hi)) => (hi - v) / hi.abs().max(1.0),
                (None, None) => 0.0,
            })
        })
        .sum()
}

/// How much the known faults weigh against an item that passes a check anyway (minor ones, or major ones where
/// only blocking ones disqualify): an item without faults is preferred.
fn fault_weight(item: &Item) -> usize {
    item.faults.iter().map(|f| 1 + f.severity as usize * 10).sum()
}

/// A template allocated: the item chosen for each of its requirements.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation<'a> {
    /// The template's index in the templates given to [`allocate`].
    pub template: usize,
    /// For each requirement of the template, in order, its item; `None` where no spare item is left for it.
    pub filled: Vec<Option<&'a Item>>,
}

/// One template's requirements and, for each, the indices of the items passing its check, best first.
struct Options<'t> {
    template: &'t Template,
    candidates: Vec<Vec<usize>>,
}

impl<'t> Options<'t> {
    fn new(template: &'t Template, stock: &Stock<'_>) -> Self {
        Self { template, candidates: template.requirements.iter().map(|r| stock.candidates(r)).collect() }
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
        let mut holder: HashMap<usize, usize> = HashMap::new();
        let mut filled: Vec<Option<usize>> = vec![None; self.template.requirements.len()];
        for r in order {
            let mut seen = HashSet::new();
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
            let mut seen = HashSet::new();
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
    let wished = |t: usize| wished.get(t).copied().unwrap_or(0);
    let options: Vec<Options<'_>> = templates.iter().map(|t| Options::new(t, stock)).collect();
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
