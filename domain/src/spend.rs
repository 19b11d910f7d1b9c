//! The spend ledger's rules: what a model call costs at the configured rates, and whether a budget allows
//! another call.

use crate::Timestamp;
use crate::ids::MemberId;
use crate::money::MicroUsd;
use chrono::{Datelike, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a model call was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    Propose,
    Price,
    ReadLabel,
    ReadListing,
    ReadVoice,
    Transcribe,
    ReadReceipt,
}

impl CallKind {
    pub const ALL: [CallKind; 7] = [
        CallKind::Propose,
        CallKind::Price,
        CallKind::ReadLabel,
        CallKind::ReadListing,
        CallKind::ReadVoice,
        CallKind::Transcribe,
        CallKind::ReadReceipt,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CallKind::Propose => "propose",
            CallKind::Price => "price",
            CallKind::ReadLabel => "read_label",
            CallKind::ReadListing => "read_listing",
            CallKind::ReadVoice => "read_voice",
            CallKind::Transcribe => "transcribe",
            CallKind::ReadReceipt => "read_receipt",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == word)
    }
}

impl fmt::Display for CallKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one model call used, as the provider reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// All input tokens, cached ones included (the provider's `input_tokens`).
    pub input_tokens: u64,
    /// The part of `input_tokens` served from the cache.
    pub cached_tokens: u64,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Web searches run.
    pub searches: u32,
    /// Seconds of audio transcribed, in milliseconds.
    pub audio_ms: u64,
}

/// Spend rates, in micro-USD per unit of what is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rates {
    /// Per million uncached input tokens.
    pub input_per_mtok: MicroUsd,
    /// Per million cached input tokens.
    pub cached_per_mtok: MicroUsd,
    /// Per million output tokens (reasoning included).
    pub output_per_mtok: MicroUsd,
    /// Per web search query.
    pub per_search: MicroUsd,
    /// Per minute of transcribed audio.
    pub transcribe_per_min: MicroUsd,
}

impl Default for Rates {
    /// Meta's published Model API rates (standard tier): input 1.25 / 1M tokens, cached input 0.15 / 1M, output
    /// 4.25 / 1M, web search 2.50 / 1,000 queries; transcription 0.006 / minute.
    fn default() -> Self {
        Self {
            input_per_mtok: MicroUsd(1_250_000),
            cached_per_mtok: MicroUsd(150_000),
            output_per_mtok: MicroUsd(4_250_000),
            per_search: MicroUsd(2_500),
            transcribe_per_min: MicroUsd(6_000),
        }
    }
}

/// What a call cost at `rates`, rounded to the nearest micro-USD. Cached tokens are billed at the cached rate
/// and the rest of the input at the input rate.
///
/// ```
/// use trove_domain::spend::{cost, Rates, Usage};
/// let u = Usage { input_tokens: 1_000_000, cached_tokens: 0, output_tokens: 0, searches: 4, audio_ms: 0 };
/// assert_eq!(cost(&Rates::default(), &u).0, 1_250_000 + 4 * 2_500);
/// ```
pub fn cost(rates: &Rates, usage: &Usage) -> MicroUsd {
    let cached = usage.cached_tokens.min(usage.input_tokens);
    let uncached = usage.input_tokens - cached;
    // Sum in micro-USD * tokens, then divide once, so small calls are not rounded to nothing piecewise.
    let token_part: u128 = u128::from(uncached) * rate(rates.input_per_mtok)
        + u128::from(cached) * rate(rates.cached_per_mtok)
        + u128::from(usage.output_tokens) * rate(rates.output_per_mtok);
    let audio_part: u128 = u128::from(usage.audio_ms) * rate(rates.transcribe_per_min);
    let tokens = (token_part + 500_000) / 1_000_000;
    let audio = (audio_part + 30_000) / 60_000;
    let searches = u128::from(usage.searches) * rate(rates.per_search);
    MicroUsd(i64::try_from(tokens + audio + searches).unwrap_or(i64::MAX))
}

fn rate(m: MicroUsd) -> u128 {
    u128::try_from(m.0.max(0)).unwrap_or(0)
}

/// How a model call ended. A failed call is an entry too, even when it cost nothing: the ledger shows every
/// call that was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    /// The call answered something the use case could read.
    #[default]
    Ok,
    /// The call failed (an error status after retries, an unusable, failed or refused answer).
    Failed,
    /// The call was sent and no whole answer came back (it timed out, or the connection broke): what it cost is
    /// an estimate, its input from what was sent and its output from what had streamed back.
    Unanswered,
}

