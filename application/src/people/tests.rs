//! The people use cases against mocked ports: roles checked here, the last owner kept, invitations one-time,
//! tokens one's own (or every member's for an owner).

use super::*;
use crate::auth::Access;
use crate::auth::tests::{Mocks, ada};
use crate::ports::people::Invitation;
use chrono::Duration;
use trove_domain::people::{InvitationGone, SessionId};
use trove_domain::testing::now;

fn caller(role: Role) -> Caller {
    Caller { household: HouseholdId(3), member: MemberId(7), role, access: Access::Session(SessionId(1)) }
}

#[tokio::test]
async fn only_owners_manage_members_and_the_last_owner_stays() {
    let mut m = Mocks::new(now());
    m.members.expect_member().returning(|_, id| Ok(Member { id, ..ada(Role::Owner) }));
    m.members.expect_set_role().returning(|_, id, _, _| Err(RepoError::Conflict(Conflict::LastOwner(id))));
    m.members
        .expect_remove_member()
        .withf(|_, id, _| *id == MemberId(7))
        .returning(|_, id, _| Err(RepoError::Conflict(Conflict::LastOwner(id))));
    m.members.expect_remove_member().returning(|_, _, _| Err(RepoError::NotFound));
    let people = People::new(&m.ports(), crate::recorder::capturing());

    for role in [Role::Member, Role::Viewer] {
        assert!(matches!(
            people.set_role(&caller(role), MemberId(8), Role::Viewer).await,
            Err(Error::Forbidden(crate::Forbidden::Role(Role::Owner)))
        ));
        assert!(matches!(people.remove(&caller(role), MemberId(8)).await, Err(Error::Forbidden(_))));
        assert!(matches!(people.invite(&caller(role), Role::Viewer).await, Err(Error::Forbidden(_))));
        assert!(matches!(people.end_sessions(&caller(role), MemberId(8)).await, Err(Error::Forbidden(_))));
    }
    let owner = caller(Role::Owner);
    let demoted = people.set_role(&owner, MemberId(7), Role::Member).await.unwrap_err();
    assert!(matches!(demoted, Error::Refused(Refusal::LastOwner { member: MemberId(7), .. })), "{demoted:?}");
    assert!(matches!(people.remove(&owner, MemberId(7)).await, Err(Error::Refused(Refusal::LastOwner { .. }))));
    assert!(matches!(
        people.remove(&owner, MemberId(99)).await,
        Err(Error::NotFound { what: ObjectKind::Member, id: 99 })
    ));
    // Giving a member the role they have writes nothing.
    assert_eq!(people.set_role(&owner, MemberId(7), Role::Owner).await.unwrap().role, Role::Owner);
}

#[tokio::test]
async fn role_changes_and_removals_are_recorded_with_the_owner_who_made_them() {
    let mut m = Mocks::new(now());
    m.members.expect_member().returning(|_, id| Ok(Member { id, ..ada(Role::Member) }));
    // The store writes each event in the write's transaction, by the recording it is given: who, when, what.
    m.members
        .expect_set_role()
        .withf(|h, id, role, rec| {
            (*h, *id, *role) == (HouseholdId(3), MemberId(8), Role::Viewer)
                && (rec.action.as_str(), rec.member, rec.at) == ("role", Some(MemberId(7)), now())
        })
        .times(1)
        .returning(|_, id, role, _| Ok(Member { id, role, ..ada(Role::Member) }));
    m.members
        .expect_remove_member()
        .withf(|h, id, rec| {
            (*h, *id) == (HouseholdId(3), MemberId(9))
                && (rec.action.as_str(), rec.member, rec.at) == ("remove", Some(MemberId(7)), now())
        })
        .times(1)
        .returning(|_, _, _| Ok(()));
    let recorder = crate::recorder::capturing_at(now());
    let people = People::new(&m.ports(), recorder);
    let owner = caller(Role::Owner);
    people.set_role(&owner, MemberId(8), Role::Viewer).await.unwrap();
    people.remove(&owner, MemberId(9)).await.unwrap();
    // A viewer's refused attempt writes nothing (the mocks expect no third call).
    assert!(people.remove(&caller(Role::Viewer), MemberId(8)).await.is_err());
}

