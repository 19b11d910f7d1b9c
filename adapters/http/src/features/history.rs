//! The history: who changed what. An item's history (oldest first), the household's activity feed (newest first,
//! paged by `before`), and undoing a change of an item's fields.

use crate::auth::{Member, Person};
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use chrono::{DateTime, Utc};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi, Tags};
use trove_application::history::{ACTIVITY_MAX, ShownEvent};
use trove_domain::people::EventId;
use trove_domain::{ItemId, PlaceId};

#[derive(Tags)]
enum Tag {
    /// Who changed what, and undoing a change.
    History,
}

/// Who made a change.
#[derive(Debug, Clone, PartialEq, Eq, Object)]
pub struct EventMember {
    pub id: i64,
    pub name: String,
}

/// What a change is about.
#[derive(Debug, Clone, PartialEq, Eq, Object)]
pub struct EventObject {
    /// `item`, `place`, `media`, `project` or `member`.
    pub kind: String,
    pub id: i64,
}

/// One field's change, its values as the API shows them (`null`: absent).
#[derive(Debug, Clone, PartialEq, Eq, Object)]
pub struct FieldChangeDto {
    pub field: String,
    pub before: Option<String>,
    pub after: Option<String>,
    /// For a value that is an id (`place_id`): the name it had then (a place's path, "Garage / Box 1"); null
    /// when there was none, or for events written before names were kept.
    pub before_name: Option<String>,
    /// As `before_name`, for `after`.
    pub after_name: Option<String>,
}

/// One change: when, by whom (`null`: the command line), what and how.
#[derive(Debug, Clone, PartialEq, Eq, Object)]
pub struct EventDto {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub member: Option<EventMember>,
    /// What was done. Items: `create`, `patch`, `bulk`, `measurement`, `fault`, `test`, `gone`, `undo`, and a
    /// project's `accept`, `build`, `drop` on the items it holds; places and media: `create`, `patch`, `delete`;
    /// projects: `create`, `accept`, `build`, `drop`; members: `join`, `role`, `remove`.
    pub action: String,
    pub object: EventObject,
    pub changes: Vec<FieldChangeDto>,
    /// Whether this kind of change can be undone (`POST /api/events/{id}/undo`): a change of an item's fields by
    /// hand that the undo can put back. The undo is still refused (409) when the item changed since.
    pub undoable: bool,
}

impl From<&ShownEvent> for EventDto {
    fn from(s: &ShownEvent) -> Self {
        Self {
            id: s.id.0,
            at: s.event.at,
            member: s.member.as_ref().map(|(id, name)| EventMember { id: id.0, name: name.clone() }),
            action: s.event.action.as_str().to_owned(),
            object: EventObject { kind: s.event.kind.as_str().to_owned(), id: s.event.object },
            changes: s
                .event
                .changes
                .iter()
                .map(|c| FieldChangeDto {
                    field: c.field.to_string(),
                    before: c.before.clone(),
                    after: c.after.clone(),
                    before_name: c.before_name().map(str::to_owned),
                    after_name: c.after_name().map(str::to_owned),
                })
                .collect(),
            undoable: trove_domain::history::undoable(&s.event),
        }
    }
}

/// Some events.
#[derive(Debug, Clone, PartialEq, Eq, Object)]
pub struct EventList {
    pub events: Vec<EventDto>,
}

fn list(events: &[ShownEvent]) -> Json<EventList> {
    Json(EventList { events: events.iter().map(EventDto::from).collect() })
}

pub struct HistoryApi(pub Services);

#[OpenApi(tag = "Tag::History")]
impl HistoryApi {
    /// The history of an item, oldest first.
    #[oai(path = "/items/:id/history", method = "get")]
    async fn item_history(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<EventList>> {
        let events = self.0.history.of_item(h, ItemId(id.0)).await.map_err(ApiError::from)?;
        Ok(list(&events))
    }

    /// The history of a place, oldest first.
    #[oai(path = "/places/:id/history", method = "get")]
    async fn place_history(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<EventList>> {
        let events = self.0.history.of_place(h, PlaceId(id.0)).await.map_err(ApiError::from)?;
        Ok(list(&events))
    }

    /// The household's changes, newest first: `limit` of them (1 to 200, 50 by default), older than the event
    /// `before` when given (pass the last id of a page to get the next).
    #[oai(path = "/activity", method = "get")]
    async fn activity(
        &self,
        Member(h): Member,
        limit: Query<Option<u32>>,
        before: Query<Option<i64>>,
    ) -> ApiResult<Json<EventList>> {
        let limit = limit.0.unwrap_or(50);
        if !(1..=ACTIVITY_MAX).contains(&limit) {
            return Err(ApiError::bad_request(format!("limit must be between 1 and {ACTIVITY_MAX}")).into());
        }
        let events = self.0.history.activity(h, limit, before.0.map(EventId)).await.map_err(ApiError::from)?;
        Ok(list(&events))
    }

    /// Undo a change of an item's fields: puts back the values it changed, while the item has not changed since
    /// (409 naming the later change otherwise; 422 for an event that is not a change of an item's fields). The
    /// undo is an event itself, answered.
    #[oai(path = "/events/:id/undo", method = "post")]
    async fn undo(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Json<EventDto>> {
        let undone = self.0.history.undo(&c, EventId(id.0)).await.map_err(ApiError::from)?;
        Ok(Json(EventDto::from(&undone)))
    }
}
