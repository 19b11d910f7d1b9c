//! Metered calls against mocked ports: the budget before each call, one spend entry per call (failed or not),
//! costed at the configured rates.

use super::*;
use crate::ports::clock::MockClock;
use crate::ports::model::Capabilities;
use crate::ports::model::{MockModelPort, ModelResponse};
use crate::ports::spend::MockSpendLedger;
use chrono::{TimeZone, Utc};
use std::sync::Mutex;
use trove_domain::spend::BudgetReached;
use trove_domain::testing::now;

const HOUSEHOLD: HouseholdId = HouseholdId(9);
/// The member who asks for every call: each entry names them.
const ASKER: Actor = Actor { household: HOUSEHOLD, member: Some(trove_domain::people::MemberId(5)) };
const MODEL: &str = "muse-spark-1.3";

/// Rates unlike the defaults, so a cost computed at the wrong rates shows.
fn rates() -> Rates {
    Rates {
        input_per_mtok: MicroUsd(2_000_000),
        cached_per_mtok: MicroUsd(500_000),
        output_per_mtok: MicroUsd(8_000_000),
        per_search: MicroUsd(10_000),
        transcribe_per_min: MicroUsd(12_000),
    }
}

fn request(kind: CallKind) -> ModelRequest {
    ModelRequest {
        kind,
        instructions: "Find comparable sales.".into(),
        input: vec![],
        tools: vec![],
        output_schema: None,
        max_output_tokens: 16_000,
        max_tool_calls: None,
        include_search_results: false,
        household: None,
    }
}

type Entries = Arc<Mutex<Vec<SpendEntry>>>;

/// A ledger that keeps every entry it is given.
fn ledger() -> (MockSpendLedger, Entries) {
    let entries: Entries = Arc::default();
    let kept = entries.clone();
    let mut ledger = MockSpendLedger::new();
    ledger.expect_record().withf(|h, _| *h == HOUSEHOLD).returning(move |_, entry: &SpendEntry| {
        kept.lock().unwrap().push(entry.clone());
        Ok(())
    });
    (ledger, entries)
}

fn model() -> MockModelPort {
    let mut model = MockModelPort::new();
    model.expect_model_name().return_const(MODEL.to_owned());
    model
}

fn metered(model: MockModelPort, ledger: MockSpendLedger, policy: SpendPolicy) -> Metered {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(now());
    Metered::new(Arc::new(model), Arc::new(ledger), Arc::new(clock), policy)
}

fn policy() -> SpendPolicy {
    SpendPolicy { rates: rates(), monthly_limit: None }
}

fn entry(kind: CallKind, usage: Usage, cost: i64) -> SpendEntry {
    SpendEntry {
        at: now(),
        kind,
        model: MODEL.into(),
        input_tokens: usage.input_tokens,
        cached_tokens: usage.cached_tokens,
        output_tokens: usage.output_tokens,
        searches: usage.searches,
        cost: MicroUsd(cost),
        outcome: CallOutcome::Ok,
        member: ASKER.member,
    }
}

/// The entry of a call that failed.
fn failed(kind: CallKind, usage: Usage, cost: i64) -> SpendEntry {
    SpendEntry { outcome: CallOutcome::Failed, ..entry(kind, usage, cost) }
}

#[tokio::test]
async fn each_successful_call_writes_one_entry_costed_at_the_configured_rates() {
    let first = Usage { input_tokens: 10_000, cached_tokens: 4_000, output_tokens: 1_000, searches: 2, audio_ms: 0 };
    let second = Usage { input_tokens: 500, cached_tokens: 0, output_tokens: 250, searches: 0, audio_ms: 0 };
    let mut model = model();
    let mut answers = vec![second, first];
    model
        .expect_respond()
        .times(2)
        .returning(move |_| Ok(ModelResponse { output: vec![], usage: answers.pop().unwrap() }));
    let (ledger, entries) = ledger();
    let metered = metered(model, ledger, policy());
    let mut run = RunSpend::default();

    metered.respond(ASKER, &request(CallKind::Price), &mut run).await.unwrap();
    metered.respond(ASKER, &request(CallKind::Price), &mut run).await.unwrap();

    // 6000 uncached * 2 + 4000 cached * 0.5 + 1000 output * 8 = 22000, and 2 searches * 10000: 42000 micro-USD.
    // 500 * 2 + 250 * 8 = 3000 micro-USD.
    assert_eq!(
        *entries.lock().unwrap(),
        vec![entry(CallKind::Price, first, 42_000), entry(CallKind::Price, second, 3_000)]
    );
    assert_eq!(
        run,
        RunSpend {
            calls: 2,
            input_tokens: 10_500,
            cached_tokens: 4_000,
            output_tokens: 1_250,
            searches: 2,
            cost: MicroUsd(45_000)
        }
    );
}

