//! What the model backend offers, asked before the page shows a form: proposals by the model or by the built-in
//! local planner, pricing, and the readings of labels, listings and voice notes, each available or not and why;
//! and the size limits of what may be sent.

use crate::auth::Member;
use crate::error::ApiResult;
use crate::services::Services;
use poem_openapi::payload::Json;
use poem_openapi::{Enum, Object, OpenApi, Tags};
use trove_application::intake::{AUDIO_MAX, IMAGE_MAX};
use trove_application::offer::{Availability, Offer, Proposer};

#[derive(Tags)]
enum Tag {
    /// What the model backend offers.
    Capabilities,
}

/// Who proposes projects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum ProposerDto {
    /// The Model API.
    Model,
    /// The built-in local planner: no network, no cost, no model call.
    LocalPlanner,
}

/// Whether a use case that needs the model is offered.
#[derive(Debug, Clone, PartialEq, Eq, Object)]
#[oai(rename = "Offered")]
pub struct AvailabilityDto {
    pub available: bool,
    /// Why not, with the setting that enables it ("pricing with web search needs the Model API: set
    /// MODEL_API_KEY"); absent when available.
    pub reason: Option<String>,
}

impl From<&Availability> for AvailabilityDto {
    fn from(a: &Availability) -> Self {
        Self { available: a.is_ok(), reason: a.as_ref().err().cloned() }
    }
}

/// Who answers "what can I build?" (always available).
#[derive(Debug, Clone, PartialEq, Eq, Object)]
#[oai(rename = "Proposals")]
pub struct ProposalsDto {
    pub by: ProposerDto,
    /// The model id proposals are made with (`local-planner` for the local planner).
    pub model: String,
}

/// The largest files the API takes, in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Object)]
#[oai(rename = "Limits")]
pub struct LimitsDto {
    /// A photo, receipt or manual kept on an item.
    pub media_bytes: u64,
    /// A photo read at intake (a label, several items).
    pub image_bytes: u64,
    /// A voice note.
    pub audio_bytes: u64,
}

/// What the model backend offers, use case by use case.
#[derive(Debug, Clone, PartialEq, Eq, Object)]
#[oai(rename = "Capabilities")]
pub struct CapabilitiesDto {
    pub proposals: ProposalsDto,
    /// Pricing with the model's web search.
    pub pricing: AvailabilityDto,
    /// Reading a label photo.
    pub label: AvailabilityDto,
    /// Reading a pasted listing.
    pub listing: AvailabilityDto,
    /// Reading a voice note typed as a transcript.
    pub voice: AvailabilityDto,
    /// Reading a voice note given as audio (speech to text first).
    pub voice_audio: AvailabilityDto,
    pub limits: LimitsDto,
}

impl From<&Offer> for CapabilitiesDto {
    fn from(o: &Offer) -> Self {
        Self {
            proposals: ProposalsDto {
                by: match o.proposer {
                    Proposer::Model => ProposerDto::Model,
                    Proposer::LocalPlanner => ProposerDto::LocalPlanner,
                },
                model: o.model.clone(),
            },
            pricing: (&o.pricing).into(),
            label: (&o.label).into(),
            listing: (&o.listing).into(),
            voice: (&o.voice).into(),
            voice_audio: (&o.voice_audio).into(),
            limits: LimitsDto {
                media_bytes: trove_domain::media::MAX_BYTES as u64,
                image_bytes: IMAGE_MAX as u64,
                audio_bytes: AUDIO_MAX as u64,
            },
        }
    }
}

/// The capabilities route.
pub struct CapabilitiesApi(pub Services);

#[OpenApi(tag = "Tag::Capabilities")]
impl CapabilitiesApi {
    /// What the model backend offers: who proposes projects, and whether pricing and the readings of labels,
    /// listings and voice notes are available, each with why not (nothing is sent to the model); and the size
    /// limits of uploads.
    #[oai(path = "/capabilities", method = "get")]
    async fn capabilities(&self, _member: Member) -> ApiResult<Json<CapabilitiesDto>> {
        Ok(Json((&self.0.backend.offer()).into()))
    }
}
