//! Labels with QR codes for items and places, as a PDF to print; and a photo of a label read back into the item
//! or place it names, or of a box's barcode into the code it carries.

use crate::auth::Member;
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::shared::{PlaceStepDto, steps};
use poem_openapi::param::Query;
use poem_openapi::payload::{Binary, Json};
use poem_openapi::types::multipart::Upload;
use poem_openapi::{ApiResponse, Enum, Multipart, Object, OpenApi, Tags};
use trove_application::intake::IMAGE_MAX;
use trove_application::labels::ScannedCode;
use trove_application::ports::LabelLayout;
use trove_domain::barcode::Symbology;
use trove_domain::code::CodeKind;
use trove_domain::label::LabelTarget;
use trove_domain::{ItemId, PlaceId};

#[derive(Tags)]
enum Tag {
    /// Labels with QR codes, and scanning them.
    Labels,
}

/// How labels are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum Layout {
    /// A4 sheets of 63.5 x 38.1 mm sticky labels (3 columns, 7 rows).
    Sheet,
    /// One 62 x 29 mm label per page, for continuous label printers.
    Roll,
}

impl From<Layout> for LabelLayout {
    fn from(l: Layout) -> Self {
        match l {
            Layout::Sheet => Self::Sheet,
            Layout::Roll => Self::Roll,
        }
    }
}

/// Reads a comma-separated list of ids (`1,2,3`); blank is none.
fn ids(name: &str, raw: Option<&str>) -> Result<Vec<i64>, ApiError> {
    let raw = raw.map(str::trim).unwrap_or_default();
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    raw.split(',')
        .map(|part| {
            let part = part.trim();
            part.parse::<i64>()
                .ok()
                .filter(|_| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| ApiError::bad_request(format!("{name} must be ids separated by commas, not {part:?}")))
        })
        .collect()
}

/// The labels as a PDF.
#[derive(ApiResponse)]
pub enum LabelsPdf {
    /// One label per object, in the order asked: a QR code of the link to its page, its name and short code.
    #[oai(status = 200, content_type = "application/pdf")]
    Pdf(Binary<Vec<u8>>, #[oai(header = "Content-Disposition")] String),
}

/// A photo of a label.
#[derive(Debug, Multipart)]
pub struct ScanUpload {
    /// The photo: JPEG, PNG or WebP (told by its bytes), at most 20 MB.
    pub image: Upload,
}

/// What a scan found: one of our labels, of an item or a place; or no label, but a barcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum ScannedKind {
    Item,
    Place,
    Code,
}

/// The symbology of a code read (the names the browsers' `BarcodeDetector` uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum CodeFormat {
    QrCode,
    DataMatrix,
    #[oai(rename = "ean_13")]
    Ean13,
    #[oai(rename = "ean_8")]
    Ean8,
    UpcA,
    UpcE,
    #[oai(rename = "code_128")]
    Code128,
    Itf,
}

impl From<Symbology> for CodeFormat {
    fn from(s: Symbology) -> Self {
        match s {
            Symbology::QrCode => Self::QrCode,
            Symbology::DataMatrix => Self::DataMatrix,
            Symbology::Ean13 => Self::Ean13,
            Symbology::Ean8 => Self::Ean8,
            Symbology::UpcA => Self::UpcA,
            Symbology::UpcE => Self::UpcE,
            Symbology::Code128 => Self::Code128,
            Symbology::Itf => Self::Itf,
        }
    }
}

/// The kind of product code a barcode carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum ProductCodeKind {
    Gtin,
    Isbn,
}

/// A code read in the photo.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ScannedCodeDto {
    pub format: CodeFormat,
    /// The text as read (a UPC-E's eight digits as printed).
    pub text: String,
    /// The product code it carries, when it is a GTIN or an ISBN (absent for a QR code and a shop's own code).
    #[oai(skip_serializing_if_is_none)]
    pub kind: Option<ProductCodeKind>,
    /// That code's key: its GTIN-14, which `GET /api/lookup/{code}` and an item's codes know it by.
    #[oai(skip_serializing_if_is_none)]
    pub key: Option<String>,
    /// That code as a person reads it (a UPC-E as its UPC-A, an ISBN as its ISBN-13).
    #[oai(skip_serializing_if_is_none)]
    pub shown: Option<String>,
}

impl From<&ScannedCode> for ScannedCodeDto {
    fn from(c: &ScannedCode) -> Self {
        let kind = c.code.as_ref().and_then(|code| match code.kind() {
            CodeKind::Gtin => Some(ProductCodeKind::Gtin),
            CodeKind::Isbn => Some(ProductCodeKind::Isbn),
            CodeKind::Other => None,
        });
        Self {
            format: c.symbology.into(),
            text: c.text.clone(),
            kind,
            key: c.code.as_ref().map(|code| code.key().to_owned()),
            shown: c.code.as_ref().map(|code| code.shown().to_owned()),
        }
    }
}