#[tokio::test]
async fn a_provider_rate_limiting_is_busy_with_its_wait_and_still_recorded() {
    for (retry_after, want_s) in [(Some(std::time::Duration::from_secs(120)), 120), (None, RATE_LIMITED_RETRY_S)] {
        let mut model = model();
        model
            .expect_respond()
            .times(1)
            .return_const(Err(ModelError::RateLimited { message: "slow down".into(), retry_after }));
        let (ledger, entries) = ledger();
        let metered = metered(model, ledger, policy());
        let mut run = RunSpend::default();

        let result = metered.respond(ASKER, &request(CallKind::Propose), &mut run).await;

        match result {
            Err(Error::ModelBusy { reason, retry_after_s, spend }) => {
                assert_eq!(reason, "the model provider is rate limiting requests: slow down");
                assert_eq!(retry_after_s, want_s);
                assert_eq!(spend.calls, 1);
            }
            other => panic!("expected ModelBusy, got {other:?}"),
        }
        assert_eq!(*entries.lock().unwrap(), vec![failed(CallKind::Propose, Usage::default(), 0)]);
    }
}

#[tokio::test]
async fn a_failed_call_without_usage_still_writes_an_entry_with_zero_tokens() {
    let cases = [
        (ModelError::Http { status: 503, message: "overloaded".into() }, "the Model API answered 503: overloaded"),
        (ModelError::Unreachable("timed out".into()), "the Model API could not be reached: timed out"),
        (ModelError::bad_response("no output"), "the Model API's answer could not be read: no output"),
    ];
    for (error, want) in cases {
        let mut model = model();
        model.expect_respond().times(1).return_const(Err(error));
        let (ledger, entries) = ledger();
        let metered = metered(model, ledger, policy());
        let mut run = RunSpend::default();

        let result = metered.respond(ASKER, &request(CallKind::Propose), &mut run).await;

        match result {
            Err(Error::ModelFailed { reason, spend }) => {
                assert_eq!(reason, want);
                assert_eq!(spend, RunSpend { calls: 1, ..RunSpend::default() });
            }
            other => panic!("expected ModelFailed, got {other:?}"),
        }
        assert_eq!(*entries.lock().unwrap(), vec![failed(CallKind::Propose, Usage::default(), 0)], "{want}");
        assert_eq!(run.calls, 1);
    }
}

#[tokio::test]
async fn a_failed_call_with_usage_writes_an_entry_with_that_usage() {
    let billed = Usage { input_tokens: 3_000, cached_tokens: 0, output_tokens: 16_000, searches: 1, audio_ms: 0 };
    let mut model = model();
    model
        .expect_respond()
        .times(1)
        .return_const(Err(ModelError::Failed { message: "server_error: broke".into(), usage: billed }));
    let (ledger, entries) = ledger();
    let metered = metered(model, ledger, policy());
    let mut run = RunSpend::default();

    let result = metered.respond(ASKER, &request(CallKind::ReadLabel), &mut run).await;

    // 3000 * 2 + 16000 * 8 = 134000, and one search: 144000 micro-USD.
    match result {
        Err(Error::ModelFailed { reason, spend }) => {
            assert_eq!(reason, "the model failed: server_error: broke");
            assert_eq!(spend.cost, MicroUsd(144_000));
        }
        other => panic!("expected ModelFailed, got {other:?}"),
    }
    assert_eq!(*entries.lock().unwrap(), vec![failed(CallKind::ReadLabel, billed, 144_000)]);
}

