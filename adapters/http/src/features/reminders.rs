//! Reminders: a member's channels and lead time, a test send, the delivery log (owners), and the calendar feed.

use crate::auth::Person;
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use chrono::{DateTime, Utc};
use poem::http::StatusCode;
use poem_openapi::param::Query;
use poem_openapi::payload::{Json, PlainText};
use poem_openapi::{ApiResponse, Object, OpenApi, Tags};
use trove_application::ports::{Channels, Reminder};
use trove_application::reminders::redacted;

#[derive(Tags)]
enum Tag {
    /// Reminders by e-mail, push and calendar.
    Reminders,
}

/// A member's reminder channels.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NotificationsDto {
    /// Where e-mail reminders go; `null`: none (the server sends by `TROVE_SMTP_URL`).
    pub email: Option<String>,
    /// Notification URLs as Shoutrrr and Apprise write them: `ntfy://host/topic`, `gotify://host/token`,
    /// `discord://token@id`, `slack://a/b/c`, `telegram://token@telegram?chats=@channel`, or an `https://`
    /// webhook (a JSON POST signed with `X-Trove-Signature: sha256=<HMAC-SHA256 of the body>`). At most 10.
    #[oai(validator(max_items = 10))]
    pub urls: Vec<String>,
    /// Days before a thing falls due that its reminder goes out (0 to 365).
    #[oai(validator(maximum(value = "365")))]
    pub lead_days: u32,
}

impl From<Channels> for NotificationsDto {
    fn from(c: Channels) -> Self {
        Self { email: c.email, urls: c.urls, lead_days: c.lead_days }
    }
}

/// A channel to try.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct TestBody {
    /// `email:<address>` or a notification URL.
    pub channel: String,
}

/// How a test send went.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct TestSentDto {
    /// The channel, a URL without its path (it carries tokens).
    pub channel: String,
    pub delivered: bool,
    /// Why it was not delivered.
    pub error: Option<String>,
}

/// One reminder and how its delivery went.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct DeliveryDto {
    pub id: i64,
    pub member_id: i64,
    /// The channel, a URL without its path (it carries tokens).
    pub channel: String,
    pub item_id: i64,
    pub subject: String,
    /// `pending` (to be tried, again after a failure), `sent`, or `failed` (given up after 8 tries).
    pub status: String,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub next_try_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
}

impl From<&Reminder> for DeliveryDto {
    fn from(r: &Reminder) -> Self {
        Self {
            id: r.id,
            member_id: r.member.0,
            channel: redacted(&r.channel),
            item_id: r.item.0,
            subject: r.subject.clone(),
            status: r.status.clone(),
            attempts: r.attempts,
            last_error: r.last_error.clone(),
            created_at: r.created_at,
            next_try_at: r.next_try_at,
            sent_at: r.sent_at,
        }
    }
}

/// The delivery log.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct DeliveryLog {
    /// The key webhook bodies are signed with: `X-Trove-Signature` is `sha256=` and the hex HMAC-SHA256 of the
    /// body under it.
    pub webhook_secret: String,
    /// Newest first, at most 200.
    pub deliveries: Vec<DeliveryDto>,
}

/// A member's calendar link.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct CalendarLink {
    /// A secret, read-only link to subscribe to from a phone or calendar app.
    pub url: String,
}

/// The feed.
#[derive(ApiResponse)]
pub enum CalendarFeed {
    /// Loans due back, maintenance due and warranties ending, as all-day events (RFC 5545).
    #[oai(status = 200, content_type = "text/calendar; charset=utf-8")]
    Feed(PlainText<String>),
}

/// The reminder routes.
pub struct RemindersApi(pub Services);

impl RemindersApi {
    fn link(&self, key: &str) -> CalendarLink {
        CalendarLink { url: format!("{}/api/calendar.ics?key={key}", self.0.site.public_url().trim_end_matches('/')) }
    }
}

#[OpenApi(tag = "Tag::Reminders")]
impl RemindersApi {
    /// The caller's reminder channels and lead time.
    #[oai(path = "/me/notifications", method = "get")]
    async fn get(&self, Person(c): Person) -> ApiResult<Json<NotificationsDto>> {
        Ok(Json(self.0.reminders.channels(&c).await.map_err(ApiError::from)?.into()))
    }

    /// Set the caller's reminder channels and lead time (every member, viewers too, chooses their own). A
    /// webhook to a private, loopback or link-local address is refused (422) unless the server allows private
    /// ones (`TROVE_WEBHOOK_ALLOW_PRIVATE=1`). A reminder goes once per thing, lead time and channel, and again
    /// only when the thing changes (a new due date).
    #[oai(path = "/me/notifications", method = "put")]
    async fn put(&self, Person(c): Person, body: Json<NotificationsDto>) -> ApiResult<Json<NotificationsDto>> {
        let b = body.0;
        let set = Channels { email: b.email, urls: b.urls, lead_days: b.lead_days };
        Ok(Json(self.0.reminders.set_channels(&c, set).await.map_err(ApiError::from)?.into()))
    }

    /// Send a test reminder by one channel (`email:<address>` or a notification URL) and say how it went.
    #[oai(path = "/me/notifications/test", method = "post")]
    async fn test(&self, Person(c): Person, body: Json<TestBody>) -> ApiResult<Json<TestSentDto>> {
        let sent = self.0.reminders.send_test(&c, &body.0.channel).await.map_err(ApiError::from)?;
        Ok(Json(TestSentDto { channel: redacted(&sent.channel), delivered: sent.error.is_none(), error: sent.error }))
    }

    /// The household's delivery log, newest first, and the key webhook bodies are signed with (owners).
    #[oai(path = "/notifications/deliveries", method = "get")]
    async fn deliveries(&self, Person(c): Person) -> ApiResult<Json<DeliveryLog>> {
        let (secret, log) = self.0.reminders.log(&c).await.map_err(ApiError::from)?;
        Ok(Json(DeliveryLog { webhook_secret: secret, deliveries: log.iter().map(Into::into).collect() }))
    }

    /// The caller's calendar link (made the first time): subscribe to it from a phone or a calendar app.
    #[oai(path = "/me/calendar", method = "get")]
    async fn calendar(&self, Person(c): Person) -> ApiResult<Json<CalendarLink>> {
        let key = self.0.reminders.calendar_key(&c).await.map_err(ApiError::from)?;
        Ok(Json(self.link(&key)))
    }

    /// A new calendar link for the caller; the old one stops working.
    #[oai(path = "/me/calendar", method = "post")]
    async fn new_calendar(&self, Person(c): Person) -> ApiResult<Json<CalendarLink>> {
        let key = self.0.reminders.new_calendar_key(&c).await.map_err(ApiError::from)?;
        Ok(Json(self.link(&key)))
    }

    /// The calendar feed of the member whose link this is: no sign-in, the key is the secret (404 for a key no
    /// one has).
    #[oai(path = "/calendar.ics", method = "get")]
    async fn feed(&self, key: Query<String>) -> ApiResult<CalendarFeed> {
        match self.0.reminders.feed(&key.0).await.map_err(ApiError::from)? {
            Some(ics) => Ok(CalendarFeed::Feed(PlainText(ics))),
            None => Err(ApiError::new(StatusCode::NOT_FOUND, "not_found", "no calendar has this key").into()),
        }
    }
}
