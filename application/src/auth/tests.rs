//! Authentication against mocked ports: tokens and sessions (expiry, scope, touching), sign-in (the same
//! answer and the same work for an unknown name and a wrong password) and its throttle.

use super::*;
use crate::ports::clock::MockClock;
use crate::ports::households::MockHouseholdRepo;
use crate::ports::people::{
    ApiToken, MockInvitationRepo, MockMemberRepo, MockPasswordHasher, MockSecretSource, MockSessionRepo, MockTokenRepo,
    Session,
};
use chrono::Duration;
use std::sync::atomic::{AtomicUsize, Ordering};
use trove_domain::testing::now;

pub(crate) fn ada(role: Role) -> Member {
    Member {
        id: MemberId(7),
        household: HouseholdId(3),
        name: MemberName::new("Ada").unwrap(),
        role,
        created_at: now(),
    }
}

/// The ports with nothing expected of them; each test sets what it needs.
pub(crate) struct Mocks {
    pub households: MockHouseholdRepo,
    pub members: MockMemberRepo,
    pub invitations: MockInvitationRepo,
    pub sessions: MockSessionRepo,
    pub tokens: MockTokenRepo,
    pub hasher: MockPasswordHasher,
    pub secrets: MockSecretSource,
    pub clock: MockClock,
    /// The failed sign-ins, in memory (the store's behaviour, so the throttle's rule is exercised whole).
    pub failures: Arc<MemoryFailures>,
    pub hashing: Jobs,
}

/// [`SignInFailures`] in memory: every failure as `(name, address, at)`.
#[derive(Debug, Default)]
pub(crate) struct MemoryFailures(Mutex<Vec<(String, ClientAddress, Timestamp)>>);

#[async_trait::async_trait]
impl SignInFailures for MemoryFailures {
    async fn recent_failures(
        &self,
        name: &str,
        from: &ClientAddress,
        since: Timestamp,
        most: usize,
    ) -> Result<throttle::RecentFailures, RepoError> {
        let all = self.0.lock().unwrap();
        let pick = |keep: &dyn Fn(&(String, ClientAddress, Timestamp)) -> bool| -> Vec<Timestamp> {
            let mut t: Vec<Timestamp> = all.iter().filter(|f| f.2 > since && keep(f)).map(|f| f.2).collect();
            t.sort_unstable_by(|a, b| b.cmp(a));
            t.truncate(most);
            t
        };
        Ok(throttle::RecentFailures {
            name_here: pick(&|f| f.0 == name && &f.1 == from),
            here: pick(&|f| &f.1 == from),
            name: pick(&|f| f.0 == name),
        })
    }

    async fn record_failure(
        &self,
        name: &str,
        from: &ClientAddress,
        at: Timestamp,
        forget_before: Timestamp,
    ) -> Result<(), RepoError> {
        let mut all = self.0.lock().unwrap();
        all.retain(|f| f.2 >= forget_before);
        all.push((name.to_owned(), from.clone(), at));
        Ok(())
    }

    async fn forget_failures(&self, name: &str, from: &ClientAddress) -> Result<(), RepoError> {
        self.0.lock().unwrap().retain(|f| !(f.0 == name && &f.1 == from));
        Ok(())
    }
}

/// The address the tests sign in from, unless they say otherwise.
pub(crate) fn home() -> ClientAddress {
    ClientAddress::of("192.0.2.1".parse().unwrap())
}

impl Mocks {
    pub fn new(at: Timestamp) -> Self {
        let mut clock = MockClock::new();
        clock.expect_now().returning(move || at);
        let mut secrets = MockSecretSource::new();
        secrets.expect_new_secret().returning(|| Ok("s".repeat(43)));
        Self {
            households: MockHouseholdRepo::new(),
            members: MockMemberRepo::new(),
            invitations: MockInvitationRepo::new(),
            sessions: MockSessionRepo::new(),
            tokens: MockTokenRepo::new(),
            hasher: MockPasswordHasher::new(),
            secrets,
            clock,
            failures: Arc::default(),
            hashing: Jobs::new(2, 8).doing("sign-ins"),
        }
    }