#[tokio::test]
async fn an_answer_cut_short_by_its_output_budget_is_asked_once_more_with_twice_the_budget() {
    let billed = Usage { input_tokens: 3_000, output_tokens: 16_000, ..Usage::default() };
    let done = Usage { input_tokens: 3_000, output_tokens: 20_000, ..Usage::default() };
    for second_also_short in [false, true] {
        let mut model = model();
        let budgets = Arc::new(Mutex::new(Vec::new()));
        let seen = budgets.clone();
        let mut calls = 0;
        model.expect_respond().times(2).returning(move |r: &ModelRequest| {
            seen.lock().unwrap().push(r.max_output_tokens);
            calls += 1;
            if calls == 1 || second_also_short {
                Err(ModelError::Incomplete { reason: "max_output_tokens".into(), usage: billed })
            } else {
                Ok(ModelResponse { output: vec![], usage: done })
            }
        });
        let (ledger, entries) = ledger();
        let metered = metered(model, ledger, policy());
        let mut run = RunSpend::default();
        let mut asked = request(CallKind::ReadLabel);
        asked.max_output_tokens = 16_000;

        let result = metered.respond(ASKER, &asked, &mut run).await;

        assert_eq!(*budgets.lock().unwrap(), vec![16_000, 32_000]);
        let outcomes: Vec<CallOutcome> = entries.lock().unwrap().iter().map(|e| e.outcome).collect();
        if second_also_short {
            assert!(matches!(result, Err(Error::ModelFailed { .. })), "{result:?}");
            assert_eq!(outcomes, vec![CallOutcome::Failed, CallOutcome::Failed], "both attempts are in the ledger");
        } else {
            assert_eq!(result.unwrap().usage, done);
            assert_eq!(outcomes, vec![CallOutcome::Failed, CallOutcome::Ok], "the cut-short attempt is in the ledger");
        }
        assert_eq!(run.calls, 2);
    }
}

#[tokio::test]
async fn an_output_budget_set_for_a_call_kind_replaces_the_use_cases_own() {
    let mut model = model();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let saw = seen.clone();
    model.expect_respond().times(2).returning(move |r: &ModelRequest| {
        saw.lock().unwrap().push((r.kind, r.max_output_tokens));
        Ok(ModelResponse { output: vec![], usage: Usage::default() })
    });
    let (ledger, _) = ledger();
    let metered = metered(model, ledger, policy()).with_output_budgets(HashMap::from([(CallKind::Propose, 24_000)]));
    let mut run = RunSpend::default();

    metered.respond(ASKER, &request(CallKind::Propose), &mut run).await.unwrap();
    metered.respond(ASKER, &request(CallKind::Price), &mut run).await.unwrap();

    assert_eq!(*seen.lock().unwrap(), vec![(CallKind::Propose, 24_000), (CallKind::Price, 16_000)]);
}

#[tokio::test]
async fn a_backend_that_cannot_serve_the_request_is_not_billed() {
    let mut model = model();
    model
        .expect_respond()
        .times(1)
        .return_const(Err(ModelError::NotConfigured { what: "pricing".into(), setting: "MODEL_API_KEY" }));
    let (ledger, entries) = ledger();
    let metered = metered(model, ledger, policy());
    let mut run = RunSpend::default();

    let result = metered.respond(ASKER, &request(CallKind::Price), &mut run).await;

    assert!(
        matches!(&result, Err(Error::NotConfigured { what, setting: "MODEL_API_KEY" }) if what == "pricing"),
        "{result:?}"
    );
    assert!(entries.lock().unwrap().is_empty());
    assert_eq!(run, RunSpend::default());
}