fn invitation(created_at: Timestamp, used: bool) -> Invitation {
    Invitation {
        id: InvitationId(1),
        household: HouseholdId(3),
        role: Role::Viewer,
        created_at,
        used,
        revoked: false,
        created_by: None,
        maker: None,
    }
}

/// An open invitation granting `role`, made by Ada as she is now (`None`: removed since).
fn made_by_ada(id: i64, role: Role, ada_now: Option<Role>) -> Invitation {
    Invitation {
        id: InvitationId(id),
        role,
        created_by: Some(MemberId(7)),
        maker: ada_now.map(ada),
        ..invitation(now(), false)
    }
}

fn accepting(m: &mut Mocks) {
    m.hasher.expect_hash().returning(|p| Ok(format!("hash:{p}")));
    m.invitations
        .expect_invitation()
        .withf(|h| *h == hash_token("fresh"))
        .returning(|_| Ok(Some(invitation(now(), false))));
    m.invitations
        .expect_invitation()
        .withf(|h| *h == hash_token("used"))
        .returning(|_| Ok(Some(invitation(now(), true))));
    m.invitations
        .expect_invitation()
        .withf(|h| *h == hash_token("old"))
        .returning(|_| Ok(Some(invitation(now() - Duration::days(8), false))));
    m.invitations.expect_invitation().returning(|_| Ok(None));
    m.members.expect_member_by_name().returning(|n| Ok((n.key() == "ada").then(|| (ada(Role::Owner), None))));
}

