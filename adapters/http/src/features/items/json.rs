//! The JSON text of an item and of a page of items, written straight from the domain's `Item` by `serde` writers
//! that emit exactly what `ItemDto` and `ItemList` write (sorted members, as poem-openapi writes them); the read
//! and the list answer through them (`JsonBytes`).

use chrono::{DateTime, Utc};
use serde::ser::{SerializeSeq as _, SerializeStruct as _};
use serde::{Serialize, Serializer};
use trove_domain::item::{self as di, Item, Measurement};
use trove_domain::place::PlacePath;

/// A time as poem-openapi writes a `DateTime<Utc>` (RFC 3339).
struct Time<'a>(&'a DateTime<Utc>);

impl Serialize for Time<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_rfc3339())
    }
}

/// A value with its unit, as [`FieldValue`] (`{"unit","value"}`).
struct Valued(f64, &'static str);

impl Serialize for Valued {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_struct("FieldValue", 2)?;
        o.serialize_field("unit", self.1)?;
        o.serialize_field("value", &self.0)?;
        o.end()
    }
}

/// The elements of a slice, each written as what `F` makes of it.
struct Each<'a, T, F>(&'a [T], F);

/// [`Each`], with the element's lifetime given to `write` so that it may borrow from the element.
fn each<'a, T, W: Serialize>(elements: &'a [T], write: impl Fn(&'a T) -> W) -> Each<'a, T, impl Fn(&'a T) -> W> {
    Each(elements, write)
}

impl<'a, T, F, W> Serialize for Each<'a, T, F>
where
    F: Fn(&'a T) -> W,
    W: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for e in self.0 {
            seq.serialize_element(&(self.1)(e))?;
        }
        seq.end()
    }
}

/// Writes an object's members in the order given, which is the order of their names: poem-openapi's JSON objects
/// are `serde_json` maps, which keep their keys sorted.
macro_rules! sorted_object {
    ($s:expr, $name:literal, { $($key:literal: $value:expr),+ $(,)? }) => {{
        let mut o = $s.serialize_struct($name, [$($key),+].len())?;
        $(o.serialize_field($key, &$value)?;)+
        o.end()
    }};
}

/// An item as [`ItemDto`] writes it, straight from the domain's item and its place's path (no DTO, no
/// `serde_json::Value`).
pub struct ItemJson<'a> {
    /// The item, with the path of its place read with it.
    pub item: &'a Item,
}

/// The place of an item as [`ItemPlace`] writes it.
struct PlaceJson<'a>(&'a PlacePath);

impl Serialize for PlaceJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let place = self.0.place();
        let path = each(self.0.steps(), StepJson);
        sorted_object!(s, "ItemPlace", { "id": place.id.0, "name": place.name.as_str(), "path": path })
    }
}

/// One step of a path as [`PlaceStepDto`] writes it.
struct StepJson<'a>(&'a trove_domain::place::PlaceStep);

impl Serialize for StepJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        sorted_object!(s, "PlaceStep", { "id": self.0.id.0, "name": self.0.name.as_str() })
    }
}

/// The current fields, by key.
struct FieldsJson<'a>(&'a Item);

impl Serialize for FieldsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let current = self.0.current_fields();
        s.collect_map(current.iter().map(|(k, m)| (k.as_str(), Valued(m.value, m.unit.symbol()))))
    }
}

/// An optional value: `null` when absent, as poem-openapi writes an `Option`.
struct Maybe<T>(Option<T>);

impl<T: Serialize> Serialize for Maybe<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(v) => v.serialize(s),
            None => s.serialize_unit(),
        }
    }
}

struct GoneJson<'a>(&'a di::Gone);

impl Serialize for GoneJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let g = self.0;
        sorted_object!(s, "GoneDto", { "at": Time(&g.at), "note": g.note.as_deref(), "reason": g.reason.as_str() })
    }
}

struct MeasurementJson<'a>(&'a Measurement);

impl Serialize for MeasurementJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        sorted_object!(s, "Measurement", {
            "at": Time(&m.at),
            "key": m.key.as_str(),
            "source": m.source.as_str(),
            "unit": m.unit.symbol(),
            "value": m.value,
        })
    }
}

struct FaultJson<'a>(&'a di::Fault);

impl Serialize for FaultJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        sorted_object!(s, "Fault", { "severity": self.0.severity.as_str(), "text": self.0.text.as_str() })
    }
}

