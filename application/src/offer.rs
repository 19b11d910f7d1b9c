//! What the model backend offers the household, known before anyone types: each use case that needs the model,
//! available or not and why. The page reads it to show a form as ready, or one line saying what it needs.

use crate::ports::model::{Capabilities, Capability};

/// Who proposes projects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proposer {
    /// The Model API, with the proposal loop's tool calls.
    Model,
    /// The built-in local planner: no network, no cost, no model call.
    LocalPlanner,
}

/// One use case: `Ok` when the backend serves it, else why not (the refusal a call would get; nothing is sent).
pub type Availability = Result<(), String>;

/// What the backend offers, use case by use case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// Who answers "what can I build?" (always available: the local planner stands in for the model).
    pub proposer: Proposer,
    /// The model id proposals are made with ("local-planner" for the local planner).
    pub model: String,
    /// Pricing: a web search by the model.
    pub pricing: Availability,
    /// Reading a label photo: images in the input.
    pub label: Availability,
    /// Reading a pasted listing: text in, structured answer out.
    pub listing: Availability,
    /// Reading a voice note given as a typed transcript.
    pub voice: Availability,
    /// Reading a voice note given as audio: speech to text first.
    pub voice_audio: Availability,
}

impl Offer {
    /// What a backend with `capabilities` offers; `model` is its proposals' model id.
    ///
    /// ```
    /// use trove_application::offer::{Offer, Proposer};
    /// use trove_application::ports::model::Capabilities;
    /// let local = Capabilities { web_search: false, images: false, audio: false, remote: false };
    /// let offer = Offer::of(local, "local-planner".into());
    /// assert_eq!(offer.proposer, Proposer::LocalPlanner);
    /// assert_eq!(offer.listing, Err("reading a listing needs the Model API: set MODEL_API_KEY".into()));
    /// ```
    pub fn of(capabilities: Capabilities, model: String) -> Self {
        let needs = |capability: Capability| capabilities.require(capability).map_err(|e| e.to_string());
        // Text in, text out: every remote backend reads it; the local planner only plans.
        let text = |what: &str| {
            if capabilities.remote {
                Ok(())
            } else {
                Err(crate::ports::model::ModelError::NotConfigured { what: what.to_owned(), setting: "MODEL_API_KEY" }
                    .to_string())
            }
        };
        Self {
            proposer: if capabilities.remote { Proposer::Model } else { Proposer::LocalPlanner },
            model,
            pricing: needs(Capability::WebSearch),
            label: needs(Capability::Images),
            listing: text("reading a listing"),
            voice: text("reading a voice note"),
            voice_audio: needs(Capability::Audio),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(capabilities: Capabilities, expected: [bool; 5], proposer: Proposer) {
        let offer = Offer::of(capabilities, "m".into());
        let got = [&offer.pricing, &offer.label, &offer.listing, &offer.voice, &offer.voice_audio].map(Result::is_ok);
        assert_eq!((got, offer.proposer), (expected, proposer), "{capabilities:?}");
    }

    #[test]
    fn each_use_case_is_offered_by_what_the_backend_can_do() {
        let none = Capabilities { web_search: false, images: false, audio: false, remote: false };
        check(none, [false; 5], Proposer::LocalPlanner);
        check(Capabilities { remote: true, ..none }, [false, false, true, true, false], Proposer::Model);
        let all = Capabilities { web_search: true, images: true, audio: true, remote: true };
        check(all, [true; 5], Proposer::Model);
        check(Capabilities { web_search: false, ..all }, [false, true, true, true, true], Proposer::Model);
    }

    #[test]
    fn what_is_missing_is_said_with_the_setting_that_enables_it() {
        let local =
            Offer::of(Capabilities { web_search: false, images: false, audio: false, remote: false }, "m".into());
        for why in [&local.pricing, &local.label, &local.listing, &local.voice, &local.voice_audio] {
            assert!(why.as_ref().unwrap_err().ends_with("needs the Model API: set MODEL_API_KEY"), "{why:?}");
        }
        let no_search =
            Offer::of(Capabilities { web_search: false, images: true, audio: true, remote: true }, "m".into());
        assert!(no_search.pricing.unwrap_err().contains("cannot search the web"));
    }
}