#[tokio::test]
async fn transcribe_writes_a_transcribe_entry_costed_per_minute_of_audio() {
    // Recorded under the model the call was made with: the speech model, not the text one.
    let mut model = MockModelPort::new();
    model
        .expect_model_name()
        .withf(|k| *k == CallKind::Transcribe)
        .return_const("muse-voice-transcribe-1.0".to_owned());
    model
        .expect_transcribe()
        .times(1)
        .withf(|wav| wav == b"RIFF....WAVE")
        .return_const(Ok(Transcript { text: "a drill, good".into(), audio_ms: 90_000 }));
    let (ledger, entries) = ledger();
    let metered = metered(model, ledger, policy());
    let mut run = RunSpend::default();

    let transcript = metered.transcribe(ASKER, b"RIFF....WAVE", &mut run).await.unwrap();

    assert_eq!(transcript.text, "a drill, good");
    // 90 seconds at 12000 micro-USD a minute.
    let mut want = entry(CallKind::Transcribe, Usage::default(), 18_000);
    want.model = "muse-voice-transcribe-1.0".into();
    assert_eq!(*entries.lock().unwrap(), vec![want]);
    assert_eq!(run, RunSpend { calls: 1, cost: MicroUsd(18_000), ..RunSpend::default() });
}

#[tokio::test]
async fn audio_refused_before_sending_is_a_bad_request_and_costs_nothing() {
    let mut model = MockModelPort::new();
    model.expect_transcribe().times(1).return_const(Err(ModelError::BadInput("the WAV file is compressed".into())));
    let mut ledger = MockSpendLedger::new();
    ledger.expect_record().times(0);
    let metered = metered(model, ledger, policy());
    let mut run = RunSpend::default();

    let result = metered.transcribe(ASKER, b"RIFF", &mut run).await;

    assert!(matches!(&result, Err(Error::Invalid(m)) if m == "the WAV file is compressed"), "{result:?}");
    assert_eq!(run, RunSpend::default());
}

#[tokio::test]
async fn a_failed_transcription_still_writes_an_entry() {
    let mut model = model();
    model.expect_transcribe().times(1).return_const(Err(ModelError::Http { status: 413, message: "too large".into() }));
    let (ledger, entries) = ledger();
    let metered = metered(model, ledger, policy());
    let mut run = RunSpend::default();

    let result = metered.transcribe(ASKER, b"RIFF", &mut run).await;

    assert!(
        matches!(&result, Err(Error::ModelFailed { reason, .. }) if reason == "the Model API answered 413: too large")
    );
    assert_eq!(*entries.lock().unwrap(), vec![failed(CallKind::Transcribe, Usage::default(), 0)]);
}

#[tokio::test]
async fn a_spent_budget_refuses_before_sending() {
    let mut model = model();
    model.expect_respond().times(0);
    model.expect_transcribe().times(0);
    let mut ledger = MockSpendLedger::new();
    let month_start = Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap();
    ledger
        .expect_total_since()
        .times(2)
        .withf(move |h, since| *h == HOUSEHOLD && *since == month_start)
        .returning(|_, _| Ok(MicroUsd(2_000_000)));
    ledger.expect_record().times(0);
    let metered = metered(model, ledger, SpendPolicy { rates: rates(), monthly_limit: Some(MicroUsd(2_000_000)) });
    let mut run = RunSpend::default();

    let answered = metered.respond(ASKER, &request(CallKind::Propose), &mut run).await;
    let transcribed = metered.transcribe(ASKER, b"RIFF", &mut run).await;

    let want = BudgetReached { spent: MicroUsd(2_000_000), limit: MicroUsd(2_000_000), needed: MicroUsd(0) };
    assert!(matches!(answered, Err(Error::Budget(b)) if b == want), "{answered:?}");
    assert!(matches!(transcribed, Err(Error::Budget(b)) if b == want), "{transcribed:?}");
    assert_eq!(run, RunSpend::default());
}

#[tokio::test]
async fn below_the_budget_or_without_one_the_call_is_sent() {
    for (limit, spent_calls) in [(Some(MicroUsd(2_000_000)), 1), (None, 0)] {
        let mut model = model();
        model.expect_respond().times(1).return_const(Ok(ModelResponse { output: vec![], usage: Usage::default() }));
        let (mut ledger, entries) = ledger();
        // Without a limit the ledger's total is never read. The call may cost up to 128,012 micro-USD (16,000
        // output tokens and its few input tokens at the rates): 1,871,988 spent leaves just that.
        ledger.expect_total_since().times(spent_calls).returning(|_, _| Ok(MicroUsd(1_871_988)));
        let metered = metered(model, ledger, SpendPolicy { rates: rates(), monthly_limit: limit });
        let mut run = RunSpend::default();

        metered.respond(ASKER, &request(CallKind::Propose), &mut run).await.unwrap();

        assert_eq!(entries.lock().unwrap().len(), 1, "{limit:?}");
    }
}

