//! What a change did to an item, field by field, and how a change of its fields is reversed. The values are the
//! texts the API shows (`"good"`, `"12"` for a place id, `"a, b"` for a list); `None` is absent.

use crate::PlaceId;
use crate::item::{Availability, Condition, Intent, Item, ItemChanges, ItemName, ItemType};
use crate::people::{FieldChange, UndoRefused};

fn change(out: &mut Vec<FieldChange>, field: &str, before: Option<String>, after: Option<String>) {
    if before != after {
        out.push(FieldChange { field: field.to_owned(), before, after });
    }
}

fn joined<T: ToString>(list: &[T]) -> Option<String> {
    (!list.is_empty()).then(|| list.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
}

/// The changes from `before` to `after`, in the order the API shows an item's fields; records added
/// (measurements, faults, tests) appear as one change each, with no `before`.
///
/// ```
/// # use trove_domain::history::diff;
/// # use trove_domain::item::{Condition, Intent, ItemName, ItemType, NewItem};
/// # let t = chrono::DateTime::UNIX_EPOCH;
/// let a = NewItem::new(ItemName::new("drill").unwrap(), ItemType::new("tool").unwrap(), String::new(),
///     Condition::Good, Intent::Keep).stored(trove_domain::ItemId(1), t);
/// let b = trove_domain::item::Item { name: ItemName::new("hammer drill").unwrap(), ..a.clone() };
/// let d = diff(&a, &b);
/// assert_eq!((d[0].field.as_str(), d[0].before.as_deref(), d[0].after.as_deref()),
///     ("name", Some("drill"), Some("hammer drill")));
/// ```
pub fn diff(before: &Item, after: &Item) -> Vec<FieldChange> {
    let mut out = Vec::new();
    let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    change(&mut out, "name", Some(before.name.to_string()), Some(after.name.to_string()));
    change(&mut out, "type", Some(before.item_type.to_string()), Some(after.item_type.to_string()));
    change(&mut out, "profile", text(&before.profile), text(&after.profile));
    change(&mut out, "condition", Some(before.condition.to_string()), Some(after.condition.to_string()));
    change(&mut out, "intent", Some(before.intent.to_string()), Some(after.intent.to_string()));
    change(&mut out, "availability", Some(before.availability.to_string()), Some(after.availability.to_string()));
    change(&mut out, "project_id", before.project.map(|p| p.to_string()), after.project.map(|p| p.to_string()));
    change(&mut out, "place_id", before.place_id.map(|p| p.to_string()), after.place_id.map(|p| p.to_string()));
    change(&mut out, "accessories", joined(&before.accessories), joined(&after.accessories));
    change(&mut out, "components", joined(&before.components), joined(&after.components));
    change(
        &mut out,
        "gone",
        before.gone.as_ref().map(|g| g.reason.to_string()),
        after.gone.as_ref().map(|g| g.reason.to_string()),
    );
    for m in after.measurements.iter().skip(before.measurements.len()) {
        change(&mut out, "measurement", None, Some(format!("{} {} {}", m.key, m.value, m.unit)));
    }
    for f in after.faults.iter().skip(before.faults.len()) {
        change(&mut out, "fault", None, Some(f.text.clone()));
    }
    for t in after.tests_done.iter().skip(before.tests_done.len()) {
        change(&mut out, "test", None, Some(format!("{}: {}", t.name, t.result)));
    }
    out
}

/// The change that puts back the `before` values of `changes`: only the item's own fields (name, type, profile,
/// condition, intent, availability, place) can be put back.
///
/// # Errors
/// [`UndoRefused::NotUndoable`] when a change is of another field, or a value does not read back.
pub fn reverse(changes: &[FieldChange]) -> Result<ItemChanges, UndoRefused> {
    let mut back = ItemChanges::default();
    for c in changes {
        let before = c.before.as_deref();
        let required = || before.ok_or(UndoRefused::NotUndoable);
        match c.field.as_str() {
            "name" => back.name = Some(ItemName::new(required()?).map_err(|_| UndoRefused::NotUndoable)?),
            "type" => back.item_type = Some(ItemType::new(required()?).map_err(|_| UndoRefused::NotUndoable)?),
            "profile" => back.profile = Some(before.unwrap_or_default().to_owned()),
            "condition" => back.condition = Some(Condition::parse(required()?).ok_or(UndoRefused::NotUndoable)?),
            "intent" => back.intent = Some(Intent::parse(required()?).ok_or(UndoRefused::NotUndoable)?),
            "availability" => {
                back.availability = Some(Availability::parse(required()?).ok_or(UndoRefused::NotUndoable)?);
            }
            "place_id" => {
                back.place_id =
                    Some(before.map(|p| p.parse().map(PlaceId).map_err(|_| UndoRefused::NotUndoable)).transpose()?);
            }
            _ => return Err(UndoRefused::NotUndoable),
        }
    }
    Ok(back)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ItemId;
    use crate::item::{Fault, NewItem, Severity};
    use chrono::DateTime;

    fn item() -> Item {
        let name = ItemName::new("drill").unwrap();
        NewItem::new(name, ItemType::new("tool").unwrap(), String::new(), Condition::Good, Intent::Keep)
            .stored(ItemId(1), DateTime::UNIX_EPOCH)
    }

    fn fc(field: &str, before: Option<&str>, after: Option<&str>) -> FieldChange {
        FieldChange { field: field.into(), before: before.map(Into::into), after: after.map(Into::into) }
    }

    fn check(change: impl Fn(&mut Item), expected: &[FieldChange]) {
        let before = item();
        let mut after = before.clone();
        change(&mut after);
        assert_eq!(diff(&before, &after), expected);
    }

    #[test]
    fn diff_names_each_changed_field_with_the_api_values() {
        check(|_| {}, &[]);
        check(|i| i.version += 1, &[]);
        check(|i| i.condition = Condition::Poor, &[fc("condition", Some("good"), Some("poor"))]);
        check(|i| i.profile = "Bosch".into(), &[fc("profile", None, Some("Bosch"))]);
        check(|i| i.place_id = Some(PlaceId(4)), &[fc("place_id", None, Some("4"))]);
        check(
            |i| {
                i.name = ItemName::new("saw").unwrap();
                i.intent = Intent::Sell;
            },
            &[fc("name", Some("drill"), Some("saw")), fc("intent", Some("keep"), Some("sell"))],
        );
        check(|i| i.components = vec![ItemId(2), ItemId(3)], &[fc("components", None, Some("2, 3"))]);
        check(
            |i| i.faults.push(Fault::new("chuck wobbles", Severity::Minor).unwrap()),
            &[fc("fault", None, Some("chuck wobbles"))],
        );
    }

    #[test]
    fn reverse_puts_back_the_before_values_of_own_fields_only() {
        let back = reverse(&[fc("name", Some("drill"), Some("saw")), fc("place_id", None, Some("4"))]).unwrap();
        assert_eq!(back.name, Some(ItemName::new("drill").unwrap()));
        assert_eq!(back.place_id, Some(None));
        let back = reverse(&[fc("condition", Some("good"), Some("poor"))]).unwrap();
        assert_eq!(back.condition, Some(Condition::Good));
        assert_eq!(reverse(&[fc("fault", None, Some("x"))]), Err(UndoRefused::NotUndoable));
        assert_eq!(reverse(&[fc("components", None, Some("2"))]), Err(UndoRefused::NotUndoable));
        assert_eq!(reverse(&[fc("condition", Some("splendid"), Some("good"))]), Err(UndoRefused::NotUndoable));
    }

    #[test]
    fn reversing_a_diff_restores_the_item() {
        let before = item();
        let mut after = before.clone();
        after.name = ItemName::new("saw").unwrap();
        after.condition = Condition::Poor;
        after.place_id = Some(PlaceId(9));
        let mut restored = after.clone();
        restored.apply(&reverse(&diff(&before, &after)).unwrap()).unwrap();
        assert!(diff(&before, &restored).is_empty());
    }
}
