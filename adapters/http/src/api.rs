//! The `/api` routes.

use crate::Services;
use crate::dto::*;
use crate::error::ApiError;
use crate::selling_dto::*;
use chrono::{DateTime, Utc};
use poem::Request;
use poem_openapi::auth::Bearer;
use poem_openapi::param::{Header, Path, Query};
use poem_openapi::payload::{Json, PlainText};
use poem_openapi::types::{ParseFromJSON, ToJSON};
use poem_openapi::{ApiResponse, OpenApi, SecurityScheme, Tags};
use std::sync::Arc;
use trove_application::ports::idempotency::{Fingerprint, Reservation, Reserve, StoredAnswer};
use trove_application::ports::{IdempotencyStore, ItemQuery};
use trove_domain::item::{ItemType, Measurement, MeasurementSource};
use trove_domain::{HouseholdId, ItemId, ProjectId, TemplateId};

type ApiResult<T> = poem::Result<T>;

/// `GET /health`: the process is up.
#[poem::handler]
pub fn health() -> poem::web::Json<serde_json::Value> {
    poem::web::Json(serde_json::json!({ "status": "ok" }))
}

#[derive(Tags)]
enum Tag {
    /// What the household owns.
    Items,
    /// Projects that may be proposed.
    Templates,
    /// Proposals and the project lifecycle.
    Projects,
    /// Pricing, listing drafts and give-away posts.
    Selling,
    /// The spend ledger.
    Spend,
}

/// A member of a household, by bearer token (`trove token new`).
#[derive(SecurityScheme)]
#[oai(ty = "bearer", checker = "member_of")]
pub struct Member(pub HouseholdId);

async fn member_of(req: &Request, bearer: Bearer) -> poem::Result<HouseholdId> {
    let auth = req.data::<trove_application::auth::Auth>().ok_or_else(ApiError::unauthorized)?;
    match auth.household(&bearer.token).await.map_err(ApiError::from)? {
        Some(h) => Ok(h),
        None => Err(ApiError::unauthorized().into()),
    }
}

/// All the API's route groups.
pub fn apis(
    s: Services,
) -> (ItemsApi, TemplatesApi, ProjectsApi, SellingApi, SpendApi, crate::intake::IntakeApi, crate::photo::PhotoApi) {
    (
        ItemsApi(s.clone()),
        TemplatesApi(s.clone()),
        ProjectsApi(s.clone()),
        SellingApi(s.clone()),
        SpendApi(s.clone()),
        crate::intake::IntakeApi(s.clone()),
        crate::photo::PhotoApi(s),
    )
}

/// A `201 Created` answer.
#[derive(ApiResponse)]
pub enum Created<T: ToJSON + Send + Sync> {
    #[oai(status = 201)]
    Created(Json<T>),
}

pub struct ItemsApi(Services);

