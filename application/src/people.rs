//! The people of a household: who I am, the members and their roles, invitations and accepting them, ending a
//! member's sessions, and personal API tokens. Every use case takes the [`Caller`] and checks its role here;
//! the HTTP adapter only refuses writes to read-only callers as a whole. A member joining, changing role or
//! being removed is recorded in the household's history.

use crate::auth::{Caller, PeoplePorts, SignedIn, hash_token, household_name, open_session};
use crate::error::named;
use crate::ports::access::AccessChange;
use crate::ports::people::{ApiToken, Household, Invitation, Member, NewMember, NewToken};
use crate::ports::{
    Clock, HouseholdRepo, InvitationRepo, MemberRepo, PasswordHasher, SecretSource, SessionRepo, TokenRepo,
};
use crate::recorder::Recorder;
use crate::{Conflict, Error, Refusal, RepoError};
use anyhow::Context as _;
use std::sync::Arc;
use trove_domain::history::{Action, ObjectKind};
use trove_domain::people::{self, InvitationId, MemberId, MemberName, Permission, Role, Scope, TokenId};
use trove_domain::{HouseholdId, Timestamp};

/// A new invitation: the code (shown once) and when it expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invited {
    pub household: HouseholdId,
    pub code: String,
    pub role: Role,
    pub expires_at: Timestamp,
}

/// What an invitation offers whoever holds its code, before they join: the household, the role, until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitationOffer {
    pub household: String,
    pub role: Role,
    pub expires_at: Timestamp,
}

/// A new API token: what is listed, and the token itself (shown once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApiToken {
    pub token: ApiToken,
    pub secret: String,
}

/// The people use cases.
#[derive(Clone)]
pub struct People {
    households: Arc<dyn HouseholdRepo>,
    members: Arc<dyn MemberRepo>,
    invitations: Arc<dyn InvitationRepo>,
    sessions: Arc<dyn SessionRepo>,
    tokens: Arc<dyn TokenRepo>,
    hasher: Arc<dyn PasswordHasher>,
    secrets: Arc<dyn SecretSource>,
    clock: Arc<dyn Clock>,
    /// Forgotten on a revocation or a member's change, so it takes effect on the next request.
    token_checks: Arc<crate::auth::TokenChecks>,
    /// The limit of password hashes computed at once, shared with sign-in.
    hashing: crate::jobs::Jobs,
    /// Where members joining, changing role and leaving are recorded, with who did it.
    recorder: Recorder,
    /// Passwords turned off (`TROVE_OIDC_ONLY`): an invitation is accepted with single sign-on or a passkey.
    passwords_off: bool,
    /// Accepts of one invitation go one at a time: the others wait and then find it used, instead of each
    /// hashing a password (and a racer beyond the hashing limit being told the server is busy).
    accepting: Arc<crate::one_at_a_time::OneAtATime>,
}

impl std::fmt::Debug for People {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("People").finish_non_exhaustive()
    }
}

impl People {
    pub fn new(p: &PeoplePorts, recorder: Recorder) -> Self {
        Self {
            recorder,
            households: p.households.clone(),
            members: p.members.clone(),
            invitations: p.invitations.clone(),
            sessions: p.sessions.clone(),
            tokens: p.tokens.clone(),
            hasher: p.hasher.clone(),
            secrets: p.secrets.clone(),
            clock: p.clock.clone(),
            token_checks: p.token_checks.clone(),
            hashing: p.hashing.clone(),
            passwords_off: false,
            accepting: Arc::default(),
        }
    }

    /// The same; with `on` false (`TROVE_OIDC_ONLY`), refusing to accept an invitation with a password ([`crate::error::Forbidden::PasswordsOff`]).
    #[must_use]
    pub fn with_passwords(mut self, on: bool) -> Self {
        self.passwords_off = !on;
        self
    }

    /// The caller as a member, and their household.
    ///
    /// # Errors
    /// [`Error::NotFound`] when the member was removed meanwhile.
    pub async fn me(&self, caller: &Caller) -> Result<(Member, Household), Error> {
        let member = self
            .members
            .member(caller.household, caller.member)
            .await
            .map_err(named(ObjectKind::Member, caller.member.0))?;
        let household = self.members.household(caller.household).await.context("reading the caller's household")?;
        Ok((member, household))
    }

    /// Every member of the caller's household, oldest first.
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn members(&self, caller: &Caller) -> Result<Vec<Member>, Error> {
        caller.require(Permission::Read)?;
        Ok(self.members.members(caller.household).await?)
    }