impl CallOutcome {
    /// Every outcome, in order.
    pub const ALL: [CallOutcome; 3] = [CallOutcome::Ok, CallOutcome::Failed, CallOutcome::Unanswered];

    /// The outcome's word, as stored and shown ("ok", "failed", "unanswered").
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Failed => "failed",
            CallOutcome::Unanswered => "unanswered",
        }
    }

    /// Whether the call gave no usable answer (failed, or no answer at all).
    pub fn is_failure(self) -> bool {
        self != CallOutcome::Ok
    }

    /// Whether the entry's tokens are an estimate rather than the provider's count.
    pub fn is_estimate(self) -> bool {
        self == CallOutcome::Unanswered
    }

    /// The outcome of a word written by [`CallOutcome::as_str`].
    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == word)
    }
}

impl fmt::Display for CallOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of the ledger: one model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpendEntry {
    pub at: Timestamp,
    pub kind: CallKind,
    pub model: String,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub searches: u32,
    pub cost: MicroUsd,
    /// Whether the call answered or failed; failed calls that cost nothing are entries all the same.
    pub outcome: CallOutcome,
    /// The member who asked for the call; `None` for the command line (and entries from before members).
    pub member: Option<MemberId>,
}

impl SpendEntry {
    /// The entry for one call that ended with `outcome`: its usage costed at `rates`, asked for by no member
    /// (set `member` for the member who asked).
    pub fn new(at: Timestamp, kind: CallKind, model: &str, usage: &Usage, rates: &Rates, outcome: CallOutcome) -> Self {
        Self {
            at,
            kind,
            model: model.to_owned(),
            input_tokens: usage.input_tokens,
            cached_tokens: usage.cached_tokens,
            output_tokens: usage.output_tokens,
            searches: usage.searches,
            cost: cost(rates, usage),
            outcome,
            member: None,
        }
    }
}

/// The first instant of the calendar month (UTC) that holds `at`: where a monthly budget starts counting.
pub fn month_start(at: Timestamp) -> Timestamp {
    Utc.with_ymd_and_hms(at.year(), at.month(), 1, 0, 0, 0).single().unwrap_or(at)
}

/// The month of `at` as "YYYY-MM", the key of the monthly totals.
pub fn month_key(at: Timestamp) -> String {
    format!("{:04}-{:02}", at.year(), at.month())
}

/// Refusal of a call because the month's budget is spent, or what is left of it does not cover what the call may
/// cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetReached {
    /// This month's spend, with what runs going on have reserved.
    pub spent: MicroUsd,
    pub limit: MicroUsd,
    /// What the refused call may cost at most; zero when the budget is simply spent.
    pub needed: MicroUsd,
}

impl fmt::Display for BudgetReached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.needed.0 > 0 && self.spent < self.limit {
            write!(
                f,
                "the monthly model budget does not cover this call: it may cost up to {}, and {} of {} is left \
                 this month, runs going on included (SPEND_MONTHLY_LIMIT_USD); raise it or wait for next month",
                self.needed,
                MicroUsd(self.limit.0 - self.spent.0),
                self.limit
            )
        } else {
            write!(
                f,
                "the monthly model budget is spent: {} of {} this month (SPEND_MONTHLY_LIMIT_USD); raise it or wait \
                 for next month",
                self.spent, self.limit
            )
        }
    }
}

impl std::error::Error for BudgetReached {}

/// The budget rule: a call may start while this month's spend is below the limit (no limit: always).
///
/// # Errors
/// [`BudgetReached`] once `spent_this_month >= limit`.
pub fn check_budget(spent_this_month: MicroUsd, limit: Option<MicroUsd>) -> Result<(), BudgetReached> {
    match limit {
        Some(limit) if spent_this_month >= limit => {
            Err(BudgetReached { spent: spent_this_month, limit, needed: MicroUsd(0) })
        }
        _ => Ok(()),
    }
}