#[tokio::test]
async fn an_invitation_is_accepted_once_with_a_free_name_and_a_long_password() {
    let mut m = Mocks::new(now());
    accepting(&mut m);
    m.invitations
        .expect_redeem()
        .withf(|h, n| {
            *h == hash_token("fresh")
                && n.name.as_str() == "Grace"
                && n.role == Role::Viewer
                && n.password_hash.as_deref() == Some("hash:twelve chars!")
        })
        .times(1)
        .returning(|_, n| {
            Ok(Member { id: MemberId(8), household: n.household, name: n.name, role: n.role, created_at: n.created_at })
        });
    m.sessions
        .expect_add_session()
        .withf(|member, _, _| *member == MemberId(8))
        .times(1)
        .returning(|_, _, _| Ok(SessionId(4)));
    let recorder = crate::recorder::capturing();
    let people = People::new(&m.ports(), recorder);

    let refused = |r: Result<SignedIn, Error>| match r {
        Err(Error::Refused(r)) => r,
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert_eq!(
        refused(people.accept("used", "Grace", "twelve chars!").await),
        Refusal::InvitationGone(InvitationGone::Used)
    );
    assert_eq!(
        refused(people.accept("old", "Grace", "twelve chars!").await),
        Refusal::InvitationGone(InvitationGone::Expired)
    );
    assert_eq!(
        refused(people.accept("nope", "Grace", "twelve chars!").await),
        Refusal::InvitationGone(InvitationGone::Unknown)
    );
    assert_eq!(refused(people.accept("fresh", " ADA ", "twelve chars!").await), Refusal::NameTaken("ADA".into()));
    assert!(matches!(people.accept("fresh", "Grace", "too short").await, Err(Error::Invalid(m)) if m.contains("12")));
    assert!(matches!(people.accept("fresh", "", "twelve chars!").await, Err(Error::Invalid(_))));

    let signed = people.accept("fresh", "Grace", "twelve chars!").await.unwrap();
    assert_eq!((signed.member.id, signed.member.role), (MemberId(8), Role::Viewer));
    // The join is written by the store with the member (the store suite checks it); nothing is appended apart.
}

#[tokio::test]
async fn an_owner_invites_with_a_code_valid_seven_days() {
    let mut m = Mocks::new(now());
    m.invitations
        .expect_add_invitation()
        .withf(|h, hash, role, by, at| {
            *h == HouseholdId(3)
                && *hash == hash_token(&"s".repeat(43))
                && *role == Role::Member
                && *by == Some(MemberId(7))
                && *at == now()
        })
        .times(1)
        .returning(|_, _, _, _, _| Ok(()));
    let people = People::new(&m.ports(), crate::recorder::capturing());
    let invited = people.invite(&caller(Role::Owner), Role::Member).await.unwrap();
    assert_eq!((invited.code.len(), invited.expires_at), (43, now() + Duration::days(7)));
}

#[tokio::test]
async fn members_see_their_own_tokens_and_owners_every_members() {
    let mut m = Mocks::new(now());
    m.tokens.expect_tokens().withf(|_, member| *member == Some(MemberId(7))).times(2).returning(|_, _| Ok(vec![]));
    m.tokens.expect_tokens().withf(|_, member| member.is_none()).times(1).returning(|_, _| Ok(vec![]));
    m.tokens
        .expect_revoke_token()
        .withf(|_, _, member| *member == Some(MemberId(7)))
        .times(1)
        .returning(|_, _, _| Err(RepoError::NotFound));
    m.tokens
        .expect_add_token()
        .withf(|t| {
            t.name == "backup"
                && t.scope == Scope::Read
                && t.expires_at == Some(now() + Duration::days(30))
                && t.member == MemberId(7)
        })
        .times(1)
        .returning(|t| {
            Ok(ApiToken {
                id: TokenId(2),
                member: t.member,
                name: t.name,
                scope: t.scope,
                created_at: t.created_at,
                expires_at: t.expires_at,
                last_used_at: None,
            })
        });
    let people = People::new(&m.ports(), crate::recorder::capturing());
    people.tokens(&caller(Role::Member)).await.unwrap();
    people.tokens(&caller(Role::Viewer)).await.unwrap();
    people.tokens(&caller(Role::Owner)).await.unwrap();
    assert!(matches!(
        people.revoke_token(&caller(Role::Member), TokenId(4)).await,
        Err(Error::NotFound { what: ObjectKind::Token, id: 4 })
    ));
    let made = people.create_token(&caller(Role::Viewer), " backup ", Scope::Read, Some(30)).await.unwrap();
    assert!(made.secret.starts_with("trove_"));
    assert!(matches!(
        people.create_token(&caller(Role::Member), "x", Scope::Read, Some(0)).await,
        Err(Error::Invalid(_))
    ));
    let read = Caller { access: Access::Token { id: TokenId(1), scope: Scope::Read }, ..caller(Role::Owner) };
    assert!(matches!(
        people.create_token(&read, "x", Scope::Read, None).await,
        Err(Error::Forbidden(crate::Forbidden::ReadToken))
    ));
}

#[tokio::test]
async fn an_invitation_whose_maker_was_removed_or_demoted_is_refused_before_any_work() {
    let mut m = Mocks::new(now());
    m.hasher.expect_hash().never();
    m.invitations.expect_redeem().never();
    m.invitations
        .expect_invitation()
        .withf(|h| *h == hash_token("removed"))
        .returning(|_| Ok(Some(made_by_ada(1, Role::Viewer, None))));
    m.invitations
        .expect_invitation()
        .withf(|h| *h == hash_token("demoted"))
        .returning(|_| Ok(Some(made_by_ada(2, Role::Owner, Some(Role::Member)))));
    m.invitations
        .expect_invitation()
        .withf(|h| *h == hash_token("revoked"))
        .returning(|_| Ok(Some(Invitation { revoked: true, ..made_by_ada(3, Role::Viewer, Some(Role::Owner)) })));
    let people = People::new(&m.ports(), crate::recorder::capturing());
    for (code, gone) in [
        ("removed", InvitationGone::MakerRemoved),
        ("demoted", InvitationGone::MakerLacksRole(Role::Owner)),
        ("revoked", InvitationGone::Revoked),
    ] {
        let err = people.accept(code, "Grace", "twelve chars!").await.unwrap_err();
        assert!(matches!(err, Error::Refused(Refusal::InvitationGone(g)) if g == gone), "{code}: {err:?}");
    }
}

#[tokio::test]
async fn a_conflict_at_the_write_is_answered_by_what_it_was_not_guessed() {
    let mut m = Mocks::new(now());
    accepting(&mut m);
    m.invitations
        .expect_redeem()
        .withf(|_, n| n.name.as_str() == "Lost")
        .returning(|_, _| Err(RepoError::Conflict(Conflict::Invitation(InvitationGone::Used))));
    m.invitations
        .expect_redeem()
        .withf(|_, n| n.name.as_str() == "Late")
        .returning(|_, _| Err(RepoError::Conflict(Conflict::Invitation(InvitationGone::MakerRemoved))));
    m.invitations
        .expect_redeem()
        .withf(|_, n| n.name.as_str() == "Twin")
        .returning(|_, _| Err(RepoError::Conflict(Conflict::NameTaken)));
    let people = People::new(&m.ports(), crate::recorder::capturing());
    let refusal = |name: &'static str| {
        let people = people.clone();
        async move {
            match people.accept("fresh", name, "twelve chars!").await {
                Err(Error::Refused(r)) => r,
                other => panic!("expected a refusal, got {other:?}"),
            }
        }
    };
    // The loser of a race for the invitation is told it was used, not that its free name is taken.
    assert_eq!(refusal("Lost").await, Refusal::InvitationGone(InvitationGone::Used));
    assert_eq!(refusal("Late").await, Refusal::InvitationGone(InvitationGone::MakerRemoved));
    assert_eq!(refusal("Twin").await, Refusal::NameTaken("Twin".into()));
}