    /// Gives a member another role (owners only). The last owner cannot be demoted.
    ///
    /// # Errors
    /// [`Error::Forbidden`], [`Error::NotFound`], [`Refusal::LastOwner`].
    pub async fn set_role(&self, caller: &Caller, id: MemberId, role: Role) -> Result<Member, Error> {
        caller.require(Permission::ManageHousehold)?;
        let member = self.members.member(caller.household, id).await.map_err(named(ObjectKind::Member, id.0))?;
        if member.role == role {
            return Ok(member);
        }
        let rec = self.recorder.recording(caller.into(), Action::Role);
        let changed =
            self.members.set_role(caller.household, id, role, &rec).await.map_err(|e| last_owner(e, &member))?;
        self.token_checks.end(AccessChange::Member(id)).await;
        Ok(changed)
    }

    /// Removes a member with their sessions and tokens (owners only). The last owner cannot be removed.
    ///
    /// # Errors
    /// [`Error::Forbidden`], [`Error::NotFound`], [`Refusal::LastOwner`].
    pub async fn remove(&self, caller: &Caller, id: MemberId) -> Result<(), Error> {
        caller.require(Permission::ManageHousehold)?;
        let member = self.members.member(caller.household, id).await.map_err(named(ObjectKind::Member, id.0))?;
        let rec = self.recorder.recording(caller.into(), Action::Remove);
        self.members.remove_member(caller.household, id, &rec).await.map_err(|e| last_owner(e, &member))?;
        self.token_checks.end(AccessChange::Member(id)).await;
        Ok(())
    }

    /// Ends every session of a member (owners only; anyone may end their own). Answers how many there were.
    ///
    /// # Errors
    /// [`Error::Forbidden`], [`Error::NotFound`].
    pub async fn end_sessions(&self, caller: &Caller, id: MemberId) -> Result<u64, Error> {
        caller.require(if id == caller.member { Permission::OwnTokens } else { Permission::ManageHousehold })?;
        self.members.member(caller.household, id).await.map_err(named(ObjectKind::Member, id.0))?;
        Ok(self.sessions.end_sessions(id).await?)
    }

    /// Invites a person into the caller's household with `role` (owners only).
    ///
    /// # Errors
    /// [`Error::Forbidden`].
    pub async fn invite(&self, caller: &Caller, role: Role) -> Result<Invited, Error> {
        caller.require(Permission::ManageHousehold)?;
        self.store_invitation(caller.household, role, Some(caller.member)).await
    }

    /// Invites a person into the household called `household` (created on first use) from the command line.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad household name.
    pub async fn invite_from_command_line(&self, household: &str, role: Role) -> Result<Invited, Error> {
        let household = self.households.ensure_household(&household_name(household)?).await?;
        self.store_invitation(household, role, None).await
    }

    async fn store_invitation(
        &self,
        household: HouseholdId,
        role: Role,
        by: Option<MemberId>,
    ) -> Result<Invited, Error> {
        let code = self.secrets.new_secret()?;
        let now = self.clock.now();
        self.invitations.add_invitation(household, &hash_token(&code), role, by, now).await?;
        Ok(Invited { household, code, role, expires_at: people::invitation_expiry(now) })
    }

    /// The household's open invitations (owners only): those that may still be accepted, oldest first, with
    /// who made each.
    ///
    /// # Errors
    /// [`Error::Forbidden`].
    pub async fn invitations(&self, caller: &Caller) -> Result<Vec<Invitation>, Error> {
        caller.require(Permission::ManageHousehold)?;
        let now = self.clock.now();
        let open = self.invitations.open_invitations(caller.household, now - people::INVITATION_VALID_FOR).await?;
        Ok(open.into_iter().filter(|i| people::check_invitation(&i.state(), now).is_ok()).collect())
    }

    /// Revokes an invitation of the caller's household (owners only): accepting it is refused from now on.
    /// Revoking one revoked already changes nothing.
    ///
    /// # Errors
    /// [`Error::Forbidden`], [`Error::NotFound`], [`Refusal::InvitationGone`] when it was used already.
    pub async fn revoke_invitation(&self, caller: &Caller, id: InvitationId) -> Result<(), Error> {
        caller.require(Permission::ManageHousehold)?;
        let now = self.clock.now();
        self.invitations.revoke_invitation(caller.household, id, now).await.map_err(|e| match e {
            RepoError::Conflict(Conflict::Invitation(gone)) => Refusal::InvitationGone(gone).into(),
            other => named(ObjectKind::Invitation, id.0)(other),
        })
    }

    /// What an invitation offers, asked by whoever holds its code (the code is the secret) before they choose a
    /// name: the household, the role and until when. Nothing changes.
    ///
    /// # Errors
    /// [`Refusal::InvitationGone`] exactly when accepting it now would be: an unknown code, or one that was used,
    /// revoked or has expired, or whose maker was removed or no longer holds the role it grants.
    pub async fn invitation_offer(&self, code: &str) -> Result<InvitationOffer, Error> {
        let invitation = self
            .invitations
            .invitation(&hash_token(code))
            .await?
            .ok_or(Refusal::InvitationGone(people::InvitationGone::Unknown))?;
        people::check_invitation(&invitation.state(), self.clock.now()).map_err(Refusal::from)?;
        let household =
            self.members.household(invitation.household).await.context("reading the invitation's household")?;
        Ok(InvitationOffer {
            household: household.name,
            role: invitation.role,
            expires_at: people::invitation_expiry(invitation.created_at),
        })
    }

