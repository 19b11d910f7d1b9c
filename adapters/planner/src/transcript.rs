//! What the planner reads of the loop's input: which calls it made in earlier steps (its own output items,
//! replayed verbatim), which of them were answered (by `call_id`; what the tools answered is not read: the
//! planner reads the household's data through the ports), and the owner's wish.

use std::collections::{BTreeSet, HashSet};
use trove_application::ports::model::InputItem;
use trove_application::tools::{ITEM_DETAILS, LIST_INVENTORY, TEMPLATE_CATALOG};
use trove_domain::ItemId;

/// One function call replayed from an earlier step.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Call {
    call_id: String,
    name: String,
    arguments: String,
}

/// The earlier steps of the loop, as the input of this step holds them.
#[derive(Debug, Default)]
pub(crate) struct Transcript {
    /// The function calls of earlier steps, in order.
    calls: Vec<Call>,
    /// The `call_id`s the loop answered.
    answered: HashSet<String>,
    /// The owner's wish, when the run has one.
    wish: Option<String>,
}

impl Transcript {
    pub fn read(input: &[InputItem]) -> Self {
        let mut t = Transcript::default();
        for item in input {
            match item {
                InputItem::Replay(raw) => {
                    let Ok(value) = serde_json::from_str::<serde_json::Value>(&raw.0) else { continue };
                    if value["type"] != "function_call" {
                        continue;
                    }
                    let text = |key: &str| value[key].as_str().unwrap_or_default().to_owned();
                    t.calls.push(Call { call_id: text("call_id"), name: text("name"), arguments: text("arguments") });
                }
                InputItem::FunctionCallOutput { call_id, .. } => {
                    t.answered.insert(call_id.clone());
                }
                InputItem::UserText(text) => {
                    if t.wish.is_none() {
                        t.wish = trove_application::propose::wish_of(text).map(str::to_owned);
                    }
                }
                InputItem::UserImage { .. } | InputItem::UserFile { .. } => {}
            }
        }
        t
    }

    /// The owner's wish, when the run has one.
    pub fn wish(&self) -> Option<&str> {
        self.wish.as_deref()
    }

    /// Which step of the loop this is, from 1: one more than the last step number the planner wrote into its
    /// call ids (`call_{step}_{n}`); the loop's own calls, answered before the first step, carry none. Should the
    /// ids be unreadable, a step with `item_details` calls behind it counts as the third.
    pub fn step(&self) -> u32 {
        let written = self
            .calls
            .iter()
            .filter_map(|c| c.call_id.strip_prefix("call_")?.split('_').next()?.parse::<u32>().ok())
            .max();
        match written {
            Some(s) => s + 1,
            None if self.calls.iter().any(|c| c.name == ITEM_DETAILS) => 3,
            None => 1,
        }
    }

    /// Whether `list_inventory` and `template_catalog` were both answered (by the loop before the first step, or
    /// after the planner called them).
    pub fn listed(&self) -> bool {
        [LIST_INVENTORY, TEMPLATE_CATALOG]
            .iter()
            .all(|tool| self.calls.iter().any(|c| c.name == *tool && self.answered.contains(&c.call_id)))
    }

    /// The items whose `item_details` call was answered: the planner has seen their faults.
    pub fn detailed(&self) -> BTreeSet<ItemId> {
        self.calls
            .iter()
            .filter(|c| c.name == ITEM_DETAILS && self.answered.contains(&c.call_id))
            .filter_map(|c| serde_json::from_str::<serde_json::Value>(&c.arguments).ok()?["item_id"].as_i64())
            .map(ItemId)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trove_application::ports::model::RawJson;

    fn call(call_id: &str, name: &str, arguments: &str) -> InputItem {
        let raw = serde_json::json!({"type": "function_call", "id": "fc", "call_id": call_id, "name": name,
                                     "arguments": arguments, "status": "completed"});
        InputItem::Replay(RawJson(raw.to_string()))
    }

    fn output(call_id: &str, output: &str) -> InputItem {
        InputItem::FunctionCallOutput { call_id: call_id.into(), output: output.into() }
    }

    #[test]
    fn steps_are_counted_from_the_call_ids() {
        assert_eq!(Transcript::read(&[InputItem::UserText("hi".into())]).step(), 1);
        let t = Transcript::read(&[call("call_1_1", "list_inventory", "{}"), output("call_1_1", "x")]);
        assert_eq!(t.step(), 2);
        assert!(!t.listed(), "the catalogue is not answered yet");
        // The loop's own calls, answered before the first step.
        let t = Transcript::read(&[
            call("call_list_inventory", "list_inventory", "{}"),
            output("call_list_inventory", "x"),
            call("call_template_catalog", "template_catalog", "{}"),
            output("call_template_catalog", "x"),
            InputItem::UserText("hi".into()),
        ]);
        assert_eq!((t.step(), t.listed()), (1, true));
        let t = Transcript::read(&[
            call("call_1_1", "list_inventory", "{}"),
            output("call_1_1", "x"),
            call("call_3_1", "item_details", r#"{"item_id":3}"#),
            output("call_3_1", "x"),
        ]);
        assert_eq!(t.step(), 4);
        let t = Transcript::read(&[call("a", "item_details", r#"{"item_id":3}"#), output("a", "x")]);
        assert_eq!(t.step(), 3);
    }

    #[test]
    fn details_are_matched_by_call_id() {
        let t = Transcript::read(&[
            call("c7", "item_details", r#"{"item_id":7}"#),
            call("c8", "item_details", r#"{"item_id":8}"#),
            call("c9", "item_details", r#"{"item_id":9}"#),
            call("c10", "item_details", r#"{"item_id":10}"#),
            call("c11", "list_inventory", "{}"),
            output("c8", "whatever the tool said"),
            output("c7", "x"),
            output("c9", r#"{"error":"no such item"}"#),
            output("c11", "x"),
        ]);
        let d = t.detailed();
        assert_eq!(d, [ItemId(7), ItemId(8), ItemId(9)].into_iter().collect());
        assert!(!d.contains(&ItemId(10)), "an unanswered call tells nothing");
    }

    #[test]
    fn the_wish_is_read_from_the_first_message() {
        let first = format!("{}a weather station", trove_application::propose::WISH_PREFIX);
        assert_eq!(Transcript::read(&[InputItem::UserText(first)]).wish(), Some("a weather station"));
        assert_eq!(Transcript::read(&[InputItem::UserText("Propose projects.".into())]).wish(), None);
    }
}
