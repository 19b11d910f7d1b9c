//! Pricing an item from grounded web comparables, its price history, listing drafts and give-away posts.

use crate::auth::{Member, Person};
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::shared::{Condition, Kept, PriceDto, RunSpendDto};
use crate::watched::{Watch, Watched};
use chrono::{DateTime, Utc};
use poem_openapi::param::{Header, Path};
use poem_openapi::payload::Json;
use poem_openapi::{Enum, Object, OpenApi, Tags};
use trove_domain::ItemId;
use trove_domain::listing::{ListingDraft, PriceFrom};
use trove_domain::pricing::{PriceReport, PriceSource};

#[derive(Tags)]
enum Tag {
    /// Pricing, listing drafts and give-away posts.
    Selling,
}

/// A comparable the rules kept: its page was among the search results or citations.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ComparableDto {
    pub title: String,
    pub url: String,
    /// Integer minor units (pence, cents).
    pub price: i64,
    pub currency: String,
    pub condition: Option<Condition>,
    pub sold: bool,
    pub note: Option<String>,
}

/// A comparable the rules dropped.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct DroppedComparableDto {
    pub url: String,
    pub title: String,
    pub reason: String,
}

/// Low, typical and high, in integer minor units.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct EstimateDto {
    pub low: i64,
    pub typical: i64,
    pub high: i64,
    pub currency: String,
}

/// A price report.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct PriceReportDto {
    pub item_id: i64,
    pub at: DateTime<Utc>,
    pub comparables: Vec<ComparableDto>,
    pub dropped: Vec<DroppedComparableDto>,
    /// `null`: too little evidence.
    pub estimate: Option<EstimateDto>,
    pub searches: u32,
    /// `search` (grounded comparables) or `hand` (a value set by hand: one figure, no comparables).
    pub source: PriceSourceDto,
    /// What the call cost (only in the answer to `POST .../price`).
    pub spend: Option<RunSpendDto>,
}

/// Where a price report's estimate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename = "PriceSource", rename_all = "snake_case")]
pub enum PriceSourceDto {
    Search,
    Hand,
}

impl From<PriceSource> for PriceSourceDto {
    fn from(s: PriceSource) -> Self {
        match s {
            PriceSource::Search => Self::Search,
            PriceSource::Hand => Self::Hand,
        }
    }
}

impl From<&PriceReport> for PriceReportDto {
    fn from(r: &PriceReport) -> Self {
        Self {
            item_id: r.item_id.0,
            at: r.at,
            comparables: r
                .comparables
                .iter()
                .map(|c| ComparableDto {
                    title: c.title.clone(),
                    url: c.url.clone(),
                    price: c.price.minor,
                    currency: c.price.currency.to_string(),
                    condition: c.condition.map(Into::into),
                    sold: c.sold,
                    note: c.note.clone(),
                })
                .collect(),
            dropped: r
                .dropped
                .iter()
                .map(|d| DroppedComparableDto { url: d.url.clone(), title: d.title.clone(), reason: d.reason.clone() })
                .collect(),
            estimate: r.estimate.map(|e| EstimateDto {
                low: e.low,
                typical: e.typical,
                high: e.high,
                currency: e.currency.to_string(),
            }),
            searches: r.searches,
            source: r.source.into(),
            spend: None,
        }
    }
}

/// Price history, newest first.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct PriceHistory {
    pub prices: Vec<PriceReportDto>,
}

/// A listing draft.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct DraftDto {
    /// At most 80 characters.
    pub title: String,
    pub condition: Condition,
    pub description: String,
    /// The asking price set by hand on the item when there is one, whatever the comparables say; else the
    /// typical price of the latest estimate, in minor units; `null` if neither.
    pub price: Option<i64>,
    pub currency: Option<String>,
    /// Where `price` comes from; `null` with no price.
    pub price_from: Option<PriceFromDto>,
}

/// Where a listing draft's price comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum PriceFromDto {
    /// The asking price set by hand on the item (`asking_price`).
    AskingPrice,
    /// The latest estimate (from comparables, or a value set by hand).
    Estimate,
}