    pub fn ports(self) -> PeoplePorts {
        PeoplePorts {
            households: Arc::new(self.households),
            members: Arc::new(self.members),
            invitations: Arc::new(self.invitations),
            sessions: Arc::new(self.sessions),
            tokens: Arc::new(self.tokens),
            hasher: Arc::new(self.hasher),
            secrets: Arc::new(self.secrets),
            clock: Arc::new(self.clock),
            token_checks: Arc::default(),
            failures: self.failures,
            hashing: self.hashing,
        }
    }
}

fn token(scope: Scope, expires_at: Option<Timestamp>, last_used_at: Option<Timestamp>) -> ApiToken {
    ApiToken {
        id: TokenId(5),
        member: MemberId(7),
        name: "script".into(),
        scope,
        created_at: now() - Duration::days(1),
        expires_at,
        last_used_at,
    }
}

#[tokio::test]
async fn a_token_stands_for_its_member_until_it_expires_and_its_use_is_recorded() {
    let mut m = Mocks::new(now());
    m.tokens
        .expect_token()
        .withf(|h| h == hash_token("good"))
        .returning(|_| Ok(Some((token(Scope::Read, Some(now() + Duration::days(1)), None), ada(Role::Member)))));
    m.tokens
        .expect_token()
        .withf(|h| h == hash_token("old"))
        .returning(|_| Ok(Some((token(Scope::Write, Some(now()), None), ada(Role::Member)))));
    m.tokens.expect_token().returning(|_| Ok(None));
    m.tokens.expect_touch_token().withf(|id, at| *id == TokenId(5) && *at == now()).times(1).returning(|_, _| Ok(()));
    let auth = Auth::new(&m.ports());
    let caller = auth.by_token("good").await.unwrap().unwrap();
    assert_eq!(
        caller,
        Caller {
            household: HouseholdId(3),
            member: MemberId(7),
            role: Role::Member,
            access: Access::Token { id: TokenId(5), scope: Scope::Read }
        }
    );
    assert_eq!(auth.by_token("old").await.unwrap(), None);
    assert_eq!(auth.by_token("unknown").await.unwrap(), None);
    assert_eq!(auth.by_token("").await.unwrap(), None);
}