#[OpenApi(tag = "Tag::Items")]
impl ItemsApi {
    /// List items, with filters and paging.
    #[oai(path = "/items", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list(
        &self,
        Member(h): Member,
        intent: Query<Option<Intent>>,
        availability: Query<Option<Availability>>,
        item_type: Query<Option<String>>,
        /// Words that must all appear in the name or profile.
        q: Query<Option<String>>,
        #[oai(default)] include_gone: Query<bool>,
        /// 1 to 500, default 50.
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> ApiResult<Json<ItemList>> {
        let limit = limit.0.unwrap_or(50);
        if !(1..=i64::from(trove_application::items::LIMIT_MAX)).contains(&limit) {
            return Err(ApiError::bad_request("limit must be between 1 and 500").into());
        }
        let offset = offset.0.unwrap_or(0);
        if offset < 0 {
            return Err(ApiError::bad_request("offset must not be negative").into());
        }
        let query = ItemQuery {
            intent: intent.0.map(Into::into),
            availability: availability.0.map(Into::into),
            item_type: item_type
                .0
                .as_deref()
                .filter(|t| !t.is_empty())
                .map(ItemType::new)
                .transpose()
                .map_err(ApiError::from)?,
            q: q.0.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()),
            place: None,
            include_gone: include_gone.0,
            limit: limit as u32,
            offset: offset as u64,
        };
        let page = self.0.inventory.list(h, &query).await.map_err(ApiError::from)?;
        Ok(Json(ItemList {
            items: page.items.iter().map(Into::into).collect(),
            total: page.total,
            limit: query.limit,
            offset: query.offset,
        }))
    }

    /// Add an item.
    #[oai(path = "/items", method = "post")]
    async fn create(&self, Member(h): Member, body: Json<CreateItem>) -> ApiResult<Created<ItemDto>> {
        let new = body.0.try_into_domain(self.0.clock.now())?;
        let item = self.0.inventory.create(h, new).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json((&item).into())))
    }

    /// One item in full.
    #[oai(path = "/items/:id", method = "get")]
    async fn get(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<ItemDto>> {
        Ok(Json((&self.0.inventory.get(h, ItemId(id.0)).await.map_err(ApiError::from)?).into()))
    }

    /// Change the fields given.
    #[oai(path = "/items/:id", method = "patch")]
    async fn patch(&self, Member(h): Member, id: Path<i64>, body: Json<PatchItem>) -> ApiResult<Json<ItemDto>> {
        let patch = body.0.try_into_domain()?;
        Ok(Json((&self.0.inventory.patch(h, ItemId(id.0), patch).await.map_err(ApiError::from)?).into()))
    }

    /// Record a measurement (normalised to the canonical unit).
    #[oai(path = "/items/:id/measurements", method = "post")]
    async fn measure(
        &self,
        Member(h): Member,
        id: Path<i64>,
        body: Json<NewMeasurement>,
    ) -> ApiResult<Created<ItemDto>> {
        let b = body.0;
        let source = b.source.map(Into::into).unwrap_or(MeasurementSource::Manual);
        let m = Measurement::new(&b.key, b.value, &b.unit, b.at.unwrap_or_else(|| self.0.clock.now()), source)
            .map_err(ApiError::from)?;
        Ok(Created::Created(Json(
            (&self.0.inventory.add_measurement(h, ItemId(id.0), m).await.map_err(ApiError::from)?).into(),
        )))
    }

    /// Record a fault.
    #[oai(path = "/items/:id/faults", method = "post")]
    async fn fault(&self, Member(h): Member, id: Path<i64>, body: Json<NewFault>) -> ApiResult<Created<ItemDto>> {
        let fault = body.0.try_into_domain()?;
        Ok(Created::Created(Json(
            (&self.0.inventory.add_fault(h, ItemId(id.0), fault).await.map_err(ApiError::from)?).into(),
        )))
    }

    /// Record a test.
    #[oai(path = "/items/:id/tests", method = "post")]
    async fn test(&self, Member(h): Member, id: Path<i64>, body: Json<NewTest>) -> ApiResult<Created<ItemDto>> {
        let test = body.0.try_into_domain(self.0.clock.now())?;
        Ok(Created::Created(Json(
            (&self.0.inventory.add_test(h, ItemId(id.0), test).await.map_err(ApiError::from)?).into(),
        )))
    }

    /// Mark an item gone (409 while reserved by a project).
    #[oai(path = "/items/:id/gone", method = "post")]
    async fn gone(&self, Member(h): Member, id: Path<i64>, body: Json<MarkGone>) -> ApiResult<Json<ItemDto>> {
        let note = trove_domain::item::note(body.0.note.as_deref());
        Ok(Json(
            (&self.0.inventory.mark_gone(h, ItemId(id.0), body.0.reason.into(), note).await.map_err(ApiError::from)?)
                .into(),
        ))
    }
}

pub struct TemplatesApi(Services);

#[OpenApi(tag = "Tag::Templates")]
impl TemplatesApi {
    /// The catalogue: built-in templates and the household's own.
    #[oai(path = "/templates", method = "get")]
    async fn list(&self, Member(h): Member) -> ApiResult<Json<TemplateList>> {
        let templates = self.0.catalogue.list(h).await.map_err(ApiError::from)?;
        Ok(Json(TemplateList { templates: templates.iter().map(Into::into).collect() }))
    }

    /// One template.
    #[oai(path = "/templates/:id", method = "get")]
    async fn get(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<TemplateDto>> {
        Ok(Json((&self.0.catalogue.get(h, TemplateId(id.0)).await.map_err(ApiError::from)?).into()))
    }

    /// Add a template of the household's own.
    #[oai(path = "/templates", method = "post")]
    async fn create(&self, Member(h): Member, body: Json<CreateTemplate>) -> ApiResult<Created<TemplateDto>> {
        let t = self.0.catalogue.create(h, body.0.try_into_domain()?).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json((&t).into())))
    }
}

