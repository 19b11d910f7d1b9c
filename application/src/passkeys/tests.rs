//! Passkeys against mocked ports: a ceremony is the caller's and used once; sign-in failures count toward the
//! throttle that password sign-ins use; a sign-up checks the invitation at both steps; a member's last way in
//! is kept.

use super::*;
use crate::auth::tests::{Mocks, ada, home};
use crate::ports::passkeys::{
    CeremonyState, CredentialId, MockPasskeyCeremonies, MockPasskeyRepo, PasskeyKey, StoredPasskey,
};
use crate::ports::people::{Invitation, Member};
use trove_domain::HouseholdId;
use trove_domain::people::{MemberId, Role};
use trove_domain::testing::now;

fn key(id: &str) -> PasskeyKey {
    PasskeyKey { credential: CredentialId(id.into()), serialised: format!("key {id}") }
}

fn stored(id: i64, member: MemberId, credential: &str) -> StoredPasskey {
    StoredPasskey {
        passkey: Passkey { id: PasskeyId(id), member, name: "phone".into(), created_at: now(), last_used_at: None },
        user: UserHandle("u".repeat(32)),
        key: key(credential),
    }
}

fn started() -> Started {
    Started { options: r#"{"publicKey":{}}"#.into(), state: CeremonyState("state".into()) }
}

fn sign_in(member: Option<MemberId>) -> Ceremony {
    Ceremony {
        purpose: Purpose::SignIn { name: "ada".into(), member },
        user: None,
        state: CeremonyState("state".into()),
        expires_at: now() + CEREMONY_VALID_FOR,
    }
}

fn caller(member: &Member) -> Caller {
    Caller {
        household: member.household,
        member: member.id,
        role: member.role,
        access: crate::auth::Access::Session(people::SessionId(1)),
    }
}

fn use_cases(m: Mocks, ceremonies: MockPasskeyCeremonies, store: MockPasskeyRepo) -> Passkeys {
    let ports = m.ports();
    let auth = Auth::new(&ports);
    Passkeys::new(&ports, &auth, Arc::new(ceremonies), Arc::new(store))
}

#[tokio::test]
async fn a_sign_up_is_refused_at_its_start_for_a_used_code_or_a_taken_name() {
    let mut m = Mocks::new(now());
    let invitation = |used| Invitation {
        household: HouseholdId(3),
        role: Role::Member,
        created_at: now(),
        used,
        id: people::InvitationId(1),
        revoked: false,
        created_by: None,
        maker: None,
    };
    m.invitations.expect_invitation().withf(|h| h == hash_token("used")).returning(move |_| Ok(Some(invitation(true))));
    m.invitations
        .expect_invitation()
        .withf(|h| h == hash_token("good"))
        .returning(move |_| Ok(Some(invitation(false))));
    m.invitations.expect_invitation().returning(|_| Ok(None));
    m.members.expect_member_by_name().returning(|n| Ok((n.as_str() == "Ada").then(|| (ada(Role::Member), None))));
    let p = use_cases(m, MockPasskeyCeremonies::new(), MockPasskeyRepo::new());
    let err = p.start_sign_up("used", "Grace").await.unwrap_err();
    assert!(matches!(err, Error::Refused(Refusal::InvitationGone(people::InvitationGone::Used))), "{err:?}");
    let err = p.start_sign_up("nope", "Grace").await.unwrap_err();
    assert!(matches!(err, Error::Refused(Refusal::InvitationGone(people::InvitationGone::Unknown))), "{err:?}");
    let err = p.start_sign_up("good", "Ada").await.unwrap_err();
    assert!(matches!(err, Error::Refused(Refusal::NameTaken(_))), "{err:?}");
    let err = p.start_sign_up("good", " ").await.unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err:?}");
}

