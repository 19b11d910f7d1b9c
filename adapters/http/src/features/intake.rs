//! Reading new items in: a label photo, a listing's text or a voice note read into candidate items with their
//! matches in the inventory. Intake never writes the inventory (`POST /api/items` does, with a candidate's item).

use crate::auth::Person;
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::shared::{CreateItem, FieldValue, Intent, NewFault, PriceDto, PurchaseDto, RunSpendDto, Source};
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::types::multipart::Upload;
use poem_openapi::{ApiRequest, Multipart, Object, OpenApi, Tags};
use trove_application::intake::{AUDIO_MAX, IMAGE_MAX, IntakeReading, ReceiptReading};
use trove_application::media::Upload as MediaUpload;
use trove_domain::item::MeasurementSource;
use trove_domain::media::{Caption, MediaKind};
use trove_domain::reading::{self, ImageFormat};
use trove_domain::{ItemId, MediaId};

#[derive(Tags)]
enum Tag {
    /// Reading new items in from a label photo, a listing or a voice note, with matches in the inventory.
    Intake,
}

/// A label photo.
#[derive(Debug, Multipart)]
pub struct LabelUpload {
    /// The photo: JPEG, PNG or WebP (told by its bytes), at most 20 MB.
    pub image: Upload,
}

/// A listing's text.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct ListingText {
    /// 1 to 20,000 characters.
    pub text: String,
}

/// A voice note as audio.
#[derive(Debug, Multipart)]
pub struct VoiceUpload {
    /// A WAV recording (mono 16-bit PCM at 16 or 24 kHz), at most 10 minutes.
    pub audio: Upload,
}

/// A voice note already transcribed.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct VoiceTranscript {
    /// 1 to 20,000 characters.
    pub transcript: String,
}

/// A voice note: WAV audio (`multipart/form-data`, field `audio`; transcribed first, its own spend entry) or a
/// transcript (`application/json`).
#[derive(Debug, ApiRequest)]
pub enum VoiceNote {
    Audio(VoiceUpload),
    Transcript(Json<VoiceTranscript>),
}

/// A receipt or an order confirmation.
#[derive(Debug, Multipart)]
pub struct ReceiptUpload {
    /// A photo (JPEG, PNG or WebP) or a PDF, at most 20 MB.
    pub file: Upload,
}

/// One line of a receipt, with the purchase its item gains and the items it may be.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ReceiptLineDto {
    pub description: String,
    pub quantity: u32,
    /// The whole line's price; `null` without a known currency.
    pub price: Option<PriceDto>,
    /// The purchase of the line's item: the receipt's day and vendor, the unit price. Set it on an existing item
    /// (`PATCH /api/items/{id}` with `purchase`) or give it to a new one (`POST /api/items`).
    pub purchase: PurchaseDto,
    /// Best first, at most 5; none: a new item.
    pub matches: Vec<MatchDto>,
}

/// A receipt read. Nothing is written to the inventory.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ReceiptAnswer {
    pub vendor: Option<String>,
    pub date: Option<chrono::NaiveDate>,
    pub currency: Option<String>,
    pub total: Option<PriceDto>,
    pub lines: Vec<ReceiptLineDto>,
    /// What does not add up or was not kept (lines against the total, a date in the future, an unknown currency).
    pub problems: Vec<String>,
    /// The receipt, kept as pending media: attach it to the items it covers with
    /// `POST /api/intake/receipt/{receipt_id}/attach`; removed after a day otherwise.
    pub receipt_id: i64,
    /// What the model call cost.
    pub spend: RunSpendDto,
}

fn receipt_answer(r: &ReceiptReading, receipt_id: i64) -> ReceiptAnswer {
    ReceiptAnswer {
        vendor: r.receipt.vendor.clone(),
        date: r.receipt.date,
        currency: r.receipt.currency.map(|c| c.to_string()),
        total: r.receipt.total.as_ref().map(PriceDto::new),
        lines: r
            .lines
            .iter()
            .map(|l| ReceiptLineDto {
                description: l.line.description.clone(),
                quantity: l.line.quantity,
                price: l.line.price.as_ref().map(PriceDto::new),
                purchase: PurchaseDto::new(&l.purchase),
                matches: l
                    .matches
                    .iter()
                    .map(|m| MatchDto { item_id: m.item_id.0, score: m.score, why: m.why.clone() })
                    .collect(),
            })
            .collect(),
        problems: r.receipt.problems.clone(),
        receipt_id,
        spend: (&r.spend).into(),
    }
}

/// The items a receipt covers.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct AttachReceipt {
    /// 1 to 100 items of the household.
    pub item_ids: Vec<i64>,
}