#[tokio::test]
async fn a_call_that_may_cost_more_than_is_left_is_refused_before_it_is_sent() {
    let mut model = model();
    model.expect_respond().times(0);
    let mut ledger = MockSpendLedger::new();
    ledger.expect_total_since().times(1).returning(|_, _| Ok(MicroUsd(1_871_989)));
    ledger.expect_record().times(0);
    let metered = metered(model, ledger, SpendPolicy { rates: rates(), monthly_limit: Some(MicroUsd(2_000_000)) });
    let mut run = RunSpend::default();

    let answered = metered.respond(ASKER, &request(CallKind::Propose), &mut run).await;

    let want = BudgetReached { spent: MicroUsd(1_871_989), limit: MicroUsd(2_000_000), needed: MicroUsd(128_012) };
    assert!(matches!(answered, Err(Error::Budget(b)) if b == want), "{answered:?}");
    let Err(Error::Budget(b)) = answered else { unreachable!() };
    assert!(b.to_string().starts_with("the monthly model budget does not cover this call: it may cost up to"), "{b}");
}

#[tokio::test]
async fn concurrent_calls_reserve_what_they_may_cost_and_give_it_back_once_recorded() {
    // Two calls at once on 2,000,000 with nothing spent: the first reserves 128,012, the second fits beside it;
    // with 1,800,000 spent only one fits while the other is in flight.
    for (spent, both) in [(0, true), (1_800_000, false)] {
        let mut model = model();
        model.expect_respond().returning(|_| Ok(ModelResponse { output: vec![], usage: Usage::default() }));
        let (mut ledger, entries) = ledger();
        ledger.expect_total_since().returning(move |_, _| Ok(MicroUsd(spent)));
        let metered = metered(model, ledger, SpendPolicy { rates: rates(), monthly_limit: Some(MicroUsd(2_000_000)) });

        let first = metered.reserve(HOUSEHOLD, &request(CallKind::Propose)).await.unwrap();
        let second = metered.reserve(HOUSEHOLD, &request(CallKind::Propose)).await;
        assert_eq!(second.is_ok(), both, "spent {spent}");
        drop(first);
        drop(second);
        // Given back: a call is judged on the spend alone again.
        let mut run = RunSpend::default();
        metered.respond(ASKER, &request(CallKind::Propose), &mut run).await.unwrap();
        assert_eq!(entries.lock().unwrap().len(), 1);
        assert!(metered.reserved.lock().unwrap().is_empty(), "nothing stays reserved");
    }
}