/// A token's check is reused for [`TOKEN_CACHE_TTL`]: within it the store is not asked again; after it a
/// revoked token is refused.
#[tokio::test]
async fn a_revoked_token_stops_working_once_its_cached_check_is_older_than_the_ttl() {
    let mut m = Mocks::new(now());
    let at = Arc::new(Mutex::new(now()));
    let clock_at = at.clone();
    m.clock = MockClock::new();
    m.clock.expect_now().returning(move || *clock_at.lock().unwrap());
    let (revoked, reads) = (Arc::new(std::sync::atomic::AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    revocable_token(&mut m, revoked.clone(), reads.clone());
    let auth = Auth::new(&m.ports());
    assert!(auth.by_token("good").await.unwrap().is_some());
    assert!(auth.by_token("good").await.unwrap().is_some());
    assert_eq!(reads.load(Ordering::SeqCst), 1, "the second check came from the cache");

    revoked.store(true, Ordering::SeqCst);
    *at.lock().unwrap() = now() + TOKEN_CACHE_TTL - Duration::milliseconds(1);
    assert!(auth.by_token("good").await.unwrap().is_some(), "within the TTL the cached check stands");
    *at.lock().unwrap() = now() + TOKEN_CACHE_TTL;
    assert_eq!(auth.by_token("good").await.unwrap(), None, "past the TTL the revocation is seen");
    assert_eq!(reads.load(Ordering::SeqCst), 2);
    // A refused token is not kept: once it is known again (say, a fresh row), it works at once.
    revoked.store(false, Ordering::SeqCst);
    assert!(auth.by_token("good").await.unwrap().is_some());
}

/// A store whose token 5 (Ada's) is there until `revoked`, counting its reads.
fn revocable_token(m: &mut Mocks, revoked: Arc<std::sync::atomic::AtomicBool>, reads: Arc<AtomicUsize>) {
    m.tokens.expect_token().returning(move |_| {
        reads.fetch_add(1, Ordering::SeqCst);
        Ok((!revoked.load(Ordering::SeqCst)).then(|| (token(Scope::Write, None, Some(now())), ada(Role::Member))))
    });
    m.tokens.expect_touch_token().returning(|_, _| Ok(()));
}

fn pushed_checks() -> Arc<TokenChecks> {
    let mut announcer = crate::ports::access::MockAccessChanges::new();
    announcer.expect_pushed().return_const(true);
    Arc::new(TokenChecks::announced_by(Arc::new(announcer)))
}

#[tokio::test]
async fn a_change_heard_from_another_process_ends_a_cached_check_at_once() {
    let mut m = Mocks::new(now());
    let (revoked, reads) = (Arc::new(std::sync::atomic::AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    revocable_token(&mut m, revoked.clone(), reads.clone());
    let checks = pushed_checks();
    assert_eq!(checks.ttl(), TOKEN_CACHE_TTL_PUSHED);
    let mut ports = m.ports();
    ports.token_checks = checks.clone();
    let auth = Auth::new(&ports);
    assert!(auth.by_token("good").await.unwrap().is_some());
    // Revoked by another process: until this one hears of it, its cached check stands.
    revoked.store(true, Ordering::SeqCst);
    assert!(auth.by_token("good").await.unwrap().is_some());
    checks.forget(AccessChange::Member(MemberId(8)));
    assert!(auth.by_token("good").await.unwrap().is_some(), "another member's change forgets nothing of Ada's");
    checks.forget(AccessChange::Token(TokenId(5)));
    assert_eq!(auth.by_token("good").await.unwrap(), None, "heard: refused at once");
    assert_eq!(reads.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_check_read_while_a_change_was_heard_is_not_kept() {
    let mut m = Mocks::new(now());
    let checks = pushed_checks();
    let reads = Arc::new(AtomicUsize::new(0));
    let (heard, counted) = (checks.clone(), reads.clone());
    // The first read of the store races a revocation heard meanwhile.
    m.tokens.expect_token().returning(move |_| {
        if counted.fetch_add(1, Ordering::SeqCst) == 0 {
            heard.forget(AccessChange::Token(TokenId(5)));
        }
        Ok(Some((token(Scope::Write, None, Some(now())), ada(Role::Member))))
    });
    m.tokens.expect_touch_token().returning(|_, _| Ok(()));
    let mut ports = m.ports();
    ports.token_checks = checks.clone();
    let auth = Auth::new(&ports);
    assert!(auth.by_token("good").await.unwrap().is_some());
    assert!(auth.by_token("good").await.unwrap().is_some());
    assert_eq!(reads.load(Ordering::SeqCst), 2, "the raced check was not kept: the next request read the store");
    assert!(auth.by_token("good").await.unwrap().is_some());
    assert_eq!(reads.load(Ordering::SeqCst), 2, "a check read in quiet is kept");
}

#[tokio::test]
async fn ending_access_forgets_here_and_tells_the_other_processes() {
    let mut announcer = crate::ports::access::MockAccessChanges::new();
    announcer.expect_pushed().return_const(true);
    announcer
        .expect_announce()
        .withf(|c| *c == AccessChange::Member(MemberId(7)))
        .times(1)
        .returning(|_| Err(RepoError::Unexpected(anyhow::anyhow!("connection lost"))));
    let checks = TokenChecks::announced_by(Arc::new(announcer));
    let before = checks.generation();
    // A failed announcement is logged, not an error: the change itself is done.
    checks.end(AccessChange::Member(MemberId(7))).await;
    assert_eq!(checks.generation(), before + 1);
    assert_eq!(TokenChecks::default().ttl(), TOKEN_CACHE_TTL, "without pushed changes, the short TTL");
}

#[tokio::test]
async fn a_read_token_reads_only_and_roles_bound_the_rest() {
    let caller = |role, access| Caller { household: HouseholdId(1), member: MemberId(1), role, access };
    let read = Access::Token { id: TokenId(1), scope: Scope::Read };
    let write = Access::Token { id: TokenId(1), scope: Scope::Write };
    let session = Access::Session(SessionId(1));
    assert!(caller(Role::Owner, read).may(Permission::Read));
    assert!(matches!(
        caller(Role::Owner, read).require(Permission::WriteInventory),
        Err(Error::Forbidden(Forbidden::ReadToken))
    ));
    assert!(matches!(
        caller(Role::Owner, read).require(Permission::OwnTokens),
        Err(Error::Forbidden(Forbidden::ReadToken))
    ));
    assert!(caller(Role::Member, write).may(Permission::CallModel));
    assert!(matches!(
        caller(Role::Member, session).require(Permission::ManageHousehold),
        Err(Error::Forbidden(Forbidden::Role(Role::Owner)))
    ));
    assert!(matches!(
        caller(Role::Viewer, write).require(Permission::WriteInventory),
        Err(Error::Forbidden(Forbidden::Role(Role::Member)))
    ));
    assert_eq!(Error::from(Forbidden::Role(Role::Owner)).to_string(), "this needs the owner role");
}

#[tokio::test]
async fn a_session_slides_while_used_and_ends_after_thirty_idle_days() {
    let mut m = Mocks::new(now());
    let session = |last_seen| Session { id: SessionId(2), member: ada(Role::Viewer), last_seen };
    m.sessions.expect_session().withf(|h| h == hash_token("fresh")).returning(move |_| Ok(Some(session(now()))));
    m.sessions
        .expect_session()
        .withf(|h| h == hash_token("day-old"))
        .returning(move |_| Ok(Some(session(now() - Duration::days(1)))));
    m.sessions
        .expect_session()
        .withf(|h| h == hash_token("idle"))
        .returning(move |_| Ok(Some(session(now() - Duration::days(30)))));
    // Only the day-old session is written: the fresh one was touched less than a minute ago.
    m.sessions
        .expect_touch_session()
        .withf(|id, at| *id == SessionId(2) && *at == now())
        .times(1)
        .returning(|_, _| Ok(()));
    let auth = Auth::new(&m.ports());
    let fresh = auth.by_session("fresh").await.unwrap().unwrap();
    assert_eq!((fresh.role, fresh.access), (Role::Viewer, Access::Session(SessionId(2))));
    assert!(auth.by_session("day-old").await.unwrap().is_some());
    assert_eq!(auth.by_session("idle").await.unwrap(), None);
}

/// A hasher that counts its checks and knows one password.
fn counting_hasher(checks: Arc<AtomicUsize>) -> MockPasswordHasher {
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_hash().returning(|p| Ok(format!("hash:{p}")));
    hasher.expect_verify().returning(move |p, h| {
        checks.fetch_add(1, Ordering::SeqCst);
        h == format!("hash:{p}")
    });
    hasher
}

fn ada_with_password(m: &mut Mocks) {
    m.members.expect_member_by_name().returning(|n| {
        Ok((n.key() == "ada").then(|| (ada(Role::Member), Some("hash:correct horse battery".to_owned()))))
    });
}

#[tokio::test]
async fn an_unknown_name_and_a_wrong_password_fail_alike_after_the_same_work() {
    let checks = Arc::new(AtomicUsize::new(0));
    let mut m = Mocks::new(now());
    m.hasher = counting_hasher(checks.clone());
    ada_with_password(&mut m);
    m.sessions
        .expect_add_session()
        .withf(|member, _, at| *member == MemberId(7) && *at == now())
        .times(1)
        .returning(|_, _, _| Ok(SessionId(1)));
    let auth = Auth::new(&m.ports());

    let unknown = auth.sign_in("nobody", "correct horse battery", &home()).await.unwrap_err();
    let wrong = auth.sign_in("Ada", "wrong horse battery", &home()).await.unwrap_err();
    assert_eq!(unknown.to_string(), wrong.to_string());
    assert!(matches!(unknown, Error::SignInFailed) && matches!(wrong, Error::SignInFailed));
    assert_eq!(checks.load(Ordering::SeqCst), 2, "both failures checked a password hash");

    let signed = auth.sign_in(" ada ", "correct horse battery", &home()).await.unwrap();
    assert_eq!(signed.member.id, MemberId(7));
    assert_eq!(signed.expires_at, now() + people::SESSION_IDLE);
    assert!(!signed.secret.is_empty());
}

#[tokio::test]
async fn five_failures_refuse_the_name_even_with_the_right_password() {
    let checks = Arc::new(AtomicUsize::new(0));
    let mut m = Mocks::new(now());
    m.hasher = counting_hasher(checks.clone());
    ada_with_password(&mut m);
    m.sessions.expect_add_session().never();
    let auth = Auth::new(&m.ports());
    for _ in 0..5 {
        assert!(matches!(auth.sign_in("ada", "wrong password!", &home()).await, Err(Error::SignInFailed)));
    }
    match auth.sign_in("ADA", "correct horse battery", &home()).await {
        Err(Error::Throttled { retry_after_secs }) => assert_eq!(retry_after_secs, 15 * 60),
        other => panic!("expected throttled, got {other:?}"),
    }
    assert_eq!(checks.load(Ordering::SeqCst), 5, "a refused name costs no hash");
    // Another name is not refused.
    assert!(matches!(auth.sign_in("grace", "whatever password", &home()).await, Err(Error::SignInFailed)));
}

fn address(text: &str) -> ClientAddress {
    ClientAddress::of(text.parse().unwrap())
}

#[tokio::test]
async fn a_stranger_failing_for_a_name_does_not_lock_its_member_out() {
    let checks = Arc::new(AtomicUsize::new(0));
    let mut m = Mocks::new(now());
    m.hasher = counting_hasher(checks.clone());
    ada_with_password(&mut m);
    m.sessions.expect_add_session().times(1).returning(|_, _, _| Ok(SessionId(1)));
    let auth = Auth::new(&m.ports());
    let stranger = address("203.0.113.9");
    for _ in 0..throttle::PER_NAME_AND_ADDRESS {
        assert!(matches!(auth.sign_in("ada", "wrong password!", &stranger).await, Err(Error::SignInFailed)));
    }
    assert!(matches!(auth.sign_in("ada", "correct horse battery", &stranger).await, Err(Error::Throttled { .. })));
    // Ada, from home, with her password: in.
    let signed = auth.sign_in("ada", "correct horse battery", &home()).await.unwrap();
    assert_eq!(signed.member.id, MemberId(7));
}

#[tokio::test]
async fn one_password_sprayed_over_many_names_from_one_address_is_refused() {
    let checks = Arc::new(AtomicUsize::new(0));
    let mut m = Mocks::new(now());
    m.hasher = counting_hasher(checks.clone());
    ada_with_password(&mut m);
    m.sessions.expect_add_session().never();
    let auth = Auth::new(&m.ports());
    let sprayer = address("2001:db8:7:7::1");
    for i in 0..throttle::PER_ADDRESS {
        let name = format!("name{i}");
        assert!(matches!(auth.sign_in(&name, "Summer2026!", &sprayer).await, Err(Error::SignInFailed)), "{name}");
    }
    // Every name from that address now waits, even one never tried, and even from another host of its /64.
    let other_host = address("2001:db8:7:7:ffff::2");
    assert!(matches!(auth.sign_in("ada", "correct horse battery", &other_host).await, Err(Error::Throttled { .. })));
    assert_eq!(checks.load(Ordering::SeqCst), throttle::PER_ADDRESS, "refused attempts cost no hash");
}

/// A password hasher whose checks wait until the test opens the gate.
fn gated_hasher(gate: Arc<(Mutex<bool>, std::sync::Condvar)>) -> MockPasswordHasher {
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_hash().returning(|p| Ok(format!("hash:{p}")));
    hasher.expect_verify().returning(move |p, h| {
        let (open, opened) = &*gate;
        let mut is_open = open.lock().unwrap();
        while !*is_open {
            is_open = opened.wait(is_open).unwrap();
        }
        h == format!("hash:{p}")
    });
    hasher
}

#[tokio::test]
async fn a_flood_of_sign_ins_waits_in_a_short_queue_and_the_rest_are_refused_at_once() {
    let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let mut m = Mocks::new(now());
    m.hasher = gated_hasher(gate.clone());
    ada_with_password(&mut m);
    // One password checked at a time, one waiting.
    m.hashing = Jobs::new(1, 1).doing("sign-ins");
    let hashing = m.hashing.clone();
    let auth = Auth::new(&m.ports());
    // The decoy hash (for unknown names) is made once, before the gate matters.
    auth.decoy().await.unwrap();

    let mut running = Vec::new();
    for i in 0..2 {
        let auth = auth.clone();
        running.push(tokio::spawn(async move { auth.sign_in(&format!("flood{i}"), "x", &home()).await }));
    }
    while hashing.waiting() < 1 {
        tokio::task::yield_now().await;
    }
    // The next ones find the worker busy and the queue full: refused without a turn, with a wait, and the
    // refusal is held before it is answered (so a client that ignores the wait is paced by its own waiting).
    let mut refused = Vec::new();
    for i in 2..6 {
        let auth = auth.clone();
        refused.push(tokio::spawn(async move {
            let asked = std::time::Instant::now();
            let answer = auth.sign_in(&format!("flood{i}"), "x", &home()).await;
            (answer, asked.elapsed())
        }));
    }
    for r in refused {
        let (answer, took) = r.await.unwrap();
        match answer {
            Err(Error::Busy { work: "sign-ins", retry_after_s }) => assert!(retry_after_s >= 1),
            other => panic!("expected busy, got {other:?}"),
        }
        assert!(took >= REFUSAL_HOLD, "a refusal answered after {took:?}, before the hold");
    }
    // Held refusals hold no turn: the queue still has the one waiting sign-in only.
    assert_eq!(hashing.waiting(), 1);
    {
        let (open, opened) = &*gate;
        *open.lock().unwrap() = true;
        opened.notify_all();
    }
    for r in running {
        assert!(matches!(r.await.unwrap(), Err(Error::SignInFailed)));
    }
}

#[tokio::test]
async fn the_command_line_token_belongs_to_the_first_owner_made_on_first_use() {
    let mut m = Mocks::new(now());
    m.households.expect_ensure_household().withf(|n| n == "home").returning(|_| Ok(HouseholdId(3)));
    m.members.expect_first_owner().returning(|_| Ok(None));
    // "home owner" is taken in another household: the next name is tried.
    m.members
        .expect_add_member()
        .withf(|n| n.name.as_str() == "home owner")
        .returning(|_| Err(RepoError::Conflict(Conflict::NameTaken)));
    m.members
        .expect_add_member()
        .withf(|n| n.name.as_str() == "home owner 2" && n.role == Role::Owner && n.password_hash.is_none())
        .returning(|n| {
            Ok(Member { id: MemberId(9), household: n.household, name: n.name, role: n.role, created_at: n.created_at })
        });
    m.tokens
        .expect_add_token()
        .withf(|t| {
            t.member == MemberId(9)
                && t.scope == Scope::Write
                && t.hash == hash_token(&format!("trove_{}", "s".repeat(43)))
                && t.name == "laptop"
        })
        .times(1)
        .returning(|t| {
            Ok(ApiToken {
                id: TokenId(1),
                member: t.member,
                name: t.name,
                scope: t.scope,
                created_at: t.created_at,
                expires_at: None,
                last_used_at: None,
            })
        });
    let auth = Auth::new(&m.ports());
    let (household, token) = auth.issue(" home ", "laptop").await.unwrap();
    // The token is the one format of every API token, from the secret source (Mocks: 43 "s").
    assert_eq!((household, token), (HouseholdId(3), format!("trove_{}", "s".repeat(43))));
    assert!(matches!(auth.issue("  ", "laptop").await, Err(Error::Invalid(_))));
    assert!(matches!(auth.issue("home", " ").await, Err(Error::Invalid(_))));
}
