//! Intake: reading a label photo, a listing's text or a voice note into candidate items (one structured model
//! call each, without tools), then matching each candidate against the household's inventory. Intake never
//! writes the inventory: the owner saves a candidate with the items API. What a reading is told and may answer is
//! its contract, [`crate::contracts::reading`].

use crate::contracts::reading as contract;
use crate::jobs::Jobs;
use crate::metered::{Metered, RunSpend};
use crate::ports::model::{Capability, InputItem, ModelRequest};
use crate::ports::{Clock, InventoryRepo, ModelImages, VisionError};
use crate::recorder::Actor;
use crate::revision_cache::RevisionCache;
use crate::{Error, Refusal};
use base64::Engine as _;
use std::sync::Arc;
use trove_domain::HouseholdId;
use trove_domain::item::MeasurementSource;
use trove_domain::item::Purchase;
use trove_domain::matching::{self, Match, MatchIndex, Probe};
use trove_domain::reading::{self, Candidate, ImageFormat};
use trove_domain::receipt::{self, Receipt, ReceiptLine};
use trove_domain::spend::CallKind;

/// Largest photo read, in bytes (20 MB): a label photo, a photo of several items, a label to scan.
pub const IMAGE_MAX: usize = 20 * 1024 * 1024;
/// Largest voice note read, in bytes (the transcription endpoint's own limit is 32 MB).
pub const AUDIO_MAX: usize = 32 * 1024 * 1024;

/// One candidate with its matches in the inventory.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchedCandidate {
    pub candidate: Candidate,
    /// Best first, at most [`matching::DEFAULT_LIMIT`].
    pub matches: Vec<Match>,
}

/// What a reading answers.
#[derive(Debug, Clone, PartialEq)]
pub struct IntakeReading {
    pub candidates: Vec<MatchedCandidate>,
    /// Notes about the reading as a whole (candidates dropped by the rules).
    pub notes: Vec<String>,
    /// The transcript a voice note was read from.
    pub transcript: Option<String>,
    pub spend: RunSpend,
}

/// One line of a receipt read, with the purchase its item gains and the items it may be.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceiptLineMatch {
    pub line: ReceiptLine,
    /// The receipt's day and vendor with the line's unit price: what the item's purchase becomes.
    pub purchase: Purchase,
    /// Best first, at most [`matching::DEFAULT_LIMIT`]; none: a new item.
    pub matches: Vec<Match>,
}

/// What reading a receipt answers: the receipt as the rules judged it (with what does not add up) and its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceiptReading {
    pub receipt: Receipt,
    pub lines: Vec<ReceiptLineMatch>,
    pub spend: RunSpend,
}

/// The intake use cases.
#[derive(Clone)]
pub struct Intake {
    model: Metered,
    items: Arc<dyn InventoryRepo>,
    clock: Arc<dyn Clock>,
    /// The household's match index, rebuilt only when the inventory changed.
    indexes: Arc<RevisionCache<MatchIndex>>,
    /// Checks a label photo and downscales it to what the model needs, before anything is sent (CPU work).
    images: Arc<dyn ModelImages>,
    /// The limit of concurrent CPU-heavy jobs, shared with the other use cases.
    jobs: Jobs,
}

impl std::fmt::Debug for Intake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Intake").field("model", &self.model).finish_non_exhaustive()
    }
}

/// The request of one reading: the instructions of its kind, the input, the strict schema, no tools.
pub fn reading_request(kind: CallKind, input: InputItem) -> ModelRequest {
    ModelRequest {
        kind,
        instructions: contract::instructions(kind),
        input: vec![input],
        tools: Vec::new(),
        output_schema: Some(contract::output_schema()),
        max_output_tokens: 16_000,
        max_tool_calls: None,
        include_search_results: false,
        household: None,
    }
}