/// The build pack, as JSON or as printable Markdown.
pub enum PackAnswer {
    /// The pack as JSON.
    Json(Json<Box<crate::pack_dto::BuildPackDto>>),
    /// The pack as Markdown (`Accept: text/markdown`).
    Markdown(PlainText<String>),
}

/// The media type of the Markdown pack.
const MARKDOWN: &str = "text/markdown; charset=utf-8";

/// Written by hand rather than derived: both answers are the one `200` of the route, told apart by `Accept`, and
/// the document must list them as two media types of a single response (a derived enum would repeat the `200`
/// key).
impl ApiResponse for PackAnswer {
    fn meta() -> poem_openapi::registry::MetaResponses {
        let mut json = <Json<Box<crate::pack_dto::BuildPackDto>> as ApiResponse>::meta();
        let markdown = <PlainText<String> as ApiResponse>::meta();
        let mut answer = json.responses.remove(0);
        answer.description = "The build pack: JSON, or printable Markdown with `Accept: text/markdown`";
        for mut media in markdown.responses.into_iter().flat_map(|r| r.content) {
            media.content_type = MARKDOWN;
            answer.content.push(media);
        }
        poem_openapi::registry::MetaResponses { responses: vec![answer] }
    }

    fn register(registry: &mut poem_openapi::registry::Registry) {
        <Json<Box<crate::pack_dto::BuildPackDto>> as ApiResponse>::register(registry);
        <PlainText<String> as ApiResponse>::register(registry);
    }
}

impl poem::IntoResponse for PackAnswer {
    fn into_response(self) -> poem::Response {
        match self {
            PackAnswer::Json(json) => json.into_response(),
            PackAnswer::Markdown(PlainText(text)) => {
                poem::IntoResponse::with_content_type(text, MARKDOWN).into_response()
            }
        }
    }
}

/// Checks an `Idempotency-Key`: 1 to 200 visible ASCII characters.
fn idempotency_key(raw: Option<String>) -> ApiResult<Option<String>> {
    match raw {
        None => Ok(None),
        Some(k) if !k.is_empty() && k.len() <= 200 && k.bytes().all(|b| b.is_ascii_graphic()) => Ok(Some(k)),
        Some(_) => Err(ApiError::bad_request("Idempotency-Key must be 1 to 200 visible ASCII characters").into()),
    }
}

/// What a request's `Idempotency-Key` lets it do.
enum Begun<T> {
    /// Run, holding the key if the request has one.
    Run(Option<HeldKey>),
    /// Answer the answer kept for the same request; run nothing.
    Replay(T),
}

/// A key reserved for one running request, to be settled when it ends: completed with its answer or released.
struct HeldKey {
    /// Where the reservation is, cloned so that a release may outlive the request.
    store: Arc<dyn IdempotencyStore>,
    household: HouseholdId,
    reservation: Reservation,
    /// Set once completed or released, so that dropping does not release again.
    settled: bool,
}

impl HeldKey {
    /// Keeps the answer for replays. A failure is only logged: the answer stands, and the key stays pending
    /// until it may be taken over.
    async fn complete(mut self, answer: StoredAnswer) {
        if let Err(e) = self.store.complete(self.household, self.reservation, &answer).await {
            tracing::warn!(error = %e, "could not keep the answer of an Idempotency-Key");
        }
        self.settled = true;
    }

    /// Frees the key of a failed request so that the client may retry with it. A failure is only logged.
    async fn release(mut self) {
        if let Err(e) = self.store.release(self.household, self.reservation).await {
            tracing::warn!(error = %e, "could not release an Idempotency-Key");
        }
        self.settled = true;
    }
}

impl Drop for HeldKey {
    /// A key dropped unsettled belongs to a request that was cancelled (its client went away) or panicked: it
    /// is released in the background, so a retry is not refused as still running for the takeover timeout.
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let (store, household, reservation) = (self.store.clone(), self.household, self.reservation);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = store.release(household, reservation).await {
                    tracing::warn!(error = %e, "could not release the Idempotency-Key of a cancelled request");
                }
            });
        }
    }
}

