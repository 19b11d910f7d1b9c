//! Reading the loop's input back: which calls the planner made in earlier steps (replayed verbatim) and what the
//! tools answered (matched by `call_id`).

use std::collections::{BTreeMap, HashMap};
use trove_application::ports::model::InputItem;
use trove_application::tools::{ITEM_DETAILS, parse_details_faults};
use trove_domain::item::Fault;

/// One function call replayed from an earlier step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    pub call_id: String,
    pub name: String,
    pub arguments: String,
}

/// What `item_details` said about an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Detail {
    /// The item exists and is still buildable; these are its faults.
    Faults(Vec<Fault>),
    /// The tool answered an error, or the item is no longer buildable (gone, meant for sale, reserved).
    Unusable,
}

impl Detail {
    /// Reads an `item_details` output: the item line (id|name|item_type|condition|intent|availability|...), an
    /// optional `gone: yes`, then `faults: ...`.
    fn read(output: &str) -> Self {
        if output.trim_start().starts_with('{') {
            return Detail::Unusable;
        }
        let Some(line) = output.lines().nth(1) else { return Detail::Unusable };
        let cols: Vec<&str> = line.split('|').collect();
        let buildable = cols.get(4).map(|c| c.trim()) == Some("keep")
            && cols.get(5).map(|c| c.trim()) == Some("available")
            && !output.lines().any(|l| l.trim() == "gone: yes");
        if !buildable {
            return Detail::Unusable;
        }
        let faults = parse_details_faults(output)
            .into_iter()
            .map(|(severity, text)| {
                // A fault whose text does not survive validation still counts: its severity is what matters.
                Fault::new(&text, severity).unwrap_or_else(|_| Fault { text: "unnamed fault".to_owned(), severity })
            })
            .collect();
        Detail::Faults(faults)
    }
}

/// The earlier steps of the loop, as the input of this step holds them.
#[derive(Debug, Default)]
pub(crate) struct Transcript {
    /// The function calls of earlier steps, in order.
    calls: Vec<Call>,
    /// The tool outputs, by `call_id`.
    outputs: HashMap<String, String>,
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
                InputItem::FunctionCallOutput { call_id, output } => {
                    t.outputs.insert(call_id.clone(), output.clone());
                }
                InputItem::UserText(text) => {
                    if t.wish.is_none() {
                        t.wish = trove_application::propose::wish_of(text).map(str::to_owned);
                    }
                }
                InputItem::UserImage { .. } => {}
            }
        }
        t
    }

    /// The owner's wish, when the run has one.
    pub fn wish(&self) -> Option<&str> {
        self.wish.as_deref()
    }

    /// Which step of the loop this is, from 1. Step 1 has no tool output yet. Later steps are counted from the
    /// step number the planner wrote into its call ids (`call_{step}_{n}`); should those be unreadable, a step
    /// with `item_details` calls behind it counts as the third.
    pub fn step(&self) -> u32 {
        if self.outputs.is_empty() {
            return 1;
        }
        let written = self
            .calls
            .iter()
            .filter_map(|c| c.call_id.strip_prefix("call_")?.split('_').next()?.parse::<u32>().ok())
            .max();
        match written {
            Some(s) => s + 1,
            None if self.calls.iter().any(|c| c.name == ITEM_DETAILS) => 3,
            None => 2,
        }
    }

    /// The output of the latest call of the tool `name` that was answered.
    pub fn output_of(&self, name: &str) -> Option<&str> {
        self.calls
            .iter()
            .rev()
            .filter(|c| c.name == name)
            .find_map(|c| self.outputs.get(&c.call_id))
            .map(String::as_str)
    }

    /// What every answered `item_details` call said, by item id.
    pub fn details(&self) -> BTreeMap<i64, Detail> {
        let mut out = BTreeMap::new();
        for call in self.calls.iter().filter(|c| c.name == ITEM_DETAILS) {
            let Some(output) = self.outputs.get(&call.call_id) else { continue };
            let Ok(args) = serde_json::from_str::<serde_json::Value>(&call.arguments) else { continue };
            let Some(id) = args["item_id"].as_i64() else { continue };
            out.insert(id, Detail::read(output));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trove_application::ports::model::RawJson;
    use trove_domain::item::Severity;

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
        let ok = "id|name|item_type|condition|intent|availability|profile|fields\n\
                  7|Pi|single_board_computer|good|keep|available||\nfaults: blocking: dead; minor: scuffed\n\
                  tests: none\naccessories: none\ncomponents: none";
        let sold = "id|name|item_type|condition|intent|availability|profile|fields\n\
                    8|Pi|single_board_computer|good|sell|available||\nfaults: none";
        let t = Transcript::read(&[
            call("c7", "item_details", r#"{"item_id":7}"#),
            call("c8", "item_details", r#"{"item_id":8}"#),
            call("c9", "item_details", r#"{"item_id":9}"#),
            call("c10", "item_details", r#"{"item_id":10}"#),
            output("c8", sold),
            output("c7", ok),
            output("c9", r#"{"error":"no such item"}"#),
        ]);
        let d = t.details();
        let Detail::Faults(faults) = &d[&7] else { panic!("{d:?}") };
        assert_eq!(faults.iter().map(|f| f.severity).collect::<Vec<_>>(), vec![Severity::Blocking, Severity::Minor]);
        assert_eq!(d[&8], Detail::Unusable);
        assert_eq!(d[&9], Detail::Unusable);
        assert!(!d.contains_key(&10), "an unanswered call tells nothing");
    }
}
