//! Looking a scanned or typed code up: one of our labels, an item of the household carrying it, or the products
//! the providers know under it (`TROVE_LOOKUP`), each named with where it came from.

use crate::auth::Member;
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::shared::{PlaceStepDto, steps};
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Enum, Object, OpenApi, Tags};
use trove_application::lookup::{Looked, Products};
use trove_application::ports::SourcedCandidate;
use trove_domain::Timestamp;
use trove_domain::code::{Code, CodeKind, Unknowable};
use trove_domain::label::LabelTarget;

#[derive(Tags)]
enum Tag {
    /// Looking a product code up.
    Lookup,
}

/// What a lookup found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum LookedKind {
    /// The code is one of our labels' links, of an item (`id`, `name`, `path`).
    Item,
    /// The code is one of our labels' links, of a place.
    Place,
    /// An item of the household carries the code (`id`, `name`).
    OwnItem,
    /// The products known under the code: `candidates`, maybe none.
    Products,
}

/// The kind of a product code looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum LookedCodeKind {
    Gtin,
    Isbn,
    Other,
}

/// Why a code was sent to no provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum Withheld {
    /// A shop's own code.
    ShopCode,
    /// A number under GS1's in-store prefixes (02, 20 to 29): a shop's own goods, weighed or labelled there.
    InStore,
    /// A periodical's ISSN (977).
    Issn,
}

impl From<Unknowable> for Withheld {
    fn from(u: Unknowable) -> Self {
        match u {
            Unknowable::ShopCode => Self::ShopCode,
            Unknowable::InStore => Self::InStore,
            Unknowable::Issn => Self::Issn,
        }
    }
}

/// The code looked up, checked.
#[derive(Debug, Clone, PartialEq, Eq, Object)]
pub struct LookedCode {
    pub kind: LookedCodeKind,
    /// Its key: the GTIN-14 an item's codes know it by.
    pub key: String,
    /// As a person reads it (an ISBN as its ISBN-13).
    pub shown: String,
}

impl From<&Code> for LookedCode {
    fn from(c: &Code) -> Self {
        let kind = match c.kind() {
            CodeKind::Gtin => LookedCodeKind::Gtin,
            CodeKind::Isbn => LookedCodeKind::Isbn,
            CodeKind::Other => LookedCodeKind::Other,
        };
        Self { kind, key: c.key().to_owned(), shown: c.shown().to_owned() }
    }
}

/// A product a provider knows under the code.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct CandidateDto {
    pub name: String,
    #[oai(skip_serializing_if_is_none)]
    pub brand: Option<String>,
    /// A guess at the item's type (the provider's narrowest category).
    #[oai(skip_serializing_if_is_none)]
    pub item_type: Option<String>,
    /// A picture of the product at the provider; show it with `attribution`.
    #[oai(skip_serializing_if_is_none)]
    pub image_url: Option<String>,
    /// The provider's attribution and licence (Open Facts: data ODbL, images CC BY-SA), to show with the data.
    #[oai(skip_serializing_if_is_none)]
    pub attribution: Option<String>,
    /// The provider: `open_food_facts`, `open_products_facts`, `open_beauty_facts`, `open_library`, `upcitemdb`.
    pub source: String,
    /// The product's page at the provider.
    pub source_url: String,
    /// When the provider answered (earlier than now when the answer came from the cache).
    pub fetched_at: Timestamp,
}

impl From<SourcedCandidate> for CandidateDto {
    fn from(s: SourcedCandidate) -> Self {
        let c = s.candidate;
        Self {
            name: c.name,
            brand: c.brand,
            item_type: c.item_type,
            image_url: c.image_url,
            attribution: c.attribution,
            source: s.source,
            source_url: c.source_url,
            fetched_at: s.fetched_at,
        }
    }
}

/// What a lookup found: our label's item or place, the household's own item carrying the code, or the products
/// known under it. Nothing found is `kind: products` with no candidates, and the providers asked.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct LookupAnswer {
    pub kind: LookedKind,
    /// The item's or place's id (`item`, `place`, `own_item`).
    #[oai(skip_serializing_if_is_none)]
    pub id: Option<i64>,
    /// The item's or place's name.
    #[oai(skip_serializing_if_is_none)]
    pub name: Option<String>,
    /// For our label: the way to the place (root first).
    pub path: Vec<PlaceStepDto>,
    /// The code, checked (absent for our label's link).
    #[oai(skip_serializing_if_is_none)]
    pub code: Option<LookedCode>,
    /// At most three, in the providers' order.
    pub candidates: Vec<CandidateDto>,
    /// The providers asked (for this answer, or for the cached one it repeats); empty when none was.
    pub asked: Vec<String>,
    /// Whether the products come from the instance's cache.
    pub cached: bool,
    /// Why the code was sent to no provider, when it was not.
    #[oai(skip_serializing_if_is_none)]
    pub withheld: Option<Withheld>,
}

impl LookupAnswer {
    fn found(kind: LookedKind, id: i64, name: String) -> Self {
        Self {
            kind,
            id: Some(id),
            name: Some(name),
            path: Vec::new(),
            code: None,
            candidates: Vec::new(),
            asked: Vec::new(),
            cached: false,
            withheld: None,
        }
    }
}

impl From<Looked> for LookupAnswer {
    fn from(looked: Looked) -> Self {
        match looked {
            Looked::Label(scanned) => {
                let (kind, id) = match scanned.target {
                    LabelTarget::Item(id) => (LookedKind::Item, id.0),
                    LabelTarget::Place(id) => (LookedKind::Place, id.0),
                };
                Self {
                    path: scanned.path.as_ref().map(steps).unwrap_or_default(),
                    ..Self::found(kind, id, scanned.name)
                }
            }
            Looked::Item { id, name, code } => {
                Self { code: Some(LookedCode::from(&code)), ..Self::found(LookedKind::OwnItem, id.0, name) }
            }
            Looked::Products(Products { code, candidates, asked, cached, withheld }) => Self {
                kind: LookedKind::Products,
                id: None,
                name: None,
                path: Vec::new(),
                code: Some(LookedCode::from(&code)),
                candidates: candidates.into_iter().map(CandidateDto::from).collect(),
                asked,
                cached,
                withheld: withheld.map(Withheld::from),
            },
        }
    }
}

pub struct LookupApi(pub Services);

#[OpenApi(tag = "Tag::Lookup")]
impl LookupApi {
    /// Look a code up: a GTIN (EAN-8, UPC-A, EAN-13, GTIN-14), an ISBN, or one of our labels' links. Answered in
    /// order: our label's item or place; an item of this household carrying the code (`own_item`); the
    /// instance's cache; the providers `TROVE_LOOKUP` allows, asked in parallel within a budget. Nothing found is
    /// a 200 with no candidates and the providers asked. In-store codes (02, 20 to 29) and ISSNs are sent to no
    /// provider. 400 naming the problem for letters, a wrong check digit or too many digits.
    #[oai(path = "/lookup/:code", method = "get")]
    async fn lookup(&self, Member(h): Member, code: Path<String>) -> ApiResult<Json<LookupAnswer>> {
        let looked = self.0.lookup.look_up(h, &code.0).await.map_err(ApiError::from)?;
        Ok(Json(LookupAnswer::from(looked)))
    }
}