#[tokio::test]
async fn a_provider_without_the_capability_refuses_before_sending_and_records_nothing() {
    let mut model = model();
    model.expect_respond().times(1).return_const(Err(Capability::WebSearch.lacking()));
    model.expect_transcribe().times(1).return_const(Err(Capability::Audio.lacking()));
    let mut ledger = MockSpendLedger::new();
    ledger.expect_record().times(0);
    let metered = metered(model, ledger, policy());
    let mut run = RunSpend::default();

    let priced = metered.respond(ASKER, &request(CallKind::Price), &mut run).await;
    let heard = metered.transcribe(ASKER, b"RIFF", &mut run).await;

    match priced {
        Err(Error::Unavailable { capability: "web_search", message }) => assert_eq!(
            message,
            "this model backend cannot search the web; pricing needs a provider with web search, e.g. MODEL_PROVIDER=meta"
        ),
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(matches!(heard, Err(Error::Unavailable { capability: "audio_transcription", .. })), "{heard:?}");
    assert_eq!(run, RunSpend::default());
}

#[test]
fn require_names_the_capability_or_the_missing_key() {
    let check = |caps: Capabilities, capability: Capability| {
        let mut model = MockModelPort::new();
        model.expect_capabilities().return_const(caps);
        metered(model, MockSpendLedger::new(), policy()).require(capability).map_err(|e| e.to_string())
    };
    let remote = Capabilities { web_search: false, images: true, audio: false, remote: true };
    let local = Capabilities { web_search: false, images: false, audio: false, remote: false };
    assert_eq!(check(remote, Capability::Images), Ok(()));
    assert_eq!(
        check(remote, Capability::WebSearch),
        Err("this model backend cannot search the web; pricing needs a provider with web search, \
             e.g. MODEL_PROVIDER=meta"
            .into())
    );
    assert!(check(remote, Capability::Audio).unwrap_err().starts_with("this model backend cannot transcribe audio"));
    assert_eq!(
        check(local, Capability::WebSearch),
        Err("pricing with web search needs the Model API: set MODEL_API_KEY".into())
    );
    assert_eq!(
        check(local, Capability::Audio),
        Err("reading a voice note needs the Model API: set MODEL_API_KEY".into())
    );
}

#[tokio::test]
async fn every_attempt_the_backend_tried_again_is_in_the_ledger_and_the_stream_is_passed_on() {
    let failed_answer = Usage { input_tokens: 2_000, output_tokens: 100, ..Usage::default() };
    let timed_out = Usage { input_tokens: 2_500, output_tokens: 40, ..Usage::default() };
    let answered = Usage { input_tokens: 2_500, output_tokens: 300, ..Usage::default() };
    for last_unanswered in [false, true] {
        let mut model = model();
        model.expect_respond().times(1).returning(move |_| {
            // What a backend does: it tells the call's watch as it goes.
            let watch = crate::ports::model::watch().expect("the metered call sets a watch");
            watch.retried(Attempt { usage: failed_answer, estimated: false, reason: "server_error".into() });
            watch.streamed(Streamed { output_tokens: 50 });
            watch.retried(Attempt { usage: timed_out, estimated: true, reason: "no byte came for 60s".into() });
            watch.streamed(Streamed { output_tokens: 120 });
            if last_unanswered {
                Err(ModelError::Unanswered {
                    reason: "no byte came for 60s (after 3 attempts)".into(),
                    estimate: timed_out,
                })
            } else {
                Ok(ModelResponse { output: vec![], usage: answered })
            }
        });
        let (ledger, entries) = ledger();
        let metered = metered(model, ledger, policy());
        let mut run = RunSpend::default();
        let seen = Mutex::new(Vec::new());
        let sink = |event: Progress| seen.lock().unwrap().push(event);

        let result = metered
            .respond_and_read_watched(ASKER, &request(CallKind::Propose), &mut run, &sink, |r| Ok(r.usage))
            .await;

        // 2000 * 2 + 100 * 8 = 4800; 2500 * 2 + 40 * 8 = 5320; 2500 * 2 + 300 * 8 = 7400 micro-USD.
        let unanswered =
            |usage| SpendEntry { outcome: CallOutcome::Unanswered, ..entry(CallKind::Propose, usage, 5_320) };
        let mut want = vec![failed(CallKind::Propose, failed_answer, 4_800), unanswered(timed_out)];
        if last_unanswered {
            want.push(unanswered(timed_out));
            match result {
                Err(Error::ModelFailed { reason, spend }) => {
                    assert!(reason.contains("no whole answer"), "{reason}");
                    assert_eq!((spend.calls, spend.cost), (3, MicroUsd(4_800 + 2 * 5_320)));
                }
                other => panic!("{other:?}"),
            }
        } else {
            want.push(entry(CallKind::Propose, answered, 7_400));
            assert_eq!(result.unwrap(), answered);
            assert_eq!((run.calls, run.cost), (3, MicroUsd(4_800 + 5_320 + 7_400)));
        }
        assert_eq!(*entries.lock().unwrap(), want);
        assert!(
            entries.lock().unwrap().iter().all(|e| e.outcome.is_estimate() == (e.outcome == CallOutcome::Unanswered))
        );
        assert_eq!(
            seen.into_inner().unwrap(),
            vec![Progress::Writing { output_tokens: 50 }, Progress::Writing { output_tokens: 120 }]
        );
    }
}