/// The step rule: a call is sent only when what it may cost (`estimate`: its input and its whole output budget
/// at the rates) fits in what is left of the month's budget after this month's spend and what runs going on have
/// reserved, so a run never crosses the limit by the call that is sent, only ever by less than nothing.
///
/// ```
/// use trove_domain::money::MicroUsd;
/// use trove_domain::spend::check_step;
/// let limit = Some(MicroUsd(1_000_000));
/// assert!(check_step(MicroUsd(500_000), MicroUsd(200_000), MicroUsd(300_000), limit).is_ok());
/// assert!(check_step(MicroUsd(500_000), MicroUsd(200_000), MicroUsd(300_001), limit).is_err());
/// assert!(check_step(MicroUsd(5_000_000), MicroUsd(0), MicroUsd(1), None).is_ok());
/// ```
///
/// # Errors
/// [`BudgetReached`] naming what the call may cost.
pub fn check_step(
    spent: MicroUsd,
    reserved: MicroUsd,
    estimate: MicroUsd,
    limit: Option<MicroUsd>,
) -> Result<(), BudgetReached> {
    let Some(limit) = limit else { return Ok(()) };
    let committed = MicroUsd(spent.0.saturating_add(reserved.0));
    check_budget(committed, Some(limit))?;
    if committed.0.saturating_add(estimate.0) > limit.0 {
        return Err(BudgetReached { spent: committed, limit, needed: estimate });
    }
    Ok(())
}

/// The most past calls an expected cost is averaged over: the latest ones, so a change of model or rates shows
/// within a few runs.
pub const EXPECTED_FROM_LAST: usize = 20;

/// What one more call is expected to cost, and from what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    pub each: MicroUsd,
    /// How many past calls it is the mean of; 0 when none were made and it comes from the rates and `prior`.
    pub from_calls: usize,
}

/// The expected cost of one more call: the mean of the last [`EXPECTED_FROM_LAST`] of `past` (costs of calls of
/// the same kind, oldest first), rounded up; with none, what `prior` (a typical call's usage) costs at `rates`.
///
/// ```
/// use trove_domain::money::MicroUsd;
/// use trove_domain::spend::{Rates, Usage, expected_cost};
/// let prior = Usage { input_tokens: 1_000_000, ..Usage::default() };
/// assert_eq!(expected_cost(&[], &Rates::default(), &prior).each, MicroUsd(1_250_000));
/// assert_eq!(expected_cost(&[MicroUsd(10), MicroUsd(11)], &Rates::default(), &prior).each, MicroUsd(11));
/// ```
pub fn expected_cost(past: &[MicroUsd], rates: &Rates, prior: &Usage) -> Expected {
    let last = &past[past.len().saturating_sub(EXPECTED_FROM_LAST)..];
    if last.is_empty() {
        return Expected { each: cost(rates, prior), from_calls: 0 };
    }
    let sum: i64 = last.iter().map(|m| m.0.max(0)).sum();
    let n = i64::try_from(last.len()).unwrap_or(i64::MAX);
    Expected { each: MicroUsd((sum + n - 1) / n), from_calls: last.len() }
}