/// The receipt attached.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ReceiptAttached {
    /// The receipt's medium on each item, in the order of `item_ids` (`GET /api/media/{id}`).
    pub media_ids: Vec<i64>,
}

/// An item of the inventory a candidate may be.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "IntakeMatch")]
pub struct MatchDto {
    pub item_id: i64,
    /// 0 to 1: 1.0 is the same serial (certain), 0.9 and up the same brand and model, below that similarity.
    pub score: f64,
    pub why: String,
}

/// One item read, ready to save with `POST /api/items`, and the items it may already be.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct Candidate {
    /// The body of `POST /api/items`: validated and normalised (fields in canonical units).
    pub item: CreateItem,
    /// Best first, at most 5.
    pub matches: Vec<MatchDto>,
    /// What of the model's answer was dropped or changed by the rules.
    pub notes: Vec<String>,
}

/// What a reading answers. Nothing is written to the inventory.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct IntakeAnswer {
    pub candidates: Vec<Candidate>,
    /// Notes about the reading as a whole (candidates the rules dropped).
    pub notes: Vec<String>,
    /// The transcript a voice note was read from.
    pub transcript: Option<String>,
    /// What the model calls cost.
    pub spend: RunSpendDto,
    /// The label photo, kept as pending media: send it in `media_ids` when saving a candidate
    /// (`POST /api/items`) to keep it on the item; removed after a day otherwise. Absent for text and voice.
    #[oai(skip_serializing_if_is_none)]
    pub photo_id: Option<i64>,
}

fn answer(reading: &IntakeReading, source: MeasurementSource) -> IntakeAnswer {
    let candidates = reading
        .candidates
        .iter()
        .map(|c| {
            let item = &c.candidate.item;
            CreateItem {
                name: item.name.to_string(),
                item_type: item.item_type.to_string(),
                profile: item.profile.clone(),
                condition: item.condition.into(),
                intent: Intent::from(item.intent),
                place_id: None,
                location: item.location.clone(),
                accessories: Some(item.accessories.clone()),
                fields: Some(
                    item.measurements
                        .iter()
                        .map(|m| (m.key.to_string(), FieldValue { value: m.value, unit: m.unit.symbol().into() }))
                        .collect(),
                ),
                components: None,
                faults: Some(
                    item.faults
                        .iter()
                        .map(|f| NewFault { text: f.text.clone(), severity: f.severity.into() })
                        .collect(),
                ),
                source: Some(Source::from(source)),
                media_ids: None,
                quantity: None,
                min_quantity: None,
                tags: None,
                codes: None,
                notes: None,
                serial: None,
                purchase: None,
                warranty_until: None,
                asking_price: None,
            }
        })
        .zip(&reading.candidates)
        .map(|(item, c)| Candidate {
            item,
            matches: c
                .matches
                .iter()
                .map(|m| MatchDto { item_id: m.item_id.0, score: m.score, why: m.why.clone() })
                .collect(),
            notes: c.candidate.notes.clone(),
        })
        .collect();
    IntakeAnswer {
        candidates,
        notes: reading.notes.clone(),
        transcript: reading.transcript.clone(),
        spend: (&reading.spend).into(),
        photo_id: None,
    }
}

async fn bytes_of(upload: Upload, what: &str) -> ApiResult<Vec<u8>> {
    upload.into_vec().await.map_err(|e| ApiError::bad_request(format!("the {what} could not be read: {e}")).into())
}

/// The intake routes.
pub struct IntakeApi(pub Services);

#[OpenApi(tag = "Tag::Intake")]
impl IntakeApi {
    /// Read a label photo (multipart field `image`: JPEG, PNG or WebP, at most 20 MB; 400 when empty, damaged or
    /// cut short, 415 for anything else, 422 under 16 pixels a side) into candidate items with their matches; the
    /// photo is kept as pending media, its id in `photo_id` (for `media_ids` when saving a candidate). The
    /// image is checked by decoding it, and one larger than the model needs is sent downscaled (longest side
    /// 2,048 pixels, JPEG); when too many images wait for a core, 503 with `Retry-After`. Nothing is sent or spent
    /// before that. One model call without tools; nothing is written.
    #[oai(path = "/intake/label", method = "post")]
    async fn label(&self, Person(c): Person, body: LabelUpload) -> ApiResult<Json<IntakeAnswer>> {
        if body.image.size() > IMAGE_MAX {
            return Err(ApiError::too_large("image", IMAGE_MAX).into());
        }
        let bytes = bytes_of(body.image, "image").await?;
        if bytes.is_empty() {
            return Err(ApiError::bad_request("the image is empty").into());
        }
        if ImageFormat::sniff(&bytes).is_none() {
            return Err(ApiError::unsupported("the image must be a JPEG, PNG or WebP").into());
        }
        let reading = self.0.intake.read_label((&c).into(), bytes.clone()).await.map_err(ApiError::from)?;
        let (photo, _) = self.0.media.keep_intake((&c).into(), bytes, &[]).await.map_err(ApiError::from)?;
        let mut answer = answer(&reading, MeasurementSource::Label);
        answer.photo_id = Some(photo.id.0);
        Ok(Json(answer))
    }