impl Services {
    /// Reserves the request's key, if it has one, for a request to `scope` whose body is `request`: run it, or
    /// answer the kept answer of the same request (read back into its DTO). A key answered for a different
    /// request is refused (422), as is one whose request is still running (409).
    async fn begin<T: ParseFromJSON>(
        &self,
        h: HouseholdId,
        scope: &str,
        key: Option<&str>,
        request: &[u8],
    ) -> ApiResult<Begun<T>> {
        let Some(key) = key else { return Ok(Begun::Run(None)) };
        let fingerprint = Fingerprint::of(scope, request);
        let found = self
            .idempotency
            .reserve(h, scope, key, &fingerprint, self.clock.now())
            .await
            .map_err(|e| ApiError::from(trove_application::Error::from(e)))?;
        let found = match found {
            Reserve::Reserved(reservation) => {
                let store = self.idempotency.clone();
                return Ok(Begun::Run(Some(HeldKey { store, household: h, reservation, settled: false })));
            }
            Reserve::Replay(found) => found,
            Reserve::OtherRequest => {
                let refused = "this Idempotency-Key was used for a different request";
                return Err(ApiError::from(trove_application::Error::Rule(refused.into())).into());
            }
            Reserve::Running => {
                let refused = "a request with this Idempotency-Key is still running";
                return Err(ApiError::from(trove_application::Error::Conflict(refused.into())).into());
            }
        };
        let value: serde_json::Value = serde_json::from_str(&found.body).map_err(|e| {
            ApiError::from(trove_application::Error::Unexpected(anyhow::anyhow!("stored answer is not JSON: {e}")))
        })?;
        Ok(Begun::Replay(T::parse_from_json(Some(value)).map_err(|e| {
            ApiError::from(trove_application::Error::Unexpected(anyhow::anyhow!(
                "stored answer does not parse: {}",
                e.into_message()
            )))
        })?))
    }

    /// Settles the key after the run and answers the run's outcome unchanged: a successful answer is kept for
    /// replays, any failure releases the key so that the client may retry with it.
    async fn settle<T: ToJSON>(&self, held: Option<HeldKey>, outcome: ApiResult<T>) -> ApiResult<T> {
        let Some(held) = held else { return outcome };
        match outcome.as_ref().map(ToJSON::to_json) {
            Ok(Some(answer)) => {
                held.complete(StoredAnswer { status: 200, body: answer.to_string(), at: self.clock.now() }).await;
            }
            Ok(None) => {
                tracing::warn!("an answer to keep for its Idempotency-Key has no JSON form; the key is released");
                held.release().await;
            }
            Err(_) => held.release().await,
        }
        outcome
    }
}

/// The body of a request as its fingerprint reads it: its DTO as JSON, so that spacing and the order of the
/// members do not make a repeated request a different one.
fn request_json<T: ToJSON>(body: &T) -> Vec<u8> {
    body.to_json().map(|v| v.to_string().into_bytes()).unwrap_or_default()
}

pub struct ProjectsApi(Services);

#[OpenApi(tag = "Tag::Projects")]
impl ProjectsApi {
    /// Run the proposal loop and write what the rules keep. The body (`{"brief"}`) may be left out.
    #[oai(path = "/projects/propose", method = "post")]
    async fn propose(
        &self,
        Member(h): Member,
        #[oai(name = "Idempotency-Key")] key: Header<Option<String>>,
        body: Json<Option<ProposeRequest>>,
    ) -> ApiResult<Json<ProposeResult>> {
        let body = Json(body.0.unwrap_or_default());
        let key = idempotency_key(key.0)?;
        let held = match self.0.begin(h, "propose", key.as_deref(), &request_json(&body.0)).await? {
            Begun::Replay(done) => return Ok(Json(done)),
            Begun::Run(held) => held,
        };
        let outcome = async {
            let out = self.0.propose.run(h, body.0.brief.as_deref()).await.map_err(ApiError::from)?;
            Ok(ProposeResult {
                projects: out.projects.iter().map(Into::into).collect(),
                dropped: out.dropped.iter().map(Into::into).collect(),
                steps: out.steps,
                spend: (&out.spend).into(),
            })
        }
        .await;
        self.0.settle(held, outcome).await.map(Json)
    }

