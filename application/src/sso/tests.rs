//! Single sign-on against mocked ports: the state must be the browser's and is used once; the provider's refusal
//! writes nothing; a returning account is found by issuer and subject; a first sign-in takes its household and
//! role from a group or an invitation, and is refused with neither; a taken name gets a number.

use super::*;
use crate::auth::tests::{Mocks, ada};
use crate::ports::people::{Invitation, Member};
use crate::ports::sso::{Authorization, Identity, MockOpenIdProvider, MockSsoRepo};
use std::sync::Mutex;
use trove_domain::HouseholdId;
use trove_domain::people::{self, MemberId, MemberName, Role};
use trove_domain::testing::now;

fn rules() -> SsoRules {
    SsoRules {
        household: "home".into(),
        groups: GroupRoles { owner: vec!["admins".into()], member: vec!["family".into()], viewer: vec![] },
    }
}

fn identity(subject: &str, groups: &[&str]) -> Identity {
    Identity {
        issuer: "https://id.example".into(),
        subject: subject.into(),
        username: Some("ada".into()),
        name: Some("Ada Lovelace".into()),
        email: Some("ada@example.org".into()),
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
    }
}

fn pending(invitation: Option<&str>) -> PendingSignIn {
    PendingSignIn {
        nonce: "nonce".into(),
        verifier: "verifier".into(),
        invitation: invitation.map(hash_token),
        expires_at: now() + SIGN_IN_VALID_FOR,
    }
}

fn provider_saying(who: Identity) -> MockOpenIdProvider {
    let mut p = MockOpenIdProvider::new();
    p.expect_identify()
        .withf(|code, verifier, nonce| code == "code" && verifier == "verifier" && nonce == "nonce")
        .returning(move |_, _, _| Ok(who.clone()));
    p
}

fn use_cases(mut m: Mocks, provider: MockOpenIdProvider, store: MockSsoRepo, rules: SsoRules) -> SingleSignOn {
    m.sessions.expect_add_session().returning(|_, _, _| Ok(people::SessionId(1)));
    SingleSignOn::new(&m.ports(), Arc::new(provider), Arc::new(store), rules)
}

fn invitation(role: Role) -> Invitation {
    Invitation {
        household: HouseholdId(9),
        role,
        created_at: now(),
        used: false,
        id: people::InvitationId(1),
        revoked: false,
        created_by: None,
        maker: None,
    }
}

#[tokio::test]
async fn a_start_keeps_the_nonce_and_verifier_under_the_states_hash() {
    let mut provider = MockOpenIdProvider::new();
    provider.expect_authorization().returning(|| {
        Ok(Authorization {
            url: "https://id.example/auth?state=st".into(),
            state: "st".into(),
            nonce: "n".into(),
            verifier: "v".into(),
        })
    });
    let mut store = MockSsoRepo::new();
    store
        .expect_add_sign_in()
        .withf(|hash, p, _| hash == hash_token("st") && p.nonce == "n" && p.verifier == "v" && p.invitation.is_none())
        .times(1)
        .returning(|_, _, _| Ok(()));
    let sso = use_cases(Mocks::new(now()), provider, store, rules());
    let r = sso.start(None).await.unwrap();
    assert_eq!(r, Redirect { url: "https://id.example/auth?state=st".into(), state: "st".into() });
}

#[tokio::test]
async fn a_start_from_a_used_invitation_is_refused_before_the_provider_is_asked() {
    let mut m = Mocks::new(now());
    m.invitations.expect_invitation().returning(|_| Ok(Some(Invitation { used: true, ..invitation(Role::Member) })));
    let sso = use_cases(m, MockOpenIdProvider::new(), MockSsoRepo::new(), rules());
    let err = sso.start(Some("code")).await.unwrap_err();
    assert!(matches!(err, Error::Refused(Refusal::InvitationGone(people::InvitationGone::Used))), "{err:?}");
}

#[tokio::test]
async fn a_state_not_the_browsers_or_already_used_is_refused_and_the_provider_is_not_asked() {
    let mut store = MockSsoRepo::new();
    store.expect_take_sign_in().returning(|_, _| Ok(None));
    let sso = use_cases(Mocks::new(now()), MockOpenIdProvider::new(), store, rules());
    let err = sso.finish("st", "code", Some("other")).await.unwrap_err();
    assert!(matches!(err, Error::SsoStateMismatch), "{err:?}");
    let err = sso.finish("st", "code", None).await.unwrap_err();
    assert!(matches!(err, Error::SsoStateMismatch), "{err:?}");
    let err = sso.finish("st", "code", Some("st")).await.unwrap_err();
    assert!(matches!(err, Error::Refused(Refusal::SsoSignInGone)), "{err:?}");
}

#[tokio::test]
async fn the_providers_refusal_is_a_failed_sign_in_that_writes_nothing() {
    let mut provider = MockOpenIdProvider::new();
    provider.expect_identify().returning(|_, _, _| Err(SsoError::Refused("the ID token has expired".into())));
    let mut store = MockSsoRepo::new();
    store.expect_take_sign_in().returning(|_, _| Ok(Some(pending(None))));
    // No member lookup, no member added, no session: the mocks would panic.
    let sso = SingleSignOn::new(&Mocks::new(now()).ports(), Arc::new(provider), Arc::new(store), rules());
    let err = sso.finish("st", "code", Some("st")).await.unwrap_err();
    assert!(matches!(&err, Error::SsoFailed(r) if r.contains("expired")), "{err:?}");
}

