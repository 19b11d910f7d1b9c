//! The planner's choice: which templates to propose and which item fills each requirement.
//!
//! Within one template, requirements are matched to items by augmenting paths (a maximum matching), each
//! requirement trying its candidates best first: better condition, then fewer known faults, then the closer fit to the requirement's
//! field bounds, then the lower id. Across templates, a greedy pass adds complete templates one at a time to a
//! joint matching of all their requirements (so items can still move between the templates chosen), each time
//! the one that leaves the most other templates addable, so as many projects as possible are complete; an item
//! is never used twice. Optional requirements are filled last, from what is left.

use crate::transcript::Detail;
use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet};
use trove_application::tools::InventoryLine;
use trove_domain::item::{Intent, Item, ItemName, ItemType, Measurement, MeasurementSource, NewItem};
use trove_domain::project::{Proposal, ProposalSet, ProposedAllocation, REASON_MAX, TITLE_MAX};
use trove_domain::template::{Requirement, Template};
use trove_domain::text::clip;
use trove_domain::{ItemId, Timestamp};

/// At most this many proposals: more is a list nobody reads.
const MAX_PROPOSALS: usize = 10;
/// Below this many complete templates, the best partial ones are proposed too.
const MIN_COMPLETE: usize = 2;
/// With partial ones added, proposals stop at this many.
const WITH_PARTIAL: usize = 3;

/// Rebuilds a lightweight item from a `list_inventory` line: buildable by construction (the tool lists only
/// buildable items), with the listed fields as its measurements and, once `item_details` told them, its faults.
fn rebuild(line: &InventoryLine) -> Option<Item> {
    // The rules compare only current values, so one fixed time for every rebuilt measurement is enough.
    let at = Timestamp::default();
    let measurements = line
        .fields
        .iter()
        .filter_map(|(key, q)| Measurement::new(key, q.value, q.unit.symbol(), at, MeasurementSource::Manual).ok())
        .collect();
    let name = ItemName::new(&line.name).ok()?;
    let item_type = ItemType::new(&line.item_type).ok()?;
    let mut item = NewItem::new(name, item_type, line.profile.clone(), line.condition, Intent::Keep);
    item.measurements = measurements;
    Some(item.stored(ItemId(line.id), at))
}

/// The items the planner may choose from: every listed item, with its faults when `item_details` told them,
/// without those the details showed unusable. On the last step, only items whose details are known.
pub(crate) fn candidates(lines: &[InventoryLine], details: &BTreeMap<i64, Detail>, only_detailed: bool) -> Vec<Item> {
    let mut items: Vec<Item> = lines
        .iter()
        .filter_map(|line| {
            let mut item = rebuild(line)?;
            match details.get(&line.id) {
                Some(Detail::Unusable) => None,
                Some(Detail::Faults(faults)) => {
                    item.faults = faults.clone();
                    Some(item)
                }
                None if only_detailed => None,
                None => Some(item),
            }
        })
        .collect();
    items.sort_by_key(|i| i.id);
    items.dedup_by_key(|i| i.id);
    items
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

/// One template's requirements and, for each, the indices of the items passing its check, best first.
struct Options<'a> {
    template: &'a Template,
    candidates: Vec<Vec<usize>>,
}