#[tokio::test]
async fn a_sign_up_keeps_its_ceremony_and_finishes_with_the_member_and_their_first_passkey() {
    let mut m = Mocks::new(now());
    m.invitations.expect_invitation().returning(|_| {
        Ok(Some(Invitation {
            household: HouseholdId(3),
            role: Role::Viewer,
            created_at: now(),
            used: false,
            id: people::InvitationId(1),
            revoked: false,
            created_by: None,
            maker: None,
        }))
    });
    m.members.expect_member_by_name().returning(|_| Ok(None));
    m.sessions.expect_add_session().times(1).returning(|_, _, _| Ok(people::SessionId(9)));
    let mut ceremonies = MockPasskeyCeremonies::new();
    ceremonies
        .expect_start_registration()
        .withf(|_, name, exclude| name == "Grace" && exclude.is_empty())
        .returning(|_, _, _| Ok(started()));
    ceremonies
        .expect_finish_registration()
        .withf(|state, credential| state.0 == "state" && credential == "{}")
        .returning(|_, _| Ok(key("c1")));
    let mut store = MockPasskeyRepo::new();
    let kept = Arc::new(std::sync::Mutex::new(None));
    let keep = kept.clone();
    store.expect_add_ceremony().times(1).returning(move |hash, c, _| {
        assert_eq!(hash, hash_token(&"s".repeat(43)));
        assert_eq!(c.expires_at, now() + CEREMONY_VALID_FOR);
        *keep.lock().unwrap() = Some(c);
        Ok(())
    });
    let take = kept.clone();
    store.expect_take_ceremony().times(1).returning(move |_, _| Ok(take.lock().unwrap().take()));
    store
        .expect_redeem_with_passkey()
        .withf(|code, member, passkey| {
            *code == hash_token("good")
                && member.name.as_str() == "Grace"
                && member.role == Role::Viewer
                && member.password_hash.is_none()
                && passkey.key == key("c1")
                && passkey.name == FIRST_PASSKEY_NAME
        })
        .times(1)
        .returning(|_, _, _| Ok(Member { name: MemberName::new("Grace").unwrap(), ..ada(Role::Viewer) }));
    let p = use_cases(m, ceremonies, store);
    let begun = p.start_sign_up("good", "Grace").await.unwrap();
    assert_eq!(begun.options, started().options);
    let signed = p.finish_sign_up(&begun.ceremony, "{}").await.unwrap();
    assert_eq!(signed.member.name.as_str(), "Grace");
}

#[tokio::test]
async fn an_unknown_or_expired_ceremony_is_gone_and_a_ceremony_of_another_kind_too() {
    let m = Mocks::new(now());
    let mut store = MockPasskeyRepo::new();
    store.expect_take_ceremony().withf(|h, _| h == hash_token("sign-in")).returning(|_, _| Ok(Some(sign_in(None))));
    store.expect_take_ceremony().returning(|_, _| Ok(None));
    let p = use_cases(m, MockPasskeyCeremonies::new(), store);
    for err in [
        p.finish_sign_in("unknown", "{}", &home()).await.unwrap_err(),
        p.finish_sign_up("unknown", "{}").await.unwrap_err(),
        p.finish_sign_up("sign-in", "{}").await.unwrap_err(),
        p.finish_add(&caller(&ada(Role::Member)), "unknown", "{}").await.unwrap_err(),
    ] {
        assert!(matches!(err, Error::Refused(Refusal::CeremonyGone)), "{err:?}");
    }
}

#[tokio::test]
async fn another_members_add_ceremony_is_gone_for_the_caller() {
    let m = Mocks::new(now());
    let mut store = MockPasskeyRepo::new();
    store.expect_take_ceremony().returning(|_, _| {
        Ok(Some(Ceremony {
            purpose: Purpose::Add { member: MemberId(8), name: "phone".into() },
            user: Some(UserHandle("u".repeat(32))),
            state: CeremonyState("state".into()),
            expires_at: now() + CEREMONY_VALID_FOR,
        }))
    });
    let p = use_cases(m, MockPasskeyCeremonies::new(), store);
    let err = p.finish_add(&caller(&ada(Role::Member)), "theirs", "{}").await.unwrap_err();
    assert!(matches!(err, Error::Refused(Refusal::CeremonyGone)), "{err:?}");
}

#[tokio::test]
async fn failed_passkey_sign_ins_count_toward_the_names_throttle_and_a_good_one_signs_in() {
    let mut m = Mocks::new(now());
    m.members.expect_member_by_name().returning(|_| Ok(Some((ada(Role::Member), None))));
    m.sessions.expect_add_session().times(1).returning(|_, _, _| Ok(people::SessionId(9)));
    let mut ceremonies = MockPasskeyCeremonies::new();
    ceremonies.expect_credential_of().returning(|c| Ok(CredentialId(c.to_owned())));
    ceremonies
        .expect_finish_authentication()
        .returning(|_, c, k| if c == "good" { Ok(k.clone()) } else { Err(PasskeyError::Rejected("signature".into())) });
    let mut store = MockPasskeyRepo::new();
    store.expect_take_ceremony().returning(|_, _| Ok(Some(sign_in(Some(MemberId(7))))));
    store.expect_passkeys().returning(|m| Ok(vec![stored(1, m, "good"), stored(2, m, "forged")]));
    store
        .expect_used_passkey()
        .withf(|id, k, at| *id == PasskeyId(1) && k.credential.0 == "good" && *at == now())
        .times(1)
        .returning(|_, _, _| Ok(()));
    let p = use_cases(m, ceremonies, store);
    // One success first: it signs in and forgets nothing it should not.
    let signed = p.finish_sign_in("c", "good", &home()).await.unwrap();
    assert_eq!(signed.member.id, MemberId(7));
    // A credential that is not among the member's, and one failing the check, both fail alike.
    for credential in ["someone else's", "forged", "forged", "forged", "forged"] {
        let err = p.finish_sign_in("c", credential, &home()).await.unwrap_err();
        assert!(matches!(err, Error::PasskeySignInFailed), "{err:?}");
    }
    let err = p.finish_sign_in("c", "good", &home()).await.unwrap_err();
    assert!(matches!(err, Error::Throttled { .. }), "{err:?}");
    // Passwords and passkeys share the throttle: the name is refused at the start too.
    let err = p.start_sign_in(" ADA ", &home()).await.unwrap_err();
    assert!(matches!(err, Error::Throttled { .. }), "{err:?}");
}

