//! The inventory as CSV: the export of every item, and the all-or-nothing import of our own export or a Homebox
//! export.

use crate::auth::{Member, Person};
use crate::error::{ApiError, ApiResult};
use crate::media::is_media;
use crate::services::Services;
use crate::shared::Kept;
use poem::{FromRequest, Request, RequestBody};
use poem_openapi::param::Header;
use poem_openapi::payload::{Json, ParsePayload, Payload, PlainText};
use poem_openapi::registry::MetaSchemaRef;
use poem_openapi::types::Type;
use poem_openapi::{ApiRequest, ApiResponse, Object, OpenApi, Tags};
use trove_application::exchange::{ImportPreview, Imported, RowAction};

#[derive(Tags)]
enum Tag {
    /// The inventory as CSV: export, and import of our own export or a Homebox export.
    Csv,
}

/// A CSV body (`text/csv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvBody(pub Vec<u8>);

impl Payload for CsvBody {
    const CONTENT_TYPE: &'static str = "text/csv";

    fn check_content_type(content_type: &str) -> bool {
        is_media(Some(content_type), "text/csv")
    }

    fn schema_ref() -> MetaSchemaRef {
        String::schema_ref()
    }
}

impl ParsePayload for CsvBody {
    const IS_REQUIRED: bool = true;

    async fn from_request(request: &Request, body: &mut RequestBody) -> poem::Result<Self> {
        Ok(Self(Vec::<u8>::from_request(request, body).await?))
    }
}

/// A sheet to import.
#[derive(Debug, ApiRequest)]
pub enum ImportBody {
    /// Our own export, or a Homebox CSV export (`HB.*` columns).
    Csv(CsvBody),
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ImportAnswer {
    /// Rows written: new items, and items updated because an earlier import brought the same reference.
    pub imported: u64,
    /// Distinct items those rows are.
    pub items: u64,
    /// Rows left out on purpose: items that were gone (sold, given, archived) when exported.
    pub skipped: u64,
}

impl From<Imported> for ImportAnswer {
    fn from(i: Imported) -> Self {
        Self { imported: i.rows, items: i.items, skipped: i.skipped }
    }
}

/// What an import would do with one row.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "ImportRow")]
pub struct ImportRowDto {
    /// The line of the file the row starts on (the header is line 1).
    pub line: u64,
    /// The item's name, when the row is an item.
    pub name: Option<String>,
    /// `new`, `update` (of the item holding the row's reference), `gone` (left out) or `refused`.
    pub action: String,
    /// Why the row is refused; null otherwise.
    pub reason: Option<String>,
}

/// What an import of a sheet would do, row by row; nothing is written.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ImportPreviewAnswer {
    /// `trove` (our export) or `homebox`.
    pub format: String,
    /// Rows that would be new items.
    pub new: u64,
    /// Rows that would update an item imported before (or an earlier row of the sheet).
    pub updated: u64,
    /// Rows of gone items, left out.
    pub gone: u64,
    /// Rows that cannot be imported: while there is one, the import is refused whole.
    pub refused: u64,
    /// Every row that is not blank, in file order.
    pub rows: Vec<ImportRowDto>,
}

impl From<ImportPreview> for ImportPreviewAnswer {
    fn from(p: ImportPreview) -> Self {
        let (new, updated, gone, refused) = p.counts();
        Self {
            format: p.format.to_owned(),
            new,
            updated,
            gone,
            refused,
            rows: p
                .rows
                .into_iter()
                .map(|r| {
                    let (action, reason) = match r.action {
                        RowAction::New => ("new", None),
                        RowAction::Update => ("update", None),
                        RowAction::Gone => ("gone", None),
                        RowAction::Refused(why) => ("refused", Some(why)),
                    };
                    ImportRowDto { line: r.line, name: r.name, action: action.to_owned(), reason }
                })
                .collect(),
        }
    }
}

/// The inventory as CSV.
#[derive(ApiResponse)]
pub enum CsvExport {
    /// Every item with its current fields, one row each.
    #[oai(status = 200, content_type = "text/csv; charset=utf-8")]
    Csv(PlainText<String>, #[oai(header = "Content-Disposition")] String),
}

/// The CSV routes.
pub struct ExchangeApi(pub Services);

#[OpenApi(tag = "Tag::Csv")]
impl ExchangeApi {
    /// Every item of the household (gone ones included) as CSV: our own format, which `POST /api/import` and
    /// `trove import` read back.
    #[oai(path = "/export.csv", method = "get")]
    async fn export(&self, Member(h): Member) -> ApiResult<CsvExport> {
        let bytes = self.0.exchange.export(h).await.map_err(ApiError::from)?;
        let text =
            String::from_utf8(bytes).map_err(|e| ApiError::unexpected(format!("the export is not UTF-8: {e}")))?;
        Ok(CsvExport::Csv(PlainText(text), "attachment; filename=\"trove-export.csv\"".into()))
    }

    /// What `POST /api/import` would do with this CSV, row by row, writing nothing: each row `new`, `update`
    /// (the item holding its reference), `gone` (left out) or `refused` with its reason. Every bad row is
    /// listed, not only the first; the import itself is all or nothing. 400 only when no row can be read (a
    /// header of neither format, a file that is not CSV).
    #[oai(path = "/import/preview", method = "post")]
    async fn preview(&self, Person(c): Person, body: ImportBody) -> ApiResult<Json<ImportPreviewAnswer>> {
        let ImportBody::Csv(CsvBody(bytes)) = body;
        let preview = self.0.exchange.preview(c.household, &bytes).await.map_err(ApiError::from)?;
        Ok(Json(preview.into()))
    }

    /// Import a CSV (`Content-Type: text/csv`): our own export or a Homebox export. All or nothing: a bad row is
    /// answered 400 with its line and nothing is written. Rows whose reference (our id, `HB.import_ref`) was
    /// imported before update that item. Recorded in the household's history as done by the caller, in the
    /// import's own transaction: one `import` event per item, and a `create` of each place made for a
    /// `location`. With an `Idempotency-Key`, a retry of the same file is answered the first import's answer
    /// and imports nothing again (the same key with another file: 422; while the first still runs: 409).
    #[oai(path = "/import", method = "post")]
    async fn import(
        &self,
        Person(c): Person,
        #[oai(name = "Idempotency-Key")] key: Header<Option<String>>,
        body: ImportBody,
    ) -> ApiResult<Json<ImportAnswer>> {
        let ImportBody::Csv(CsvBody(bytes)) = body;
        let actor = trove_application::recorder::Actor::from(&c);
        let given = key.0.as_deref();
        let run = || async {
            let done = self.0.exchange.import_keyed(actor, &bytes, given).await.map_err(ApiError::from)?;
            Ok::<_, ApiError>(Kept(ImportAnswer::from(done)))
        };
        let Kept(answer) = self.0.idempotency.once(c.household, "import", given, &bytes, run).await?;
        Ok(Json(answer))
    }
}