#[tokio::test]
async fn a_returning_account_is_found_by_issuer_and_subject() {
    let mut store = MockSsoRepo::new();
    store.expect_take_sign_in().returning(|_, _| Ok(Some(pending(None))));
    store
        .expect_member_by_identity()
        .withf(|iss, sub, _| iss == "https://id.example" && sub == "s-1")
        .returning(|_, _, _| Ok(Some((ada(Role::Member), true))));
    let sso = use_cases(Mocks::new(now()), provider_saying(identity("s-1", &["family"])), store, rules());
    let signed = sso.finish("st", "code", Some("st")).await.unwrap();
    assert_eq!(signed.member, ada(Role::Member));
}

#[tokio::test]
async fn a_member_a_group_brought_in_is_refused_once_in_no_mapped_group() {
    let mut store = MockSsoRepo::new();
    store.expect_take_sign_in().returning(|_, _| Ok(Some(pending(None))));
    store.expect_member_by_identity().returning(|_, _, _| Ok(Some((ada(Role::Member), true))));
    let sso = use_cases(Mocks::new(now()), provider_saying(identity("s-1", &["staff"])), store, rules());
    let err = sso.finish("st", "code", Some("st")).await.unwrap_err();
    assert!(matches!(err, Error::Forbidden(Forbidden::NoSsoAccess)), "{err:?}");
    // A member an invitation brought in needs no group.
    let mut store = MockSsoRepo::new();
    store.expect_take_sign_in().returning(|_, _| Ok(Some(pending(None))));
    store.expect_member_by_identity().returning(|_, _, _| Ok(Some((ada(Role::Member), false))));
    let sso = use_cases(Mocks::new(now()), provider_saying(identity("s-1", &["staff"])), store, rules());
    assert!(sso.finish("st", "code", Some("st")).await.is_ok());
}

/// What a store was asked to add: the invitation's hash and the member.
type Added = Arc<Mutex<Vec<(Option<String>, NewMember)>>>;

/// A store that adds members, refusing the names in `taken`; it records what it was asked.
fn adding_store(pending: PendingSignIn, taken: &'static [&'static str], added: Added) -> MockSsoRepo {
    let mut store = MockSsoRepo::new();
    store.expect_take_sign_in().returning(move |_, _| Ok(Some(pending.clone())));
    store.expect_member_by_identity().returning(|_, _, _| Ok(None));
    store.expect_add_member_with_identity().returning(move |inv, new, iss, sub| {
        assert_eq!((iss, sub), ("https://id.example", "s-2"));
        added.lock().unwrap().push((inv.clone(), new.clone()));
        if taken.contains(&new.name.as_str()) {
            return Err(RepoError::Conflict(Conflict::NameTaken));
        }
        Ok(Member { id: MemberId(40), household: new.household, name: new.name, role: new.role, created_at: now() })
    });
    store
}

#[tokio::test]
async fn a_first_sign_in_joins_the_household_its_group_maps_to_with_the_highest_role() {
    let mut m = Mocks::new(now());
    m.households.expect_ensure_household().withf(|n| n == "home").returning(|_| Ok(HouseholdId(5)));
    let added = Arc::default();
    let store = adding_store(pending(None), &["ada"], Arc::clone(&added));
    let sso = use_cases(m, provider_saying(identity("s-2", &["family", "admins"])), store, rules());
    let signed = sso.finish("st", "code", Some("st")).await.unwrap();
    assert_eq!((signed.member.household, signed.member.role), (HouseholdId(5), Role::Owner));
    assert_eq!(signed.member.name, MemberName::new("ada 2").unwrap(), "the name was taken: the next one");
    let added = added.lock().unwrap();
    assert_eq!(added.len(), 2);
    assert!(added.iter().all(|(inv, new)| inv.is_none() && new.password_hash.is_none()));
}

#[tokio::test]
async fn a_first_sign_in_from_an_invitation_takes_its_household_and_role() {
    let mut m = Mocks::new(now());
    m.invitations
        .expect_invitation()
        .withf(|h| h == hash_token("inv"))
        .returning(|_| Ok(Some(invitation(Role::Viewer))));
    let added = Arc::default();
    let store = adding_store(pending(Some("inv")), &[], Arc::clone(&added));
    // In a group that maps to owner: the invitation the person followed wins.
    let sso = use_cases(m, provider_saying(identity("s-2", &["admins"])), store, rules());
    let signed = sso.finish("st", "code", Some("st")).await.unwrap();
    assert_eq!((signed.member.household, signed.member.role), (HouseholdId(9), Role::Viewer));
    assert_eq!(added.lock().unwrap()[0].0.as_deref(), Some(hash_token("inv").as_str()));
}

#[tokio::test]
async fn a_first_sign_in_with_no_group_and_no_invitation_is_refused_and_adds_no_one() {
    let mut store = MockSsoRepo::new();
    store.expect_take_sign_in().returning(|_, _| Ok(Some(pending(None))));
    store.expect_member_by_identity().returning(|_, _, _| Ok(None));
    let sso = use_cases(Mocks::new(now()), provider_saying(identity("s-2", &["staff"])), store, rules());
    let err = sso.finish("st", "code", Some("st")).await.unwrap_err();
    assert!(matches!(err, Error::Forbidden(Forbidden::NoSsoAccess)), "{err:?}");
}