/// How many calls, one after the other, the month's budget lets start: each must pass the step rule
/// ([`check_step`]: what is spent plus its own estimate `step`, its whole output budget and every search it may
/// run, within the limit), and each is expected to spend `each` once done. All of `wanted` without a budget.
///
/// ```
/// use trove_domain::money::MicroUsd;
/// use trove_domain::spend::affordable;
/// // 1,000 left: a call may cost 400 at most and costs 100 as a rule: the 7th starts with 600 spent, the 8th not.
/// assert_eq!(affordable(10, MicroUsd(100), MicroUsd(400), MicroUsd(0), Some(MicroUsd(1_000))), 7);
/// assert_eq!(affordable(10, MicroUsd(100), MicroUsd(400), MicroUsd(700), Some(MicroUsd(1_000))), 0);
/// assert_eq!(affordable(10, MicroUsd(100), MicroUsd(400), MicroUsd(0), None), 10);
/// ```
pub fn affordable(wanted: u64, each: MicroUsd, step: MicroUsd, spent: MicroUsd, limit: Option<MicroUsd>) -> u64 {
    let Some(limit) = limit else { return wanted };
    let room = limit.0.saturating_sub(spent.0).saturating_sub(step.0.max(0));
    if room < 0 {
        return 0;
    }
    if each.0 <= 0 {
        return wanted;
    }
    // The first call starts with `room` to spare; each one after it with `each` less.
    let n = u64::try_from(room / each.0).unwrap_or(u64::MAX).saturating_add(1);
    n.min(wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expected_cost_is_the_mean_of_the_last_calls_or_the_prior() {
        let prior = Usage { input_tokens: 3_000, output_tokens: 1_500, searches: 4, ..Usage::default() };
        let none = expected_cost(&[], &Rates::default(), &prior);
        assert_eq!(none, Expected { each: cost(&Rates::default(), &prior), from_calls: 0 });
        // Only the last 20 count: 5 old calls at 1,000 and 20 new ones at 10.
        let past: Vec<MicroUsd> = [MicroUsd(1_000); 5].into_iter().chain([MicroUsd(10); 20]).collect();
        assert_eq!(expected_cost(&past, &Rates::default(), &prior), Expected { each: MicroUsd(10), from_calls: 20 });
        assert_eq!(affordable(7, MicroUsd(0), MicroUsd(4), MicroUsd(5), Some(MicroUsd(10))), 7, "free calls all fit");
        assert_eq!(affordable(7, MicroUsd(3), MicroUsd(4), MicroUsd(11), Some(MicroUsd(10))), 0, "over already");
        // Whatever a call is expected to cost, none starts that could cross the limit at its worst.
        assert_eq!(affordable(7, MicroUsd(1), MicroUsd(6), MicroUsd(5), Some(MicroUsd(10))), 0, "no room for one");
        assert_eq!(affordable(7, MicroUsd(1), MicroUsd(5), MicroUsd(5), Some(MicroUsd(10))), 1, "room for one");
        // Each call that starts passes the step rule after those before it spent what they are expected to.
        for (spent, step, each) in [(0, 400, 100), (123, 50, 7), (900, 100, 1)] {
            let n = affordable(1_000, MicroUsd(each), MicroUsd(step), MicroUsd(spent), Some(MicroUsd(1_000)));
            let spent_before = |k: u64| MicroUsd(spent + each * i64::try_from(k).unwrap());
            assert!(
                n == 0 || check_step(spent_before(n - 1), MicroUsd(0), MicroUsd(step), Some(MicroUsd(1_000))).is_ok()
            );
            assert!(check_step(spent_before(n), MicroUsd(0), MicroUsd(step), Some(MicroUsd(1_000))).is_err(), "{n}");
        }
    }

    fn check(usage: Usage, want_micro: i64) {
        assert_eq!(cost(&Rates::default(), &usage).0, want_micro, "{usage:?}");
    }

    #[test]
    fn costs_at_published_rates() {
        let u = |input, cached, output, searches| Usage {
            input_tokens: input,
            cached_tokens: cached,
            output_tokens: output,
            searches,
            audio_ms: 0,
        };
        check(u(0, 0, 0, 0), 0);
        check(u(1_000_000, 0, 0, 0), 1_250_000);
        check(u(1_000_000, 1_000_000, 0, 0), 150_000);
        check(u(0, 0, 1_000_000, 0), 4_250_000);
        check(u(0, 0, 0, 1000), 2_500_000);
        // 1830 input, 412 output: 1830 * 1.25 + 412 * 4.25 = 2287.5 + 1751 = 4038.5 -> 4039 micro-USD.
        check(u(1830, 0, 412, 0), 4039);
        // Cached more than input (a provider glitch) is capped at the input.
        check(u(100, 500, 0, 0), 15);
        check(Usage { audio_ms: 60_000, ..Usage::default() }, 6_000);
        check(Usage { audio_ms: 30_000, ..Usage::default() }, 3_000);
    }

    #[test]
    fn budget_rule() {
        assert!(check_budget(MicroUsd(10), None).is_ok());
        assert!(check_budget(MicroUsd(9), Some(MicroUsd(10))).is_ok());
        let e = check_budget(MicroUsd(10), Some(MicroUsd(10))).unwrap_err();
        assert!(e.to_string().contains("SPEND_MONTHLY_LIMIT_USD"));
    }

    #[test]
    fn outcomes_read_back() {
        for o in CallOutcome::ALL {
            assert_eq!(CallOutcome::parse(o.as_str()), Some(o));
        }
        assert_eq!(CallOutcome::parse("error"), None);
        assert_eq!(CallOutcome::default(), CallOutcome::Ok);
    }

    #[test]
    fn a_failed_call_that_cost_nothing_is_still_an_entry() {
        let at = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
        let e = SpendEntry::new(at, CallKind::Price, "m", &Usage::default(), &Rates::default(), CallOutcome::Failed);
        assert_eq!((e.cost, e.outcome), (MicroUsd(0), CallOutcome::Failed));
    }

    #[test]
    fn months() {
        let at = Utc.with_ymd_and_hms(2026, 11, 30, 23, 59, 0).unwrap();
        assert_eq!(month_start(at), Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap());
        assert_eq!(month_key(at), "2026-11");
    }
}