    /// Accepts an invitation with a name and a password: the new member, signed in.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad name or password, [`Refusal::InvitationGone`] for an unknown code or one
    /// that was used, revoked or has expired, or whose maker was removed or no longer holds the role it grants;
    /// [`Refusal::NameTaken`].
    pub async fn accept(&self, code: &str, name: &str, password: &str) -> Result<SignedIn, Error> {
        if self.passwords_off {
            return Err(crate::error::Forbidden::PasswordsOff.into());
        }
        let name = MemberName::new(name).map_err(|e| Error::Invalid(e.to_string()))?;
        people::check_password(password).map_err(|e| Error::Invalid(e.to_string()))?;
        let hash = hash_token(code);
        // Behind an accept of the same code still running here: it is finished when this one reads.
        let _turn = self.accepting.enter(&hash).await;
        let now = self.clock.now();
        // Checked here before the password's hash is worked out, and again by the store as it writes (another
        // process may accept the same code).
        let invitation = crate::auth::usable_invitation(&*self.invitations, &hash, now).await?;
        if self.members.member_by_name(&name).await?.is_some() {
            return Err(Refusal::NameTaken(name.to_string()).into());
        }
        let hasher = self.hasher.clone();
        let password = password.to_owned();
        // Under the hashing limit, as every password hash is.
        let password_hash = self.hashing.run(move || hasher.hash(&password)).await??;
        let new = NewMember {
            household: invitation.household,
            name: name.clone(),
            role: invitation.role,
            password_hash: Some(password_hash),
            created_at: now,
        };
        let member = self.invitations.redeem(&hash, new).await.map_err(|e| match e {
            // Between the checks and the write, a concurrent request used the code, or took the name, or the
            // maker lost their rights.
            RepoError::Conflict(Conflict::Invitation(gone)) => Error::from(Refusal::InvitationGone(gone)),
            RepoError::Conflict(Conflict::NameTaken) => Error::from(Refusal::NameTaken(name.to_string())),
            other => other.into(),
        })?;
        open_session(&*self.sessions, &*self.secrets, member, now).await
    }

    /// Makes a personal API token of the caller (shown once). A read-scope token makes no tokens.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad name or life, [`Error::Forbidden`].
    pub async fn create_token(
        &self,
        caller: &Caller,
        name: &str,
        scope: Scope,
        expires_in_days: Option<i64>,
    ) -> Result<NewApiToken, Error> {
        caller.require(Permission::OwnTokens)?;
        let name = people::token_name(name).map_err(|e| Error::Invalid(e.to_string()))?;
        let now = self.clock.now();
        let expires_at = people::token_expiry(now, expires_in_days).map_err(|e| Error::Invalid(e.to_string()))?;
        let secret = crate::auth::new_api_token(&*self.secrets)?;
        let token = self
            .tokens
            .add_token(NewToken {
                member: caller.member,
                household: caller.household,
                hash: hash_token(&secret),
                name,
                scope,
                created_at: now,
                expires_at,
            })
            .await?;
        Ok(NewApiToken { token, secret })
    }

    /// The caller's tokens; an owner sees every member's.
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn tokens(&self, caller: &Caller) -> Result<Vec<ApiToken>, Error> {
        caller.require(Permission::Read)?;
        Ok(self.tokens.tokens(caller.household, self.only_own(caller)).await?)
    }

    /// Revokes a token at once: one's own, or any of the household for an owner.
    ///
    /// # Errors
    /// [`Error::Forbidden`], [`Error::NotFound`].
    pub async fn revoke_token(&self, caller: &Caller, id: TokenId) -> Result<(), Error> {
        caller.require(Permission::OwnTokens)?;
        self.tokens
            .revoke_token(caller.household, id, self.only_own(caller))
            .await
            .map_err(named(ObjectKind::Token, id.0))?;
        self.token_checks.end(AccessChange::Token(id)).await;
        Ok(())
    }

    fn only_own(&self, caller: &Caller) -> Option<MemberId> {
        (!caller.role.may(Permission::ManageHousehold)).then_some(caller.member)
    }
}

/// A store's last-owner conflict on a role change or removal is the last-owner rule, naming the member;
/// `NotFound` names the member's id.
fn last_owner(e: RepoError, member: &Member) -> Error {
    match e {
        RepoError::Conflict(Conflict::LastOwner(_)) => {
            Refusal::LastOwner { member: member.id, name: member.name.to_string() }.into()
        }
        other => named(ObjectKind::Member, member.id.0)(other),
    }
}

#[cfg(test)]
mod tests;