#[tokio::test]
async fn owners_list_the_invitations_still_good_and_revoke_them() {
    let mut m = Mocks::new(now());
    m.invitations
        .expect_open_invitations()
        .withf(|h, after| *h == HouseholdId(3) && *after == now() - Duration::days(7))
        .times(1)
        .returning(|_, _| {
            Ok(vec![
                made_by_ada(1, Role::Owner, Some(Role::Owner)),
                made_by_ada(2, Role::Owner, Some(Role::Member)),
                made_by_ada(3, Role::Member, Some(Role::Member)),
                made_by_ada(4, Role::Viewer, None),
                Invitation { id: InvitationId(5), ..invitation(now(), false) },
                Invitation { id: InvitationId(6), ..invitation(now() - Duration::days(7), false) },
            ])
        });
    m.invitations
        .expect_revoke_invitation()
        .withf(|h, id, at| *h == HouseholdId(3) && *id == InvitationId(1) && *at == now())
        .times(1)
        .returning(|_, _, _| Ok(()));
    m.invitations
        .expect_revoke_invitation()
        .withf(|_, id, _| *id == InvitationId(2))
        .returning(|_, _, _| Err(RepoError::Conflict(Conflict::Invitation(InvitationGone::Used))));
    m.invitations.expect_revoke_invitation().returning(|_, _, _| Err(RepoError::NotFound));
    let people = People::new(&m.ports(), crate::recorder::capturing());

    for role in [Role::Member, Role::Viewer] {
        assert!(matches!(people.invitations(&caller(role)).await, Err(Error::Forbidden(_))));
        assert!(matches!(people.revoke_invitation(&caller(role), InvitationId(1)).await, Err(Error::Forbidden(_))));
    }
    let owner = caller(Role::Owner);
    // Only those the rules still accept: not a demoted owner's owner link, nor a removed maker's, nor one expired.
    let listed: Vec<i64> = people.invitations(&owner).await.unwrap().iter().map(|i| i.id.0).collect();
    assert_eq!(listed, [1, 3, 5]);
    people.revoke_invitation(&owner, InvitationId(1)).await.unwrap();
    assert!(matches!(
        people.revoke_invitation(&owner, InvitationId(2)).await,
        Err(Error::Refused(Refusal::InvitationGone(InvitationGone::Used)))
    ));
    assert!(matches!(
        people.revoke_invitation(&owner, InvitationId(9)).await,
        Err(Error::NotFound { what: ObjectKind::Invitation, id: 9 })
    ));
}