struct TestJson<'a>(&'a di::TestDone);

impl Serialize for TestJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        sorted_object!(s, "Test", {
            "at": Time(&t.at),
            "name": t.name.as_str(),
            "note": t.note.as_deref(),
            "result": t.result.as_str(),
            "value": Maybe(t.value.map(|q| Valued(q.value, q.unit.symbol()))),
        })
    }
}

/// A purchase as [`PurchaseDto`] writes it.
struct PurchaseJson<'a>(&'a di::Purchase);

impl Serialize for PurchaseJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        sorted_object!(s, "Purchase", {
            "currency": p.price.map(|m| m.currency.to_string()),
            "date": p.date.map(|d| d.to_string()),
            "price": p.price.map(|m| m.minor),
            "vendor": p.vendor.as_deref(),
        })
    }
}

/// An open loan as [`ItemLoanDto`] writes it.
struct LoanJson<'a>(&'a trove_domain::loan::OnLoan);

impl Serialize for LoanJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let l = self.0;
        sorted_object!(s, "ItemLoan", {
            "due": l.due.map(|d| d.to_string()),
            "id": l.id.0,
            "since": l.since.to_string(),
            "to": l.to.as_str(),
        })
    }
}

/// A code as [`ItemCodeDto`] writes it.
struct CodeJson<'a>(&'a trove_domain::code::Code);

impl Serialize for CodeJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.0;
        sorted_object!(s, "ItemCode", { "key": c.key(), "kind": c.kind().as_str(), "value": c.shown() })
    }
}

/// A price as [`PriceDto`] writes it.
struct PriceJson<'a>(&'a trove_domain::money::Money);

impl Serialize for PriceJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        sorted_object!(s, "Price", { "amount": self.0.minor, "currency": self.0.currency.as_str() })
    }
}

impl Serialize for ItemJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let i = self.item;
        let path = i.place_path.as_ref();
        let d = &i.details;
        let units = i.units();
        let location = path.map(PlacePath::joined);
        sorted_object!(s, "Item", {
            "accessories": i.accessories,
            "asking_price": Maybe(d.asking_price.as_ref().map(PriceJson)),
            "availability": i.availability.as_str(),
            "codes": each(i.codes.as_slice(), CodeJson),
            "components": each(&i.components, |c| c.0),
            "condition": i.condition.as_str(),
            "cover": i.cover.map(|c| c.0),
            "created_at": Time(&i.created_at),
            "faults": each(&i.faults, FaultJson),
            "fields": FieldsJson(i),
            "gone": Maybe(i.gone.as_ref().map(GoneJson)),
            "id": i.id.0,
            "intent": i.intent.as_str(),
            "item_type": i.item_type.as_str(),
            "loan": Maybe(i.loan.as_ref().map(LoanJson)),
            "location": location,
            "low_stock": di::low_stock(i.quantity, i.min_quantity),
            "measurements": each(&i.measurements, MeasurementJson),
            "min_quantity": i.min_quantity,
            "name": i.name.as_str(),
            "notes": d.notes.as_str(),
            "place": Maybe(path.map(PlaceJson)),
            "place_id": i.place_id.map(|p| p.0),
            "profile": i.profile.as_str(),
            "project_id": i.project.map(|p| p.0),
            "purchase": Maybe(d.purchase.as_ref().map(PurchaseJson)),
            "quantity": i.quantity,
            "serial": d.serial.as_deref(),
            "tags": i.tags.as_slice(),
            "tests_done": each(&i.tests_done, TestJson),
            "units_available": units.available,
            "units_held": units.held,
            "units_lent": units.lent,
            "updated_at": Time(&i.updated_at),
            "warranty_until": d.warranty_until.map(|w| w.to_string()),
        })
    }
}

/// A page of items as [`ItemList`] writes it.
pub(super) struct ItemListJson<'a> {
    pub(super) page: &'a trove_application::ports::ItemPage,
    pub(super) limit: u32,
    pub(super) offset: u64,
    pub(super) next: Option<String>,
}

impl Serialize for ItemListJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let page = self.page;
        let items = each(&page.items, |i| ItemJson { item: i });
        sorted_object!(s, "ItemList", {
            "items": items,
            "limit": self.limit,
            "next": self.next.as_deref(),
            "offset": self.offset,
            "total": page.total,
        })
    }
}