/// What a scan found: the item or place one of our labels names, or (`kind: code`) no label but barcodes; and
/// every code read.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ScanAnswer {
    pub kind: ScannedKind,
    /// The item's or place's id (absent for `code`).
    #[oai(skip_serializing_if_is_none)]
    pub id: Option<i64>,
    /// The item's or place's name (absent for `code`).
    #[oai(skip_serializing_if_is_none)]
    pub name: Option<String>,
    /// For a place, the way to it (root first, itself last); for an item, the way to the place it is in (empty
    /// when it is in none, and for `code`).
    pub path: Vec<PlaceStepDto>,
    /// Every code read, QR codes first (the label's included), each with its format and text and, for a GTIN or
    /// ISBN, its kind and key.
    pub codes: Vec<ScannedCodeDto>,
}

/// The label routes.
pub struct LabelsApi(pub Services);

#[OpenApi(tag = "Tag::Labels")]
impl LabelsApi {
    /// Labels to print, as a PDF: one per item of `items` then per place of `places` (ids separated by commas,
    /// at most 1,000 labels), each with a QR code of `TROVE_PUBLIC_URL/#/items/ID` (or `/#/places/ID`), the
    /// name shortened to fit and a short code (`I-42`, `P-7`). `layout=sheet` (default): A4 sheets of 3 x 7
    /// labels of 63.5 x 38.1 mm; `layout=roll`: one 62 x 29 mm label per page. Another household's id is 404.
    #[oai(path = "/labels.pdf", method = "get")]
    async fn pdf(
        &self,
        Member(h): Member,
        /// Item ids, separated by commas.
        items: Query<Option<String>>,
        /// Place ids, separated by commas.
        places: Query<Option<String>>,
        layout: Query<Option<Layout>>,
    ) -> ApiResult<LabelsPdf> {
        let items: Vec<ItemId> = ids("items", items.0.as_deref())?.into_iter().map(ItemId).collect();
        let places: Vec<PlaceId> = ids("places", places.0.as_deref())?.into_iter().map(PlaceId).collect();
        let labels = self.0.labels.labels(h, &items, &places).await.map_err(ApiError::from)?;
        let layout = layout.0.unwrap_or(Layout::Sheet).into();
        let pdf = self.0.labels.pdf(labels, layout).await.map_err(ApiError::from)?;
        Ok(LabelsPdf::Pdf(Binary(pdf), "inline; filename=\"trove-labels.pdf\"".into()))
    }

    /// Read a photo (multipart field `image`: JPEG, PNG or WebP, at most 20 MB) of one of our labels and answer
    /// the item or place it names, or of a barcode (EAN-13, EAN-8, UPC-A, UPC-E, Code 128, ITF-14, DataMatrix, at
    /// any angle) and answer `kind: code` with the codes read, a GTIN's or ISBN's key with each (to look up with
    /// `GET /api/lookup/{code}`). 422 when no code can be read in it; 404 when only QR codes are read and none is
    /// a label of this Trove (another server's link, or no link), or the label names another household's object.
    #[oai(path = "/scan", method = "post")]
    async fn scan(&self, Member(h): Member, body: ScanUpload) -> ApiResult<Json<ScanAnswer>> {
        if body.image.size() > IMAGE_MAX {
            return Err(ApiError::too_large("image", IMAGE_MAX).into());
        }
        let bytes = body
            .image
            .into_vec()
            .await
            .map_err(|e| ApiError::bad_request(format!("the image could not be read: {e}")))?;
        let reading = self.0.labels.read(bytes).await.map_err(ApiError::from)?;
        let codes = reading.codes.iter().map(ScannedCodeDto::from).collect();
        let Some(target) = reading.label else {
            return Ok(Json(ScanAnswer { kind: ScannedKind::Code, id: None, name: None, path: Vec::new(), codes }));
        };
        let scanned = self.0.labels.scanned(h, target).await.map_err(ApiError::from)?;
        let (kind, id) = match scanned.target {
            LabelTarget::Item(id) => (ScannedKind::Item, id.0),
            LabelTarget::Place(id) => (ScannedKind::Place, id.0),
        };
        Ok(Json(ScanAnswer {
            kind,
            id: Some(id),
            name: Some(scanned.name),
            path: scanned.path.as_ref().map(steps).unwrap_or_default(),
            codes,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_lists_are_read_strictly() {
        assert_eq!(ids("items", None).unwrap(), Vec::<i64>::new());
        assert_eq!(ids("items", Some(" ")).unwrap(), Vec::<i64>::new());
        assert_eq!(ids("items", Some("1, 22,3")).unwrap(), [1, 22, 3]);
        for bad in ["1,,2", "a", "1;2", "-1", "+4", "99999999999999999999"] {
            let e = ids("items", Some(bad)).unwrap_err();
            assert!(e.message.starts_with("items must be ids separated by commas"), "{bad}: {}", e.message);
        }
    }
}