#[tokio::test]
async fn an_unknown_name_gets_made_up_options_and_never_signs_in() {
    let mut m = Mocks::new(now());
    m.members.expect_member_by_name().returning(|_| Ok(None));
    let mut ceremonies = MockPasskeyCeremonies::new();
    ceremonies
        .expect_start_authentication()
        .withf(|name, keys| name == "nobody" && keys.is_empty())
        .returning(|_, _| Ok(started()));
    ceremonies.expect_credential_of().returning(|c| Ok(CredentialId(c.to_owned())));
    let mut store = MockPasskeyRepo::new();
    store
        .expect_add_ceremony()
        .withf(|_, c, _| c.purpose == Purpose::SignIn { name: "nobody".into(), member: None })
        .returning(|_, _, _| Ok(()));
    let mut taken = sign_in(None);
    taken.purpose = Purpose::SignIn { name: "nobody".into(), member: None };
    store.expect_take_ceremony().returning(move |_, _| Ok(Some(taken.clone())));
    let p = use_cases(m, ceremonies, store);
    p.start_sign_in("nobody", &home()).await.unwrap();
    let err = p.finish_sign_in("c", "anything", &home()).await.unwrap_err();
    assert!(matches!(err, Error::PasskeySignInFailed), "{err:?}");
}

#[tokio::test]
async fn a_text_that_cannot_be_a_name_is_invalid_and_starts_nothing() {
    // No look-up, no ceremony, nothing kept: the mocks expect no call.
    let p = use_cases(Mocks::new(now()), MockPasskeyCeremonies::new(), MockPasskeyRepo::new());
    for name in ["a\u{0}b", "", "   ", &"x".repeat(500)] {
        let err = p.start_sign_in(name, &home()).await.unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{name:?}: {err:?}");
    }
}

#[tokio::test]
async fn bad_credential_json_is_invalid_and_a_failed_check_at_sign_up_is_refused() {
    let mut m = Mocks::new(now());
    m.invitations.expect_invitation().returning(|_| {
        Ok(Some(Invitation {
            household: HouseholdId(3),
            role: Role::Member,
            created_at: now(),
            used: false,
            id: people::InvitationId(1),
            revoked: false,
            created_by: None,
            maker: None,
        }))
    });
    let mut ceremonies = MockPasskeyCeremonies::new();
    ceremonies.expect_finish_registration().returning(|_, c| {
        Err(if c == "[" { PasskeyError::Malformed("eof".into()) } else { PasskeyError::Rejected("origin".into()) })
    });
    let mut store = MockPasskeyRepo::new();
    store.expect_take_ceremony().returning(|_, _| {
        Ok(Some(Ceremony {
            purpose: Purpose::SignUp { invitation: hash_token("good"), name: "Grace".into() },
            user: Some(UserHandle("u".repeat(32))),
            state: CeremonyState("state".into()),
            expires_at: now() + CEREMONY_VALID_FOR,
        }))
    });
    let p = use_cases(m, ceremonies, store);
    assert!(matches!(p.finish_sign_up("c", "[").await.unwrap_err(), Error::Invalid(m) if m.starts_with("credential")));
    assert!(matches!(p.finish_sign_up("c", "{}").await.unwrap_err(), Error::Refused(Refusal::PasskeyRefused(_))));
}

#[tokio::test]
async fn the_last_way_in_is_kept_and_a_read_token_removes_nothing() {
    let m = Mocks::new(now());
    let mut store = MockPasskeyRepo::new();
    store.expect_remove_passkey().returning(|_, _, id| {
        Err(if id == PasskeyId(1) { RepoError::Conflict(Conflict::LastWayIn(id)) } else { RepoError::NotFound })
    });
    let p = use_cases(m, MockPasskeyCeremonies::new(), store);
    let me = caller(&ada(Role::Viewer));
    assert!(matches!(p.remove(&me, PasskeyId(1)).await.unwrap_err(), Error::Refused(Refusal::LastWayIn(PasskeyId(1)))));
    assert!(matches!(
        p.remove(&me, PasskeyId(2)).await.unwrap_err(),
        Error::NotFound { what: ObjectKind::Passkey, id: 2 }
    ));
    let read =
        Caller { access: crate::auth::Access::Token { id: people::TokenId(1), scope: people::Scope::Read }, ..me };
    assert!(matches!(p.remove(&read, PasskeyId(2)).await.unwrap_err(), Error::Forbidden(_)));
}