impl<'a> Options<'a> {
    fn new(template: &'a Template, items: &[Item]) -> Self {
        let candidates = template
            .requirements
            .iter()
            .map(|r| {
                let mut c: Vec<(usize, f64)> = items
                    .iter()
                    .enumerate()
                    .filter(|(_, i)| r.check(i).is_ok())
                    .map(|(n, i)| (n, distance(r, i)))
                    .collect();
                c.sort_by(|(a, da), (b, db)| {
                    let (a, b) = (&items[*a], &items[*b]);
                    a.condition
                        .rank()
                        .cmp(&b.condition.rank())
                        .then(fault_weight(a).cmp(&fault_weight(b)))
                        .then(da.total_cmp(db))
                        .then(a.id.cmp(&b.id))
                });
                c.into_iter().map(|(n, _)| n).collect()
            })
            .collect();
        Self { template, candidates }
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

/// A matching of the non-optional requirements of several templates at once to distinct items.
#[derive(Debug, Clone)]
struct Joint {
    /// The requirements matched, as (template, requirement) indices, in the order they were added.
    nodes: Vec<(usize, usize)>,
    /// For each node, its item.
    filled: Vec<Option<usize>>,
    /// For each item, the node holding it.
    holder: Vec<Option<usize>>,
}

impl Joint {
    fn new(items: usize) -> Self {
        Self { nodes: Vec::new(), filled: Vec::new(), holder: vec![None; items] }
    }

    /// Adds template `t`'s non-optional requirements, moving items between requirements already matched where
    /// that frees one. True when every requirement got an item; otherwise the matching is spoiled and the caller
    /// drops it (it works on a clone).
    fn add(&mut self, options: &[Options<'_>], t: usize) -> bool {
        let mut order: Vec<usize> = options[t].required().collect();
        order.sort_by_key(|&r| (options[t].candidates[r].len(), r));
        for r in order {
            self.nodes.push((t, r));
            self.filled.push(None);
            let mut seen = vec![false; self.holder.len()];
            if !self.augment(options, self.nodes.len() - 1, &mut seen) {
                return false;
            }
        }
        true
    }

    /// Kuhn's augmenting path for one node, trying its candidates best first.
    fn augment(&mut self, options: &[Options<'_>], node: usize, seen: &mut [bool]) -> bool {
        let (t, r) = self.nodes[node];
        for &i in &options[t].candidates[r] {
            if seen[i] {
                continue;
            }
            seen[i] = true;
            let moved = match self.holder[i] {
                None => true,
                Some(other) => self.augment(options, other, seen),
            };
            if moved {
                self.holder[i] = Some(node);
                self.filled[node] = Some(i);
                return true;
            }
        }
        false
    }
}

/// The templates of a joint matching, in the order they were added.
fn chosen_templates(joint: &Joint) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for &(t, _) in &joint.nodes {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// A template the planner proposes, with the item index chosen for each requirement it covers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chosen {
    /// Index into the templates.
    pub template: usize,
    /// For each requirement of the template, the index of its item.
    pub filled: Vec<Option<usize>>,
}

fn covered(filled: &[Option<usize>]) -> usize {
    filled.iter().flatten().count()
}

fn take(free: &mut [bool], filled: &[Option<usize>]) {
    for &i in filled.iter().flatten() {
        free[i] = false;
    }
}

/// Chooses the templates to propose and their items (see the module's documentation). `relevance` gives each
/// template's fit to the owner's wish (all 0 without one).
pub(crate) fn assign(templates: &[Template], items: &[Item], relevance: &[u32]) -> Vec<Chosen> {
    let wished = |t: usize| relevance.get(t).copied().unwrap_or(0);
    let options: Vec<Options<'_>> = templates.iter().map(|t| Options::new(t, items)).collect();
    let mut free = vec![true; items.len()];
    let mut left: Vec<usize> = (0..templates.len()).collect();
    let mut chosen: Vec<Chosen> = Vec::new();

    // Complete templates. Items are not fixed to a template until the end: a joint matching over the
    // requirements of every template chosen so far proves they can all be complete at once. Each round adds the
    // template that fits the wish best, then the one leaving the most other templates still addable, then the one
    // putting more items to use, then the more particular one.
    let mut joint = Joint::new(items.len());
    while chosen_templates(&joint).len() < MAX_PROPOSALS {
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
    for t in chosen_templates(&joint) {
        let mut filled = vec![None; templates[t].requirements.len()];
        for (node, &(nt, r)) in joint.nodes.iter().enumerate() {
            if nt == t {
                filled[r] = joint.filled[node];
            }
        }
        take(&mut free, &filled);
        chosen.push(Chosen { template: t, filled });
    }

    // The templates that fit the wish best but cannot be complete: proposed with what there is, so the owner sees
    // what is missing for what they asked.
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
    chosen.truncate(MAX_PROPOSALS);

    // Optional requirements, from what is left, in the order the templates were chosen.
    for c in &mut chosen {
        let template = &templates[c.template];
        for (r, requirement) in template.requirements.iter().enumerate() {
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
}

/// The chosen items whose details the planner has not read yet, by id.
pub(crate) fn undetailed(chosen: &[Chosen], items: &[Item], details: &BTreeMap<i64, Detail>) -> Vec<i64> {
    let mut ids: Vec<i64> = chosen
        .iter()
        .flat_map(|c| c.filled.iter().flatten())
        .map(|&i| items[i].id.0)
        .filter(|id| !details.contains_key(id))
        .collect();
    ids.sort_unstable();
    ids
}

/// Joins names as people write a list: "a", "a and b", "a, b and c".
fn list(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The ProposalSet for the chosen templates: a title naming the main item, a reason naming what it uses and
/// what is still missing (and that it fits the wish, when it does), and one allocation per covered requirement.
pub(crate) fn proposal_set(
    templates: &[Template],
    items: &[Item],
    chosen: &[Chosen],
    relevance: &[u32],
) -> ProposalSet {
    let proposals = chosen
        .iter()
        .map(|c| {
            let template = &templates[c.template];
            let used: Vec<(&Requirement, &Item)> =
                template.requirements.iter().zip(&c.filled).filter_map(|(r, i)| i.map(|i| (r, &items[i]))).collect();
            let main = used.iter().find(|(r, _)| !r.optional).or(used.first()).map(|(_, i)| i.name.as_str());
            let title = match main {
                Some(main) => format!("{} from your {main}", template.label),
                None => template.label.clone(),
            };
            let parts: Vec<String> = used.iter().map(|(r, i)| format!("{} as {}", i.name, r.key)).collect();
            let missing: Vec<&str> = template
                .requirements
                .iter()
                .zip(&c.filled)
                .filter(|(r, i)| !r.optional && i.is_none())
                .map(|(r, _)| r.key.as_str())
                .collect();
            let tail = if missing.is_empty() {
                "everything it needs is already spare".to_owned()
            } else {
                format!("still needed: {}", missing.join(", "))
            };
            Proposal {
                template_id: template.id.0,
                title: clip(&title, TITLE_MAX),
                reason: clip(
                    &format!(
                        "{}Uses your spare {}; {tail}.",
                        if relevance.get(c.template).copied().unwrap_or(0) > 0 { "Fits your wish. " } else { "" },
                        list(&parts)
                    ),
                    REASON_MAX,
                ),
                allocations: used
                    .iter()
                    .map(|(r, i)| ProposedAllocation { requirement: r.key.to_string(), item_id: i.id.0 })
                    .collect(),
            }
        })
        .collect();
    ProposalSet { proposals }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trove_domain::TemplateId;
    use trove_domain::item::Condition;
    use trove_domain::template::{NewTemplate, requirement};
    use trove_domain::units::Quantity;

    fn line(id: i64, item_type: &str, condition: Condition, fields: &[(&str, Quantity)]) -> InventoryLine {
        InventoryLine {
            id,
            name: format!("item {id}"),
            item_type: item_type.into(),
            condition,
            profile: String::new(),
            fields: fields.iter().map(|(k, q)| ((*k).to_owned(), *q)).collect(),
        }
    }

    fn template(id: i64, reqs: &[(&str, &str, bool)]) -> Template {
        let reqs = reqs.iter().map(|(k, ty, opt)| requirement(k, k, &[ty], None, *opt, vec![]).unwrap()).collect();
        NewTemplate::new(&format!("template {id}"), "a goal.", "an hour", &[], reqs).unwrap().with_id(TemplateId(id))
    }

    fn allocations(set: &ProposalSet) -> Vec<(i64, Vec<(String, i64)>)> {
        set.proposals
            .iter()
            .map(|p| (p.template_id, p.allocations.iter().map(|a| (a.requirement.clone(), a.item_id)).collect()))
            .collect()
    }

    fn run(templates: &[Template], lines: &[InventoryLine]) -> ProposalSet {
        run_wished(templates, lines, &vec![0; templates.len()])
    }

    fn run_wished(templates: &[Template], lines: &[InventoryLine], relevance: &[u32]) -> ProposalSet {
        let items = candidates(lines, &BTreeMap::new(), false);
        let chosen = assign(templates, &items, relevance);
        proposal_set(templates, &items, &chosen, relevance)
    }

    #[test]
    fn the_wished_template_comes_first_and_gets_the_item_it_competes_for() {
        // Both templates want the one board; without a wish template 1 (the lower id) takes it.
        let t1 = template(1, &[("board", "single_board_computer", false)]);
        let t2 = template(2, &[("board", "single_board_computer", false)]);
        let lines = [line(10, "single_board_computer", Condition::Good, &[])];
        let templates = [t1, t2];
        assert_eq!(allocations(&run(&templates, &lines)), vec![(1, vec![("board".into(), 10)])]);
        let set = run_wished(&templates, &lines, &[0, 3]);
        assert_eq!(allocations(&set), vec![(2, vec![("board".into(), 10)])]);
        assert!(
            set.proposals[0].reason.starts_with("Fits your wish. Uses your spare item 10"),
            "{}",
            set.proposals[0].reason
        );
    }

    #[test]
    fn a_wished_template_that_cannot_be_complete_is_proposed_with_what_is_missing() {
        let t1 = template(1, &[("a", "gamepad", false)]);
        let t2 = template(2, &[("a", "gamepad", false)]);
        let t3 = template(3, &[("b", "monitor", false), ("c", "sensor", false), ("d", "cable", false)]);
        let lines = [
            line(1, "gamepad", Condition::Good, &[]),
            line(2, "gamepad", Condition::Good, &[]),
            line(3, "monitor", Condition::Good, &[]),
        ];
        let templates = [t1, t2, t3];
        // Two complete ones: without a wish, the third (a third covered) is left out.
        assert_eq!(run(&templates, &lines).proposals.iter().map(|p| p.template_id).collect::<Vec<_>>(), vec![1, 2]);
        let set = run_wished(&templates, &lines, &[0, 1, 3]);
        assert_eq!(set.proposals.iter().map(|p| p.template_id).collect::<Vec<_>>(), vec![3, 2, 1]);
        assert_eq!(set.proposals[0].reason, "Fits your wish. Uses your spare item 3 as b; still needed: c, d.");
    }

    #[test]
    fn a_shared_item_goes_where_it_spoils_nothing() {
        // Template 1 could take either board; template 2 only the first. Both stay complete.
        let t1 = template(1, &[("board", "single_board_computer", false)]);
        let mut t2 = template(2, &[("board", "single_board_computer", false)]);
        t2.requirements[0].min_condition = Some(Condition::Good);
        let lines = [
            line(10, "single_board_computer", Condition::Good, &[]),
            line(11, "single_board_computer", Condition::Poor, &[]),
        ];
        let set = run(&[t1, t2], &lines);
        assert_eq!(
            allocations(&set),
            vec![(2, vec![("board".into(), 10)]), (1, vec![("board".into(), 11)])],
            "template 2 first: taking its board spoils nothing"
        );
    }

    #[test]
    fn within_a_template_items_are_moved_to_cover_everything() {
        // "a" prefers the like-new pad, which "b" also accepts and is the only item "b" accepts.
        let mut t = template(1, &[("a", "gamepad", false), ("b", "gamepad", false)]);
        t.requirements[1].min_condition = Some(Condition::LikeNew);
        let lines = [line(1, "gamepad", Condition::LikeNew, &[]), line(2, "gamepad", Condition::Fair, &[])];
        let set = run(&[t], &lines);
        assert_eq!(allocations(&set), vec![(1, vec![("a".into(), 2), ("b".into(), 1)])]);
        assert_eq!(set.proposals[0].title, "template 1 from your item 2");
        assert_eq!(
            set.proposals[0].reason,
            "Uses your spare item 2 as a and item 1 as b; everything it needs is already spare."
        );
    }

    #[test]
    fn partial_templates_only_when_few_are_complete() {
        let t1 = template(1, &[("a", "gamepad", false), ("b", "monitor", false)]);
        let t2 = template(2, &[("a", "gamepad", false), ("b", "tv", false), ("c", "cable", false)]);
        let lines = [line(1, "gamepad", Condition::Good, &[]), line(2, "gamepad", Condition::Good, &[])];
        let set = run(&[t1, t2], &lines);
        // Template 1 has half its requirements covered; template 2 only a third.
        assert_eq!(allocations(&set), vec![(1, vec![("a".into(), 1)])]);
        assert_eq!(set.proposals[0].reason, "Uses your spare item 1 as a; still needed: b.");
    }

    #[test]
    fn optional_requirements_take_what_is_left() {
        let t = template(1, &[("a", "gamepad", false), ("b", "gamepad", true)]);
        let lines = [line(1, "gamepad", Condition::Good, &[]), line(2, "gamepad", Condition::New, &[])];
        assert_eq!(allocations(&run(&[t], &lines)), vec![(1, vec![("a".into(), 2), ("b".into(), 1)])]);
    }

    #[test]
    fn closer_fit_breaks_condition_ties() {
        let gb = |v: f64| trove_domain::units::normalise(v, "GB").unwrap();
        let mut t = template(1, &[("drive", "hard_drive", false)]);
        t.requirements[0].fields =
            vec![trove_domain::template::FieldBound::new("capacity", Some(500.0), None, "GB").unwrap()];
        let lines = [
            line(1, "hard_drive", Condition::Good, &[("capacity", gb(4000.0))]),
            line(2, "hard_drive", Condition::Good, &[("capacity", gb(1000.0))]),
            line(3, "hard_drive", Condition::Good, &[("capacity", gb(320.0))]),
        ];
        assert_eq!(allocations(&run(&[t], &lines)), vec![(1, vec![("drive".into(), 2)])]);
    }
}