/// An image as a `data:` URL.
///
/// ```
/// use trove_application::intake::data_url;
/// use trove_domain::reading::ImageFormat;
/// assert_eq!(data_url(ImageFormat::Png, b"hi"), "data:image/png;base64,aGk=");
/// ```
pub fn data_url(format: ImageFormat, bytes: &[u8]) -> String {
    format!("data:{};base64,{}", format.mime(), base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// What refusing a label photo says: the image's own fault is the request's.
fn label_refused(e: VisionError) -> Error {
    match e {
        VisionError::TooSmall { width, height, min_side } => {
            Refusal::ImageTooSmall { width, height, min: min_side }.into()
        }
        VisionError::Unexpected(e) => Error::Unexpected(e),
        e @ (VisionError::Unsupported | VisionError::Undecodable(_) | VisionError::TooLarge { .. }) => {
            Error::Invalid(e.to_string())
        }
    }
}

impl Intake {
    pub fn new(
        model: Metered,
        items: Arc<dyn InventoryRepo>,
        clock: Arc<dyn Clock>,
        images: Arc<dyn ModelImages>,
        jobs: Jobs,
    ) -> Self {
        Self { model, items, clock, indexes: Arc::default(), images, jobs }
    }

    /// The household's match index, rebuilt only when its inventory changed since it was built.
    async fn index(&self, household: HouseholdId) -> Result<Arc<MatchIndex>, Error> {
        let items = self.items.clone();
        self.indexes
            .get(self.items.as_ref(), household, || async move {
                Ok(MatchIndex::build(&items.all_present(household).await?))
            })
            .await
    }

    /// Reads a label photo: one call with the image beside an instruction. The image is sent only when it
    /// decodes whole and is of sane size, downscaled to what the model needs when it is larger
    /// ([`ModelImages::prepare_for_model`], run under the limit of concurrent jobs).
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty, too large, unsupported or damaged image (a JPEG cut short included);
    /// [`Refusal::ImageTooSmall`]; [`Error::NotConfigured`] when the backend reads no images; [`Error::Busy`]
    /// when too many jobs wait: all before anything is sent or spent. Then [`Error::Budget`];
    /// [`Error::ModelFailed`] (the spend is recorded).
    pub async fn read_label(&self, actor: Actor, image: Vec<u8>) -> Result<IntakeReading, Error> {
        if image.is_empty() {
            return Err(Error::Invalid("the image is empty".into()));
        }
        if image.len() > IMAGE_MAX {
            return Err(Error::Invalid(format!("the image is larger than {IMAGE_MAX} bytes")));
        }
        self.model.require(Capability::Images)?;
        let images = self.images.clone();
        let prepared = self.jobs.run(move || images.prepare_for_model(&image)).await?.map_err(label_refused)?;
        let input = InputItem::UserImage {
            text: "Read the item or items on this label.".into(),
            image_data_url: data_url(prepared.format, &prepared.bytes),
        };
        let mut run = RunSpend::default();
        self.read(actor, reading_request(CallKind::ReadLabel, input), MeasurementSource::Label, &mut run, None).await
    }

    /// Reads a photo or a PDF of a receipt or an order confirmation: one call with the picture (checked and
    /// downscaled as a label photo is) or the PDF beside an instruction, answered as a `Receipt`; the rules judge
    /// it ([`receipt::read`]: lines against the total, the day, the currency) and each line is matched against the
    /// inventory. Nothing is written.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty or too large file, or one that is neither a JPEG, PNG or WebP picture nor a
    /// PDF; otherwise as [`Intake::read_label`].
    pub async fn read_receipt(&self, actor: Actor, file: Vec<u8>) -> Result<ReceiptReading, Error> {
        if file.is_empty() {
            return Err(Error::Invalid("the file is empty".into()));
        }
        if file.len() > IMAGE_MAX {
            return Err(Error::Invalid(format!("the file is larger than {IMAGE_MAX} bytes")));
        }
        self.model.require(Capability::Images)?;
        let text = "Read this receipt.".to_owned();
        let input = if file.starts_with(b"%PDF-") {
            InputItem::UserFile {
                text,
                filename: "receipt.pdf".into(),
                file_data_url: format!(
                    "data:application/pdf;base64,{}",
                    base64::engine::general_purpose::STANDARD.encode(&file)
                ),
            }
        } else if ImageFormat::sniff(&file).is_some() {
            let images = self.images.clone();
            let prepared = self.jobs.run(move || images.prepare_for_model(&file)).await?.map_err(label_refused)?;
            InputItem::UserImage { text, image_data_url: data_url(prepared.format, &prepared.bytes) }
        } else {
            return Err(Error::Invalid("a receipt is a JPEG, PNG or WebP photo, or a PDF".into()));
        };
        let request = ModelRequest {
            kind: CallKind::ReadReceipt,
            instructions: crate::contracts::receipt::INSTRUCTIONS.to_owned(),
            input: vec![input],
            tools: Vec::new(),
            output_schema: Some(crate::contracts::receipt::output_schema()),
            max_output_tokens: 16_000,
            max_tool_calls: None,
            include_search_results: false,
            household: None,
        };
        let mut run = RunSpend::default();
        let response = self.model.respond(actor, &request, &mut run).await?;
        let text = response
            .final_text()
            .ok_or_else(|| Error::ModelFailed { reason: "the model's answer holds no message".into(), spend: run })?;
        let answer = crate::contracts::receipt::read(text).map_err(|e| Error::ModelFailed {
            reason: format!("the model's answer is not a Receipt document: {e}"),
            spend: run,
        })?;
        let receipt = receipt::read(&answer, self.clock.now().date_naive());
        let index = self.index(actor.household).await?;
        let lines = receipt
            .lines
            .iter()
            .map(|line| {
                let probe = Probe {
                    name: &line.description,
                    profile: "",
                    item_type: None,
                    brand: None,
                    model: None,
                    serial: None,
                };
                ReceiptLineMatch {
                    line: line.clone(),
                    purchase: receipt.purchase(line),
                    matches: index.best(&probe, matching::DEFAULT_LIMIT),
                }
            })
            .collect();
        Ok(ReceiptReading { receipt, lines, spend: run })
    }

    /// Reads a listing's text (1 to 20,000 characters).
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty or too long text; otherwise as [`Intake::read_label`].
    pub async fn read_listing(&self, actor: Actor, text: &str) -> Result<IntakeReading, Error> {
        let text = reading::text_to_read(text, "text").map_err(|e| Error::Invalid(e.to_string()))?;
        trove_domain::text::check("text", &text, trove_domain::text::Lines::Many)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let input = InputItem::UserText(format!("The listing:\n{text}"));
        let mut run = RunSpend::default();
        self.read(actor, reading_request(CallKind::ReadListing, input), MeasurementSource::Listing, &mut run, None)
            .await
    }

    /// Reads a voice note given as a transcript.
    ///
    /// # Errors
    /// As [`Intake::read_listing`].
    pub async fn read_voice_transcript(&self, actor: Actor, text: &str) -> Result<IntakeReading, Error> {
        let text = reading::text_to_read(text, "transcript").map_err(|e| Error::Invalid(e.to_string()))?;
        trove_domain::text::check("transcript", &text, trove_domain::text::Lines::Many)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let mut run = RunSpend::default();
        self.read_transcript(actor, text, &mut run).await
    }

    /// Reads a voice note given as WAV audio: transcribed first (its own spend entry), then read. The model
    /// backend prepares the audio as its transcription takes it (the Model API's converts any uncompressed WAV to
    /// mono 16-bit PCM) or refuses it before sending.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty or too large file, or one the backend refuses to send (too long, damaged,
    /// compressed); [`Error::NotConfigured`] before that without a backend that transcribes;
    /// [`Refusal::NoSpeech`](crate::error::Refusal::NoSpeech) when the transcript holds no speech; otherwise as [`Intake::read_label`].
    pub async fn read_voice_audio(&self, actor: Actor, wav: &[u8]) -> Result<IntakeReading, Error> {
        if wav.is_empty() {
            return Err(Error::Invalid("the audio is empty".into()));
        }
        if wav.len() > AUDIO_MAX {
            return Err(Error::Invalid(format!("the audio is larger than {AUDIO_MAX} bytes")));
        }
        self.model.require(Capability::Audio)?;
        // Checked and converted under the limit of concurrent CPU-heavy jobs, before anything is sent or spent.
        let prepare = self.model.audio_preparer();
        let owned = wav.to_vec();
        let audio = self.jobs.run(move || prepare(&owned)).await?.map_err(|e| Error::Invalid(e.to_string()))?;
        let mut run = RunSpend::default();
        let transcript = self.model.transcribe(actor, &audio, &mut run).await?;
        let text = match reading::text_to_read(&transcript.text, "transcript") {
            Ok(t) => t,
            Err(reading::TextError::Empty(_)) => {
                return Err(Refusal::NoSpeech.into());
            }
            Err(reading::TextError::TooLong(_)) => trove_domain::text::clip(&transcript.text, reading::TEXT_MAX),
        };
        self.read_transcript(actor, text, &mut run).await
    }

    async fn read_transcript(&self, actor: Actor, text: String, run: &mut RunSpend) -> Result<IntakeReading, Error> {
        let input = InputItem::UserText(format!("The voice note's transcript:\n{text}"));
        self.read(actor, reading_request(CallKind::ReadVoice, input), MeasurementSource::Voice, run, Some(text)).await
    }

    /// Sends the reading, validates the answer by the rules and matches each candidate.
    async fn read(
        &self,
        actor: Actor,
        request: ModelRequest,
        source: MeasurementSource,
        run: &mut RunSpend,
        transcript: Option<String>,
    ) -> Result<IntakeReading, Error> {
        let response = self.model.respond(actor, &request, run).await?;
        let text = response
            .final_text()
            .ok_or_else(|| Error::ModelFailed { reason: "the model's answer holds no message".into(), spend: *run })?;
        let answer = contract::read(text).map_err(|e| Error::ModelFailed {
            reason: format!("the model's answer is not a Reading document: {e}"),
            spend: *run,
        })?;
        let (candidates, notes) = reading::validate(answer, self.clock.now(), source);
        let candidates = self.match_all(actor.household, candidates).await?;
        Ok(IntakeReading { candidates, notes, transcript, spend: *run })
    }

    /// Matches candidates against the household's present items, through the household's match index.
    ///
    /// # Errors
    /// When the store fails.
    pub async fn match_all(
        &self,
        household: HouseholdId,
        candidates: Vec<Candidate>,
    ) -> Result<Vec<MatchedCandidate>, Error> {
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let index = self.index(household).await?;
        Ok(candidates
            .into_iter()
            .map(|candidate| {
                let probe = Probe {
                    name: candidate.item.name.as_str(),
                    profile: &candidate.item.profile,
                    item_type: Some(candidate.item.item_type.as_str()),
                    brand: candidate.brand.as_deref(),
                    model: candidate.model.as_deref(),
                    serial: candidate.serial.as_deref(),
                };
                let matches = index.best(&probe, matching::DEFAULT_LIMIT);
                MatchedCandidate { candidate, matches }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metered::SpendPolicy;
    use crate::ports::clock::MockClock;
    use crate::ports::inventory::MockInventoryRepo;
    use crate::ports::model::{Capabilities, MockModelPort, ModelResponse, OutputItem, OutputView, RawJson};
    use crate::ports::spend::MockSpendLedger;
    use crate::ports::vision::{MockModelImages, PreparedImage};
    use trove_domain::spend::Usage;

    fn intake(model: MockModelPort) -> Intake {
        intake_with(model, MockModelImages::new())
    }

    fn intake_with(model: MockModelPort, images: MockModelImages) -> Intake {
        let mut ledger = MockSpendLedger::new();
        ledger.expect_record().returning(|_, _| Ok(()));
        let mut clock = MockClock::new();
        clock.expect_now().returning(chrono::Utc::now);
        let mut items = MockInventoryRepo::new();
        items.expect_all_present().returning(|_| Ok(Vec::new()));
        items.expect_revision().returning(|_| Ok(0));
        let clock: Arc<dyn Clock> = Arc::new(clock);
        let metered = Metered::new(Arc::new(model), Arc::new(ledger), clock.clone(), SpendPolicy::default());
        Intake::new(metered, Arc::new(items), clock, Arc::new(images), Jobs::new(1, 1))
    }

    fn answer(text: &str) -> ModelResponse {
        ModelResponse {
            output: vec![OutputItem {
                raw: RawJson("{}".into()),
                view: OutputView::Message { text: text.into(), citations: Vec::new() },
            }],
            usage: Usage::default(),
        }
    }

    fn model(caps: Capabilities) -> MockModelPort {
        let mut m = MockModelPort::new();
        m.expect_model_name().returning(|_| "m".into());
        m.expect_capabilities().return_const(caps);
        m
    }

    #[tokio::test]
    async fn a_label_needs_a_backend_that_reads_images_and_sends_nothing_otherwise() {
        let m = model(Capabilities { web_search: false, images: false, audio: false, remote: false });
        let err = intake(m).read_label(Actor::command_line(HouseholdId(1)), b"\x89PNG....".to_vec()).await.unwrap_err();
        assert_eq!(err.to_string(), "reading a label photo needs the Model API: set MODEL_API_KEY");
    }

    const LAMP: &str = r#"{"candidates":[{"name":"Lamp","item_type":"lamp","profile":null,"brand":null,"model":null,"serial":null,"condition":"fair","measurements":[],"faults":[],"accessories":[]}]}"#;

    #[tokio::test]
    async fn a_label_is_sent_as_the_image_port_prepared_it() {
        let mut images = MockModelImages::new();
        images.expect_prepare_for_model().withf(|image| image == b"big photo").times(1).returning(|_| {
            Ok(PreparedImage { format: ImageFormat::Jpeg, bytes: b"small".to_vec(), width: 2048, height: 1536 })
        });
        let mut m = model(Capabilities { web_search: true, images: true, audio: true, remote: true });
        m.expect_respond()
            .withf(|r| {
                r.kind == CallKind::ReadLabel
                    && matches!(&r.input[0], InputItem::UserImage { image_data_url, .. }
                        if image_data_url == &data_url(ImageFormat::Jpeg, b"small"))
            })
            .times(1)
            .returning(|_| Ok(answer(LAMP)));
        let got = intake_with(m, images)
            .read_label(Actor::command_line(HouseholdId(1)), b"big photo".to_vec())
            .await
            .unwrap();
        assert_eq!(got.candidates.len(), 1);
    }

    #[tokio::test]
    async fn a_label_the_image_port_refuses_is_never_sent() {
        /// A refusal of the image port, and the error the use case must answer for it.
        type Case = (fn() -> VisionError, fn(&Error) -> bool);
        let cases: [Case; 4] = [
            (|| VisionError::Undecodable("the JPEG is cut short".into()), |e| matches!(e, Error::Invalid(_))),
            (|| VisionError::Unsupported, |e| matches!(e, Error::Invalid(_))),
            (
                || VisionError::TooLarge { width: 9000, height: 9000, max_pixels: 50_000_000 },
                |e| matches!(e, Error::Invalid(_)),
            ),
            (
                || VisionError::TooSmall { width: 1, height: 1, min_side: 16 },
                |e| matches!(e, Error::Refused(Refusal::ImageTooSmall { width: 1, height: 1, min: 16 })),
            ),
        ];
        for (refusal, expected) in cases {
            let mut images = MockModelImages::new();
            images.expect_prepare_for_model().times(1).returning(move |_| Err(refusal()));
            let mut m = model(Capabilities { web_search: true, images: true, audio: true, remote: true });
            m.expect_respond().times(0);
            let err = intake_with(m, images)
                .read_label(Actor::command_line(HouseholdId(1)), b"photo".to_vec())
                .await
                .unwrap_err();
            assert!(expected(&err), "{err:?}");
            assert_eq!(err.to_string(), refusal().to_string());
        }
    }

    #[tokio::test]
    async fn a_reading_is_one_structured_call_without_tools() {
        let mut m = model(Capabilities { web_search: true, images: true, audio: true, remote: true });
        m.expect_respond()
            .withf(|r| {
                r.kind == CallKind::ReadListing
                    && r.tools.is_empty()
                    && r.output_schema.as_ref().is_some_and(|s| s.name == "Reading")
            })
            .times(1)
            .returning(|_| Ok(answer(r#"{"candidates":[{"name":"Lamp","item_type":"lamp","profile":null,"brand":null,"model":null,"serial":null,"condition":"fair","measurements":[],"faults":[],"accessories":[]}]}"#)));
        let got = intake(m).read_listing(Actor::command_line(HouseholdId(1)), "a lamp").await.unwrap();
        assert_eq!(got.candidates.len(), 1);
        assert_eq!(got.spend.calls, 1);
    }

    #[tokio::test]
    async fn an_unreadable_answer_is_a_model_failure_with_its_spend() {
        let mut m = model(Capabilities { web_search: true, images: true, audio: true, remote: true });
        m.expect_respond().returning(|_| Ok(answer("not json")));
        let err = intake(m).read_listing(Actor::command_line(HouseholdId(1)), "a lamp").await.unwrap_err();
        assert!(matches!(err, Error::ModelFailed { spend, .. } if spend.calls == 1), "{err:?}");
    }

    #[tokio::test]
    async fn empty_texts_are_refused_before_any_call() {
        let m = model(Capabilities { web_search: true, images: true, audio: true, remote: true });
        let err = intake(m).read_listing(Actor::command_line(HouseholdId(1)), "   ").await.unwrap_err();
        assert_eq!(err.to_string(), "text must not be empty");
    }
}