    /// Read a photo or a PDF of a receipt or an order confirmation (multipart field `file`, at most 20 MB; 400 for
    /// an empty file or one that is neither a picture nor a PDF) into its vendor, day, currency, total and lines,
    /// each line with the purchase its item gains and its matches in the inventory. The rules say what does not
    /// add up (`problems`). One model call without tools; nothing is written but the receipt, kept as pending
    /// media (`receipt_id`) to attach to the items it covers once they are saved.
    #[oai(path = "/intake/receipt", method = "post")]
    async fn receipt(&self, Person(c): Person, body: ReceiptUpload) -> ApiResult<Json<ReceiptAnswer>> {
        if body.file.size() > IMAGE_MAX {
            return Err(ApiError::too_large("file", IMAGE_MAX).into());
        }
        let bytes = bytes_of(body.file, "file").await?;
        let reading = self.0.intake.read_receipt((&c).into(), bytes.clone()).await.map_err(ApiError::from)?;
        let upload = MediaUpload {
            bytes,
            kind: Some(MediaKind::Receipt),
            caption: Caption::new(&reading.receipt.caption()).ok().flatten(),
        };
        let kept = self.0.media.upload((&c).into(), None, upload).await.map_err(ApiError::from)?;
        Ok(Json(receipt_answer(&reading, kept.id.0)))
    }

    /// Attach a receipt read at intake (`receipt_id`) to every item it covers, once they are saved: one medium
    /// per item naming the same file, each in its item's history. 404 for a receipt that is not pending media of
    /// the household or an item that is not the household's (nothing is attached then); 400 for no items or more
    /// than 100.
    #[oai(path = "/intake/receipt/:id/attach", method = "post")]
    async fn attach(
        &self,
        Person(c): Person,
        id: Path<i64>,
        body: Json<AttachReceipt>,
    ) -> ApiResult<Json<ReceiptAttached>> {
        let items: Vec<ItemId> = body.0.item_ids.iter().copied().map(ItemId).collect();
        let attached = self.0.media.attach_receipt((&c).into(), MediaId(id.0), &items).await.map_err(ApiError::from)?;
        Ok(Json(ReceiptAttached { media_ids: attached.iter().map(|m| m.id.0).collect() }))
    }

    /// Read a listing's text into candidate items with their matches. One model call without tools; nothing is
    /// written.
    #[oai(path = "/intake/listing", method = "post")]
    async fn listing(&self, Person(c): Person, body: Json<ListingText>) -> ApiResult<Json<IntakeAnswer>> {
        let reading = self.0.intake.read_listing((&c).into(), &body.0.text).await.map_err(ApiError::from)?;
        Ok(Json(answer(&reading, MeasurementSource::Listing)))
    }

    /// Read a voice note into candidate items with their matches: WAV audio as multipart field `audio` (415 for
    /// other formats; 400 when empty, compressed, damaged or over ten minutes; any uncompressed WAV is converted
    /// to mono 16-bit PCM as the transcription takes it, which is its own `transcribe` spend entry) or JSON
    /// `{"transcript"}`. Then one model call without tools; nothing is written.
    #[oai(path = "/intake/voice", method = "post")]
    async fn voice(&self, Person(c): Person, body: VoiceNote) -> ApiResult<Json<IntakeAnswer>> {
        let reading = match body {
            VoiceNote::Audio(upload) => {
                if upload.audio.size() > AUDIO_MAX {
                    return Err(ApiError::too_large("audio", AUDIO_MAX).into());
                }
                let bytes = bytes_of(upload.audio, "audio").await?;
                if bytes.is_empty() {
                    return Err(ApiError::bad_request("the audio is empty").into());
                }
                if !reading::is_wav(&bytes) {
                    return Err(ApiError::unsupported("the audio must be a WAV file").into());
                }
                self.0.intake.read_voice_audio((&c).into(), &bytes).await
            }
            VoiceNote::Transcript(t) => self.0.intake.read_voice_transcript((&c).into(), &t.0.transcript).await,
        }
        .map_err(ApiError::from)?;
        Ok(Json(answer(&reading, MeasurementSource::Voice)))
    }
}
