//! Single sign-on with an OpenID provider (`TROVE_OIDC_*`): the authorization code flow with PKCE, `state` and
//! `nonce`. [`SingleSignOn::start`] keeps the sign-in's nonce and PKCE verifier in the store under the hash of
//! its `state` and answers where to send the browser; [`SingleSignOn::finish`] takes it back (once: a second
//! finish finds nothing), has the provider's ID token checked, and signs the person in.
//!
//! Who the person is, is the ID token's issuer and subject, never its e-mail. The first sign-in of an account
//! makes its member, in the household and with the role [`sso::entry`] decides (an invitation followed, or a
//! mapped group); later sign-ins find the member by issuer and subject, while [`sso::keeps_access`] holds.

use crate::auth::{SignedIn, hash_token, open_session, usable_invitation};
use crate::error::Forbidden;
use crate::ports::people::NewMember;
use crate::ports::sso::{OpenIdProvider, PendingSignIn, SsoError, SsoRepo};
use crate::ports::{Clock, HouseholdRepo, InvitationRepo, SecretSource, SessionRepo};
use crate::{Conflict, Error, Refusal, RepoError};
use std::sync::Arc;
use trove_domain::sso::{self, Entry, GroupRoles, Profile, candidate_names};

/// How long a sign-in may take at the provider (its login page) before it comes back.
pub const SIGN_IN_VALID_FOR: chrono::Duration = chrono::Duration::minutes(10);

/// How many names a first sign-in tries ("ada", "ada 2", ...) before giving up.
const NAME_TRIES: usize = 20;

/// The rules of single sign-on that are settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SsoRules {
    /// The household a mapped group's member joins (`TROVE_OIDC_HOUSEHOLD`, default `default`).
    pub household: String,
    /// Which groups give which role.
    pub groups: GroupRoles,
}

/// A sign-in begun: where to send the browser, and the `state` the browser keeps (in a cookie) to show that the
/// answer comes back to the browser that began it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub url: String,
    pub state: String,
}

/// The single sign-on use cases.
#[derive(Clone)]
pub struct SingleSignOn {
    provider: Arc<dyn OpenIdProvider>,
    store: Arc<dyn SsoRepo>,
    households: Arc<dyn HouseholdRepo>,
    invitations: Arc<dyn InvitationRepo>,
    sessions: Arc<dyn SessionRepo>,
    secrets: Arc<dyn SecretSource>,
    clock: Arc<dyn Clock>,
    rules: SsoRules,
}

impl std::fmt::Debug for SingleSignOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SingleSignOn").field("rules", &self.rules).finish_non_exhaustive()
    }
}

impl SingleSignOn {
    pub fn new(
        p: &crate::auth::PeoplePorts,
        provider: Arc<dyn OpenIdProvider>,
        store: Arc<dyn SsoRepo>,
        rules: SsoRules,
    ) -> Self {
        Self {
            provider,
            store,
            households: p.households.clone(),
            invitations: p.invitations.clone(),
            sessions: p.sessions.clone(),
            secrets: p.secrets.clone(),
            clock: p.clock.clone(),
            rules,
        }
    }

    /// What the sign-in page's button names: "Sign in with NAME".
    pub fn provider_name(&self) -> String {
        self.provider.display_name()
    }

    /// Begins a sign-in, joining from `invitation` (a code) when given.
    ///
    /// # Errors
    /// [`Refusal::InvitationGone`] for an unknown, used or expired code; [`Error::Unavailable`] when the provider
    /// cannot be reached.
    pub async fn start(&self, invitation: Option<&str>) -> Result<Redirect, Error> {
        let now = self.clock.now();
        let invitation = match invitation {
            Some(code) => {
                let hash = hash_token(code);
                usable_invitation(&*self.invitations, &hash, now).await?;
                Some(hash)
            }
            None => None,
        };
        let a = self.provider.authorization().await.map_err(provider_error)?;
        let pending =
            PendingSignIn { nonce: a.nonce, verifier: a.verifier, invitation, expires_at: now + SIGN_IN_VALID_FOR };
        self.store.add_sign_in(&hash_token(&a.state), pending, now).await?;
        Ok(Redirect { url: a.url, state: a.state })
    }

    /// Finishes a sign-in: the provider sent the browser back with `state` and `code`; `kept` is the state the
    /// browser kept when it began (its cookie).
    ///
    /// # Errors
    /// [`Error::SsoFailed`] when `state` is not the one this browser began, or the provider refuses the code or
    /// its ID token fails a check; [`Refusal::SsoSignInGone`] for a sign-in unknown, expired or already
    /// finished; [`Forbidden::NoSsoAccess`] for an account no group maps and no invitation brings in (or a
    /// member a group brought in who is in none any more); [`Refusal::InvitationGone`];
    /// [`Error::Unavailable`] when the provider cannot be reached.
    pub async fn finish(&self, state: &str, code: &str, kept: Option<&str>) -> Result<SignedIn, Error> {
        if kept != Some(state) {
            return Err(Error::SsoStateMismatch);
        }
        let now = self.clock.now();
        let pending = self.store.take_sign_in(&hash_token(state), now).await?.ok_or(Refusal::SsoSignInGone)?;
        let who = self.provider.identify(code, &pending.verifier, &pending.nonce).await.map_err(provider_error)?;
        let mapped = self.rules.groups.role_for(&who.groups);
        if let Some((member, by_group)) = self.store.member_by_identity(&who.issuer, &who.subject, now).await? {
            if !sso::keeps_access(by_group, mapped) {
                tracing::info!(member = %member.id, "a single sign-on was refused: the account is in no mapped group");
                return Err(Forbidden::NoSsoAccess.into());
            }
            return open_session(&*self.sessions, &*self.secrets, member, now).await;
        }
        let (household, role) = match (sso::entry(pending.invitation.as_deref(), mapped), &pending.invitation) {
            (Some(Entry::Invitation), Some(hash)) => {
                let found = usable_invitation(&*self.invitations, hash, now).await?;
                (found.household, found.role)
            }
            (Some(Entry::Group(role)), _) => (self.households.ensure_household(&self.rules.household).await?, role),
            _ => return Err(Forbidden::NoSsoAccess.into()),
        };
        let profile =
            Profile { username: who.username.as_deref(), name: who.name.as_deref(), email: who.email.as_deref() };
        for name in candidate_names(&profile, NAME_TRIES) {
            let new = NewMember { household, name, role, password_hash: None, created_at: now };
            match self.store.add_member_with_identity(pending.invitation.clone(), new, &who.issuer, &who.subject).await
            {
                Ok(member) => return open_session(&*self.sessions, &*self.secrets, member, now).await,
                Err(RepoError::Conflict(Conflict::NameTaken)) => {}
                Err(RepoError::Conflict(Conflict::Invitation(gone))) => {
                    return Err(Refusal::InvitationGone(gone).into());
                }
                Err(other) => return Err(other.into()),
            }
        }
        Err(Refusal::NameTaken(profile.username.or(profile.name).unwrap_or("member").to_owned()).into())
    }
}

fn provider_error(e: SsoError) -> Error {
    match e {
        SsoError::Refused(reason) => Error::SsoFailed(reason),
        SsoError::Unavailable(message) => Error::Unavailable { capability: "single sign-on", message },
    }
}

#[cfg(test)]
mod tests;
