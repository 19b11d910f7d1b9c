//! The planner's answer: a ProposalSet written from the allocations the domain's rule chose
//! ([`trove_domain::allocation::allocate`]), each proposal with a title naming its main item and a reason naming
//! what it uses and what is still missing.

use std::collections::BTreeSet;
use trove_domain::ItemId;
use trove_domain::allocation::{Allocation, SpareItem};
use trove_domain::project::{Proposal, ProposalSet, ProposedAllocation, REASON_MAX, TITLE_MAX};
use trove_domain::template::{Requirement, Template};
use trove_domain::text::clip;

/// The allocated items whose details the planner has not read yet, by id.
pub(crate) fn undetailed(allocations: &[Allocation<'_>], detailed: &BTreeSet<ItemId>) -> Vec<i64> {
    let mut ids: Vec<i64> = allocations
        .iter()
        .flat_map(|a| a.filled.iter().flatten())
        .map(|(i, _)| i.id)
        .filter(|id| !detailed.contains(id))
        .map(|id| id.0)
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

/// The ProposalSet for the allocated templates: a title naming the main item, a reason naming what it uses and
/// what is still missing (and that it fits the wish, when it does), and one allocation per covered requirement.
/// `relevance` gives each template's fit to the wish, by its index in `templates`.
pub(crate) fn proposal_set(templates: &[Template], allocations: &[Allocation<'_>], relevance: &[u32]) -> ProposalSet {
    let proposals = allocations
        .iter()
        .map(|c| {
            let template = &templates[c.template];
            let used: Vec<(&Requirement, SpareItem<'_>, u32)> = template
                .requirements
                .iter()
                .zip(&c.filled)
                .flat_map(|(r, fill)| fill.iter().map(move |(i, units)| (r, *i, *units)))
                .collect();
            let main = used.iter().find(|(r, ..)| !r.optional).or(used.first()).map(|(_, i, _)| i.name.as_str());
            let title = match main {
                Some(main) => format!("{} from your {main}", template.label),
                None => template.label.clone(),
            };
            let parts: Vec<String> = used
                .iter()
                .map(|(r, i, units)| match units {
                    1 => format!("{} as {}", i.name, r.key),
                    n => format!("{n} x {} as {}", i.name, r.key),
                })
                .collect();
            let missing: Vec<&str> = template
                .requirements
                .iter()
                .zip(&c.filled)
                .filter(|(r, fill)| !r.optional && fill.iter().map(|(_, u)| u).sum::<u32>() < r.count)
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
                    .map(|(r, i, units)| ProposedAllocation {
                        requirement: r.key.to_string(),
                        item_id: i.id.0,
                        units: *units,
                    })
                    .collect(),
            }
        })
        .collect();
    ProposalSet { proposals }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trove_domain::allocation::{Stock, allocate};
    use trove_domain::item::{Condition, Intent, Item, ItemName, ItemType, Measurement, MeasurementSource, NewItem};
    use trove_domain::template::{NewTemplate, requirement};
    use trove_domain::units::Quantity;
    use trove_domain::{TemplateId, Timestamp};

    fn line(id: i64, item_type: &str, condition: Condition, fields: &[(&str, Quantity)]) -> Item {
        let name = ItemName::new(&format!("item {id}")).unwrap();
        let mut item = NewItem::new(name, ItemType::new(item_type).unwrap(), String::new(), condition, Intent::Keep);
        item.measurements = fields
            .iter()
            .map(|(k, q)| {
                Measurement::new(k, q.value, q.unit.symbol(), Timestamp::default(), MeasurementSource::Manual).unwrap()
            })
            .collect();
        item.stored(ItemId(id), Timestamp::default())
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

    fn run(templates: &[Template], lines: &[Item]) -> ProposalSet {
        run_wished(templates, lines, &vec![0; templates.len()])
    }

    fn run_wished(templates: &[Template], lines: &[Item], relevance: &[u32]) -> ProposalSet {
        let chosen = allocate(templates, &Stock::new(lines), relevance);
        proposal_set(templates, &chosen, relevance)
    }

    #[test]
    fn undetailed_items_are_asked_for_once_in_id_order() {
        let t = template(1, &[("a", "gamepad", false), ("b", "gamepad", false), ("c", "monitor", false)]);
        let items = [
            line(9, "gamepad", Condition::Good, &[]),
            line(3, "gamepad", Condition::New, &[]),
            line(5, "monitor", Condition::Good, &[]),
        ];
        let chosen = allocate(std::slice::from_ref(&t), &Stock::new(&items), &[]);
        assert_eq!(undetailed(&chosen, &BTreeSet::new()), vec![3, 5, 9]);
        assert_eq!(undetailed(&chosen, &[ItemId(5)].into_iter().collect()), vec![3, 9]);
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
