//! Where things are: a tree of places (house > garage > shelf B2 > box 4). Create, list, read with the places
//! below, rename or move, delete when empty.

use crate::auth::{Member, Person};
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::shared::{Created, PlaceStepDto, steps};
use chrono::{DateTime, Utc};
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{ApiResponse, Object, OpenApi, Tags};
use trove_application::places::{PlaceDetail, PlaceView};
use trove_domain::PlaceId;
use trove_domain::place::{self as dp, NewPlace, PlaceChanges, PlaceError, PlaceName};

#[derive(Tags)]
enum Tag {
    /// Where things are: a tree of places.
    Places,
}

fn invalid(e: PlaceError) -> ApiError {
    ApiError::bad_request(e.to_string())
}

/// A place with the way to it and what it holds.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Place")]
pub struct PlaceDto {
    pub id: i64,
    pub name: String,
    /// The place it is in; `null` at the top.
    pub parent_id: Option<i64>,
    pub note: Option<String>,
    /// The way to it: root first, the place itself last.
    pub path: Vec<PlaceStepDto>,
    /// Present items directly in it.
    pub items: u64,
    /// Present items in it and in every place below it.
    pub items_within: u64,
    pub created_at: DateTime<Utc>,
}

impl From<&PlaceView> for PlaceDto {
    fn from(v: &PlaceView) -> Self {
        Self {
            id: v.place.id.0,
            name: v.place.name.to_string(),
            parent_id: v.place.parent_id.map(|p| p.0),
            note: v.place.note.clone(),
            path: steps(&v.path),
            items: v.items,
            items_within: v.items_within,
            created_at: v.place.created_at,
        }
    }
}

/// A place with the places directly in it.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "PlaceDetail")]
pub struct PlaceDetailDto {
    #[oai(flatten)]
    pub place: PlaceDto,
    /// The places directly in it, by id.
    pub children: Vec<PlaceDto>,
}

impl From<&PlaceDetail> for PlaceDetailDto {
    fn from(d: &PlaceDetail) -> Self {
        Self { place: (&d.view).into(), children: d.children.iter().map(Into::into).collect() }
    }
}

/// Every place of the household.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct PlaceList {
    /// By id.
    pub places: Vec<PlaceDto>,
}

/// A new place.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct CreatePlace {
    /// Unique among its siblings, ignoring case; no " / " in it.
    pub name: String,
    /// The place it is in; left out or `null`: at the top.
    pub parent_id: Option<i64>,
    pub note: Option<String>,
}

impl CreatePlace {
    /// # Errors
    /// 400 for a name or note the domain refuses.
    pub fn try_into_domain(self) -> Result<NewPlace, ApiError> {
        Ok(NewPlace {
            name: PlaceName::new(&self.name).map_err(invalid)?,
            parent_id: self.parent_id.map(PlaceId),
            note: dp::note(self.note.as_deref()).map_err(invalid)?,
        })
    }
}

/// What to change of a place; members left out stay as they are.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct PatchPlace {
    pub name: Option<String>,
    /// Moves it under this place; `null` moves it to the top. Never under itself or a place inside it (422).
    pub parent_id: MaybeUndefined<i64>,
    /// `null` clears it.
    pub note: MaybeUndefined<String>,
}

impl PatchPlace {
    /// # Errors
    /// 400 for a name or note the domain refuses.
    pub fn try_into_domain(self) -> Result<PlaceChanges, ApiError> {
        Ok(PlaceChanges {
            name: self.name.as_deref().map(PlaceName::new).transpose().map_err(invalid)?,
            parent_id: match self.parent_id {
                MaybeUndefined::Undefined => None,
                MaybeUndefined::Null => Some(None),
                MaybeUndefined::Value(p) => Some(Some(PlaceId(p))),
            },
            note: match self.note {
                MaybeUndefined::Undefined => None,
                MaybeUndefined::Null => Some(None),
                MaybeUndefined::Value(n) => Some(dp::note(Some(&n)).map_err(invalid)?),
            },
        })
    }
}

/// A deleted place.
#[derive(ApiResponse)]
pub enum Deleted {
    /// The place is gone.
    #[oai(status = 204)]
    Deleted,
}

/// The place routes.
pub struct PlacesApi(pub Services);

#[OpenApi(tag = "Tag::Places")]
impl PlacesApi {
    /// Add a place, at the top or inside another (`parent_id`). 409 when a sibling has the name (ignoring
    /// case); 422 when the parent is not a place of the household.
    #[oai(path = "/places", method = "post")]
    async fn create(&self, Person(c): Person, body: Json<CreatePlace>) -> ApiResult<Created<PlaceDto>> {
        let new = body.0.try_into_domain()?;
        let view = self.0.places.create((&c).into(), new).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json((&view).into())))
    }

    /// Every place of the household, each with its path and the count of items in it and within it.
    #[oai(path = "/places", method = "get")]
    async fn list(&self, Member(h): Member) -> ApiResult<Json<PlaceList>> {
        let places = self.0.places.list(h).await.map_err(ApiError::from)?;
        Ok(Json(PlaceList { places: places.iter().map(Into::into).collect() }))
    }

    /// One place with the places directly in it. Its items: `GET /api/items?place=ID`.
    #[oai(path = "/places/:id", method = "get")]
    async fn get(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<PlaceDetailDto>> {
        let detail = self.0.places.get(h, PlaceId(id.0)).await.map_err(ApiError::from)?;
        Ok(Json((&detail).into()))
    }

    /// Rename, move (`parent_id`) or annotate a place. A move under itself or under a place inside it is 422
    /// and changes nothing; a name a sibling has is 409.
    #[oai(path = "/places/:id", method = "patch")]
    async fn patch(&self, Person(c): Person, id: Path<i64>, body: Json<PatchPlace>) -> ApiResult<Json<PlaceDto>> {
        let changes = body.0.try_into_domain()?;
        let view = self.0.places.change((&c).into(), PlaceId(id.0), changes).await.map_err(ApiError::from)?;
        Ok(Json((&view).into()))
    }

    /// Delete an empty place: 409 while items or places are in it.
    #[oai(path = "/places/:id", method = "delete")]
    async fn delete(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Deleted> {
        self.0.places.delete((&c).into(), PlaceId(id.0)).await.map_err(ApiError::from)?;
        Ok(Deleted::Deleted)
    }
}