    /// The household's projects, newest first; `status` keeps those in that status.
    #[oai(path = "/projects", method = "get")]
    async fn list(&self, Member(h): Member, status: Query<Option<ProjectStatus>>) -> ApiResult<Json<ProjectList>> {
        let projects = self.0.projects.list(h, status.0.map(Into::into)).await.map_err(ApiError::from)?;
        Ok(Json(ProjectList { projects: projects.iter().map(Into::into).collect() }))
    }

    /// One project.
    #[oai(path = "/projects/:id", method = "get")]
    async fn get(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<ProjectDto>> {
        Ok(Json((&self.0.projects.get(h, ProjectId(id.0)).await.map_err(ApiError::from)?).into()))
    }

    /// Accept a proposed project: its items are reserved atomically (409 naming an item no longer buildable).
    #[oai(path = "/projects/:id/accept", method = "post")]
    async fn accept(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<ProjectDto>> {
        Ok(Json((&self.0.projects.accept(h, ProjectId(id.0)).await.map_err(ApiError::from)?).into()))
    }

    /// Mark an accepted project built: its items become in use.
    #[oai(path = "/projects/:id/build", method = "post")]
    async fn build(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<ProjectDto>> {
        Ok(Json((&self.0.projects.build(h, ProjectId(id.0)).await.map_err(ApiError::from)?).into()))
    }

    /// Drop a project: reserved items become available again.
    #[oai(path = "/projects/:id/drop", method = "post")]
    async fn drop_project(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<ProjectDto>> {
        Ok(Json((&self.0.projects.drop_project(h, ProjectId(id.0)).await.map_err(ApiError::from)?).into()))
    }

    /// The build pack: JSON, or Markdown with `Accept: text/markdown`.
    #[oai(path = "/projects/:id/pack", method = "get")]
    async fn pack(
        &self,
        Member(h): Member,
        id: Path<i64>,
        #[oai(name = "Accept")] accept: Header<Option<String>>,
    ) -> ApiResult<PackAnswer> {
        let pack = self.0.projects.pack(h, ProjectId(id.0)).await.map_err(ApiError::from)?;
        if accept.0.as_deref().is_some_and(|a| a.contains("text/markdown")) {
            return Ok(PackAnswer::Markdown(PlainText(pack.to_markdown())));
        }
        Ok(PackAnswer::Json(Json(Box::new((&pack).into()))))
    }
}

pub struct SellingApi(Services);

#[OpenApi(tag = "Tag::Selling")]
impl SellingApi {
    /// Price an item from grounded web comparables (one model call with web search).
    #[oai(path = "/items/:id/price", method = "post")]
    async fn price(
        &self,
        Member(h): Member,
        id: Path<i64>,
        #[oai(name = "Idempotency-Key")] key: Header<Option<String>>,
    ) -> ApiResult<Json<PriceReportDto>> {
        let key = idempotency_key(key.0)?;
        let scope = format!("price:{}", id.0);
        // The request has no body: the scope names all it asks.
        let held = match self.0.begin(h, &scope, key.as_deref(), b"").await? {
            Begun::Replay(done) => return Ok(Json(done)),
            Begun::Run(held) => held,
        };
        let outcome = async {
            let priced = self.0.selling.price(h, ItemId(id.0)).await.map_err(ApiError::from)?;
            let mut answer = PriceReportDto::from(&priced.report);
            answer.spend = Some((&priced.spend).into());
            Ok(answer)
        }
        .await;
        self.0.settle(held, outcome).await.map(Json)
    }

    /// The item's price history, newest first.
    #[oai(path = "/items/:id/prices", method = "get")]
    async fn prices(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<PriceHistory>> {
        let reports = self.0.selling.history(h, ItemId(id.0)).await.map_err(ApiError::from)?;
        Ok(Json(PriceHistory { prices: reports.iter().map(Into::into).collect() }))
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

pub struct SpendApi(Services);

#[OpenApi(tag = "Tag::Spend")]
impl SpendApi {
    /// The spend ledger: entries with `from <= at < to`, totals by kind and by month, and the budget.
    #[oai(path = "/spend", method = "get")]
    async fn spend(
        &self,
        Member(h): Member,
        from: Query<Option<DateTime<Utc>>>,
        to: Query<Option<DateTime<Utc>>>,
    ) -> ApiResult<Json<SpendDto>> {
        Ok(Json((&self.0.spend.report(h, from.0, to.0).await.map_err(ApiError::from)?).into()))
    }
}
