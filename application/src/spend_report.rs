//! The spend report: the ledger's entries and totals by kind, by month and by the member who asked.

use crate::Error;
use crate::metered::SpendPolicy;
use crate::ports::{Clock, MemberRepo, SpendLedger};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use trove_domain::money::MicroUsd;
use trove_domain::people::MemberId;
use trove_domain::spend::{self, SpendEntry};
use trove_domain::{HouseholdId, Timestamp};

/// Totals of a set of entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Every call, failed ones included.
    pub calls: u64,
    /// The calls that failed (counted in `calls` too), whether or not they cost anything.
    pub failed_calls: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub searches: u64,
    pub cost: MicroUsd,
}

impl Totals {
    fn add(&mut self, e: &SpendEntry) {
        self.calls += 1;
        self.failed_calls += u64::from(e.outcome.is_failure());
        self.input_tokens += e.input_tokens;
        self.cached_tokens += e.cached_tokens;
        self.output_tokens += e.output_tokens;
        self.searches += u64::from(e.searches);
        self.cost = self.cost + e.cost;
    }
}

/// What one member's calls (or the command line's) cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberSpend {
    /// The member and their name (`"former member"` for one removed since); `None`: the command line.
    pub member: Option<(MemberId, String)>,
    pub totals: Totals,
}

/// The report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpendReport {
    pub entries: Vec<SpendEntry>,
    pub total: Totals,
    /// By kind ("propose", "price", ...).
    pub by_kind: BTreeMap<String, Totals>,
    /// By month ("2026-11").
    pub by_month: BTreeMap<String, Totals>,
    /// By the member who asked: the command line first, then members by id.
    pub by_member: Vec<MemberSpend>,
    /// The monthly budget, if one is set.
    pub monthly_limit: Option<MicroUsd>,
    /// Spent in the current month (whatever the filters).
    pub this_month: MicroUsd,
}

/// The spend report use case.
#[derive(Clone)]
pub struct Spend {
    ledger: Arc<dyn SpendLedger>,
    clock: Arc<dyn Clock>,
    policy: SpendPolicy,
    /// To name the members who asked.
    members: Arc<dyn MemberRepo>,
}

impl std::fmt::Debug for Spend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spend").field("policy", &self.policy).finish_non_exhaustive()
    }
}

impl Spend {
    pub fn new(
        ledger: Arc<dyn SpendLedger>,
        clock: Arc<dyn Clock>,
        policy: SpendPolicy,
        members: Arc<dyn MemberRepo>,
    ) -> Self {
        Self { ledger, clock, policy, members }
    }

