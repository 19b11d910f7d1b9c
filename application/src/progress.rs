//! What a long model run tells while it goes: the steps of a proposal run, the tools it called, the price search.
//!
//! A use case reports to a [`ProgressSink`]; the HTTP adapter streams the reports as server-sent events, a caller
//! that does not watch passes [`Unwatched`]. Reports say what happens, never what the model wrote: a tool's
//! output is reported by its size.

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// A model step answered: its number (from 1), the most steps a run may take, and the tools it called
    /// (empty for the step that answers).
    Step { number: u32, max: u32, tools: Vec<String> },
    /// A tool answered a call of the step before: its name and the size of its output in bytes.
    Tool { name: String, output_bytes: usize },
    /// The pricing call was sent: the model searches the web for comparables (at most `max_searches` queries).
    Searching { max_searches: u32 },
    /// The model is writing its answer, as the provider streams it: about this many output tokens so far.
    Writing { output_tokens: u64 },
}

/// Where a run reports what it does. Reporting never fails and never blocks the run.
pub trait ProgressSink: Send + Sync {
    fn report(&self, event: Progress);
}

/// A sink that drops every report: for callers that only want the answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unwatched;

impl ProgressSink for Unwatched {
    fn report(&self, _event: Progress) {}
}

impl<F: Fn(Progress) + Send + Sync> ProgressSink for F {
    fn report(&self, event: Progress) {
        self(event);
    }
}