impl From<PriceFrom> for PriceFromDto {
    fn from(p: PriceFrom) -> Self {
        match p {
            PriceFrom::AskingPrice => Self::AskingPrice,
            PriceFrom::Estimate => Self::Estimate,
        }
    }
}

impl From<&ListingDraft> for DraftDto {
    fn from(d: &ListingDraft) -> Self {
        Self {
            title: d.title.clone(),
            condition: d.condition.into(),
            description: d.description.clone(),
            price: d.price,
            currency: d.currency.map(|c| c.to_string()),
            price_from: d.price_from.map(Into::into),
        }
    }
}

/// A give-away post.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ShareDto {
    /// At most 500 characters.
    pub text: String,
}

/// The selling routes.
pub struct SellingApi(pub Services);

#[OpenApi(tag = "Tag::Selling")]
impl SellingApi {
    /// Price an item from grounded web comparables (one model call with web search). With
    /// `Accept: text/event-stream` the answer is a stream of server-sent events: `searching`
    /// (`{"max_searches"}`) when the call is sent, then `result` (this JSON) or `error`.
    #[oai(path = "/items/:id/price", method = "post")]
    async fn price(
        &self,
        Person(c): Person,
        id: Path<i64>,
        #[oai(name = "Idempotency-Key")] key: Header<Option<String>>,
        #[oai(name = "Accept")] accept: Header<Option<String>>,
    ) -> ApiResult<Watched<PriceReportDto>> {
        let (h, actor) = (c.household, trove_application::recorder::Actor::from(&c));
        let services = self.0.clone();
        let id = id.0;
        let work = move |watch: Watch| async move {
            let run = || async {
                let priced = services.selling.price_watched(actor, ItemId(id), &watch).await.map_err(ApiError::from)?;
                let mut answer = PriceReportDto::from(&priced.report);
                answer.spend = Some((&priced.spend).into());
                Ok::<_, ApiError>(Kept(answer))
            };
            // The request has no body: the scope names all it asks.
            let scope = format!("price:{id}");
            let Kept(answer) = services.idempotency.once(h, &scope, key.0.as_deref(), b"", run).await?;
            Ok(answer)
        };
        Watched::answer(accept.0.as_deref(), work).await
    }

    /// The item's price history, newest first.
    #[oai(path = "/items/:id/prices", method = "get")]
    async fn prices(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<PriceHistory>> {
        let reports = self.0.selling.history(h, ItemId(id.0)).await.map_err(ApiError::from)?;
        Ok(Json(PriceHistory { prices: reports.iter().map(Into::into).collect() }))
    }

    /// Set what one unit of the item is worth by hand (a valuation, a replacement quote): kept in its price
    /// history as a report with `source: hand`, it is the item's current value in the value report until a newer
    /// report, and "Refresh values" leaves it alone. An amount below 0 or a currency that is no ISO 4217 code is
    /// 400; another household's item is 404.
    #[oai(path = "/items/:id/value", method = "put")]
    async fn set_value(
        &self,
        Member(h): Member,
        id: Path<i64>,
        body: Json<PriceDto>,
    ) -> ApiResult<Json<PriceReportDto>> {
        let each = body.0.try_into_domain("value").map_err(ApiError::from)?;
        let report = self.0.value.set_value(h, ItemId(id.0), each).await.map_err(ApiError::from)?;
        Ok(Json((&report).into()))
    }

    /// The listing draft (409 unless the intent is `sell`).
    #[oai(path = "/items/:id/draft", method = "get")]
    async fn draft(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<DraftDto>> {
        Ok(Json((&self.0.selling.draft(h, ItemId(id.0)).await.map_err(ApiError::from)?).into()))
    }

    /// The give-away post (409 unless the intent is `give`).
    #[oai(path = "/items/:id/share", method = "get")]
    async fn share(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<ShareDto>> {
        Ok(Json(ShareDto { text: self.0.selling.share(h, ItemId(id.0)).await.map_err(ApiError::from)? }))
    }
}