    /// The entries with `from <= at < to` and their totals.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `from` is after `to`.
    pub async fn report(
        &self,
        household: HouseholdId,
        from: Option<Timestamp>,
        to: Option<Timestamp>,
    ) -> Result<SpendReport, Error> {
        if let (Some(f), Some(t)) = (from, to)
            && f > t
        {
            return Err(Error::Invalid("from must not be after to".into()));
        }
        let entries = self.ledger.entries(household, from, to).await?;
        let mut total = Totals::default();
        let mut by_kind: BTreeMap<String, Totals> = BTreeMap::new();
        let mut by_month: BTreeMap<String, Totals> = BTreeMap::new();
        let mut by_member: BTreeMap<Option<MemberId>, Totals> = BTreeMap::new();
        for e in &entries {
            total.add(e);
            by_kind.entry(e.kind.to_string()).or_default().add(e);
            by_month.entry(spend::month_key(e.at)).or_default().add(e);
            by_member.entry(e.member).or_default().add(e);
        }
        let names: HashMap<MemberId, String> = if by_member.keys().any(Option::is_some) {
            self.members.members(household).await?.into_iter().map(|m| (m.id, m.name.to_string())).collect()
        } else {
            HashMap::new()
        };
        let by_member = by_member
            .into_iter()
            .map(|(member, totals)| MemberSpend {
                member: member.map(|m| (m, names.get(&m).cloned().unwrap_or_else(|| "former member".to_owned()))),
                totals,
            })
            .collect();
        let this_month = self.ledger.total_since(household, spend::month_start(self.clock.now())).await?;
        Ok(SpendReport {
            entries,
            total,
            by_kind,
            by_month,
            by_member,
            monthly_limit: self.policy.monthly_limit,
            this_month,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::clock::MockClock;
    use crate::ports::people::{Member, MockMemberRepo};
    use crate::ports::spend::MockSpendLedger;
    use chrono::{TimeZone, Utc};
    use trove_domain::people::{MemberName, Role};
    use trove_domain::spend::{CallKind, CallOutcome};

    fn entry(kind: CallKind, day: u32, cost: i64, outcome: CallOutcome) -> SpendEntry {
        SpendEntry {
            at: Utc.with_ymd_and_hms(2026, 11, day, 12, 0, 0).unwrap(),
            kind,
            model: "muse-spark-1.3".into(),
            input_tokens: 10,
            cached_tokens: 0,
            output_tokens: 5,
            searches: 0,
            cost: MicroUsd(cost),
            outcome,
            member: None,
        }
    }

    fn spend(ledger: MockSpendLedger, members: MockMemberRepo) -> Spend {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(Utc.with_ymd_and_hms(2026, 11, 30, 0, 0, 0).unwrap());
        Spend::new(Arc::new(ledger), Arc::new(clock), SpendPolicy::default(), Arc::new(members))
    }

    #[tokio::test]
    async fn totals_by_member_name_the_members_and_the_command_line() {
        let by = |member: Option<i64>, cost| SpendEntry {
            member: member.map(MemberId),
            ..entry(CallKind::Propose, 2, cost, CallOutcome::Ok)
        };
        let entries = vec![by(Some(4), 10), by(None, 3), by(Some(4), 5), by(Some(9), 7), by(Some(2), 1)];
        let mut ledger = MockSpendLedger::new();
        ledger.expect_entries().returning(move |_, _, _| Ok(entries.clone()));
        ledger.expect_total_since().returning(|_, _| Ok(MicroUsd(26)));
        let mut members = MockMemberRepo::new();
        members.expect_members().returning(|h| {
            let member = |id, name| Member {
                id: MemberId(id),
                household: h,
                name: MemberName::new(name).unwrap(),
                role: Role::Member,
                created_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
            };
            // Member 9 was removed since: still counted, as a former member.
            Ok(vec![member(2, "Bo"), member(4, "Ada")])
        });

        let report = spend(ledger, members).report(HouseholdId(1), None, None).await.unwrap();

        let got: Vec<(Option<i64>, Option<&str>, u64, MicroUsd)> = report
            .by_member
            .iter()
            .map(|m| {
                (
                    m.member.as_ref().map(|(id, _)| id.0),
                    m.member.as_ref().map(|(_, n)| n.as_str()),
                    m.totals.calls,
                    m.totals.cost,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (None, None, 1, MicroUsd(3)),
                (Some(2), Some("Bo"), 1, MicroUsd(1)),
                (Some(4), Some("Ada"), 2, MicroUsd(15)),
                (Some(9), Some("former member"), 1, MicroUsd(7)),
            ]
        );
    }

    #[tokio::test]
    async fn calls_and_failed_calls_are_counted_apart() {
        let entries = vec![
            entry(CallKind::Price, 1, 40, CallOutcome::Ok),
            entry(CallKind::Price, 2, 0, CallOutcome::Failed),
            entry(CallKind::Propose, 3, 7, CallOutcome::Failed),
            entry(CallKind::Propose, 4, 9, CallOutcome::Ok),
        ];
        let mut ledger = MockSpendLedger::new();
        let kept = entries.clone();
        ledger.expect_entries().returning(move |_, _, _| Ok(kept.clone()));
        ledger.expect_total_since().returning(|_, _| Ok(MicroUsd(56)));
        // Only the command line asked: no member to name, the members are not read.
        let spend = spend(ledger, MockMemberRepo::new());

        let report = spend.report(HouseholdId(1), None, None).await.unwrap();

        assert_eq!((report.total.calls, report.total.failed_calls, report.total.cost), (4, 2, MicroUsd(56)));
        let by_kind: Vec<(&str, u64, u64)> =
            report.by_kind.iter().map(|(k, t)| (k.as_str(), t.calls, t.failed_calls)).collect();
        assert_eq!(by_kind, [("price", 2, 1), ("propose", 2, 1)]);
        assert_eq!(report.by_month["2026-11"].failed_calls, 2);
        assert_eq!(report.entries, entries);
    }
}
