//! Passkeys: signing up from an invitation with a passkey, signing in with one, and a member's own passkeys
//! (list, add, remove). Every ceremony has two steps: `start_*` keeps the server's half of the ceremony in the
//! store under the hash of a new random id and answers the id with the options for the browser; `finish_*`
//! takes the ceremony (once: a second finish finds nothing) and checks the browser's credential against it.
//!
//! Signing in is by name, as with a password: the options name the member's passkeys (made-up ones for an
//! unknown name, so the answer does not tell who exists), and failures count toward the same throttle.

use crate::auth::{Auth, Caller, PeoplePorts, SignedIn, hash_token, open_session, usable_invitation};
use crate::error::named;
use crate::ports::passkeys::{
    Ceremony, NewPasskey, Passkey, PasskeyCeremonies, PasskeyError, PasskeyRepo, Purpose, Started, UserHandle,
};
use crate::ports::people::NewMember;
use crate::ports::{Clock, InvitationRepo, MemberRepo, SecretSource, SessionRepo};
use crate::{Conflict, Error, Refusal, RepoError};
use std::sync::Arc;
use trove_domain::Timestamp;
use trove_domain::history::ObjectKind;
use trove_domain::ids::PasskeyId;
use trove_domain::people::{self, MemberName, Permission};
use trove_domain::throttle::ClientAddress;

/// How long a ceremony may take between its start and its finish (WebAuthn's own timeout is 5 minutes).
pub const CEREMONY_VALID_FOR: chrono::Duration = chrono::Duration::minutes(10);

/// What the passkey made at sign-up is called until its member renames or replaces it.
pub const FIRST_PASSKEY_NAME: &str = "first passkey";

/// A ceremony begun: its id (sent back with the credential) and the options for the browser (JSON text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Begun {
    pub ceremony: String,
    pub options: String,
}

/// The passkey use cases.
#[derive(Clone)]
pub struct Passkeys {
    ceremonies: Arc<dyn PasskeyCeremonies>,
    store: Arc<dyn PasskeyRepo>,
    members: Arc<dyn MemberRepo>,
    invitations: Arc<dyn InvitationRepo>,
    sessions: Arc<dyn SessionRepo>,
    secrets: Arc<dyn SecretSource>,
    clock: Arc<dyn Clock>,
    /// The sign-in throttle, shared with password sign-in (an `Auth` clone shares its failures).
    auth: Auth,
}

impl std::fmt::Debug for Passkeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Passkeys").finish_non_exhaustive()
    }
}

impl Passkeys {
    /// The use cases over `ceremonies` (WebAuthn) and `store`; `auth` must be the [`Auth`] that signs in with
    /// passwords, so both count toward one throttle.
    pub fn new(
        p: &PeoplePorts,
        auth: &Auth,
        ceremonies: Arc<dyn PasskeyCeremonies>,
        store: Arc<dyn PasskeyRepo>,
    ) -> Self {
        Self {
            ceremonies,
            store,
            members: p.members.clone(),
            invitations: p.invitations.clone(),
            sessions: p.sessions.clone(),
            secrets: p.secrets.clone(),
            clock: p.clock.clone(),
            auth: auth.clone(),
        }
    }

    /// Starts signing up from an invitation with a passkey.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad name, [`Refusal::InvitationGone`] for an unknown, used or expired code,
    /// [`Refusal::NameTaken`], [`Error::Unavailable`] when passkeys cannot work with the configuration.
    pub async fn start_sign_up(&self, code: &str, name: &str) -> Result<Begun, Error> {
        let name = MemberName::new(name).map_err(|e| Error::Invalid(e.to_string()))?;
        let invitation = hash_token(code);
        usable_invitation(&*self.invitations, &invitation, self.clock.now()).await?;
        if self.members.member_by_name(&name).await?.is_some() {
            return Err(Refusal::NameTaken(name.to_string()).into());
        }
        let user = self.new_user_handle()?;
        let started = self.ceremonies.start_registration(&user, name.as_str(), &[]).map_err(setup)?;
        let purpose = Purpose::SignUp { invitation, name: name.as_str().to_owned() };
        self.keep(purpose, Some(user), started).await
    }

    /// Finishes signing up with a passkey: the new member with their first passkey, signed in.
    ///
    /// # Errors
    /// [`Refusal::CeremonyGone`], [`Refusal::InvitationGone`] when the code was used or expired meanwhile,
    /// [`Refusal::NameTaken`], [`Error::Invalid`] for credential JSON that is not a WebAuthn credential,
    /// [`Refusal::PasskeyRefused`] when it fails WebAuthn's checks.
    pub async fn finish_sign_up(&self, ceremony: &str, credential: &str) -> Result<SignedIn, Error> {
        let now = self.clock.now();
        let c = self.take(ceremony, now).await?;
        let (Purpose::SignUp { invitation, name }, Some(user)) = (c.purpose, c.user) else {
            return Err(Refusal::CeremonyGone.into());
        };
        let found = usable_invitation(&*self.invitations, &invitation, now).await?;
        let key = self.ceremonies.finish_registration(&c.state, credential).map_err(refused)?;
        let name = MemberName::new(&name).map_err(|e| Error::Invalid(e.to_string()))?;
        let member = NewMember {
            household: found.household,
            name: name.clone(),
            role: found.role,
            password_hash: None,
            created_at: now,
        };
        let passkey = NewPasskey { name: FIRST_PASSKEY_NAME.to_owned(), user, key, created_at: now };
        let member = self.store.redeem_with_passkey(&invitation, member, passkey).await.map_err(|e| match e {
            // Between the checks and the write, a concurrent request used the code or took the name, or the
            // maker lost their rights (or the authenticator's credential is someone's already).
            RepoError::Conflict(Conflict::Invitation(gone)) => Error::from(Refusal::InvitationGone(gone)),
            RepoError::Conflict(Conflict::NameTaken) => Error::from(Refusal::NameTaken(name.to_string())),
            RepoError::Conflict(Conflict::CredentialRegistered) => registered_already(),
            other => other.into(),
        })?;
        open_session(&*self.sessions, &*self.secrets, member, now).await
    }

    /// Starts signing in with a passkey as `name`. The options are alike for an unknown name.
    ///
    /// # Errors
    /// [`Error::Throttled`] after too many failed sign-ins for the name, [`Error::Invalid`] for a text that
    /// cannot be a member's name (no member has it, so this tells nothing of who is a member),
    /// [`Error::Unavailable`].
    pub async fn start_sign_in(&self, name: &str, from: &ClientAddress) -> Result<Begun, Error> {
        let now = self.clock.now();
        let key = self.auth.unthrottled(name, from, now).await?;
        let name = MemberName::new(name).map_err(|e| Error::Invalid(e.to_string()))?;
        let member = self.members.member_by_name(&name).await?.map(|(m, _)| m);
        let passkeys = match &member {
            Some(m) => self.store.passkeys(m.id).await?,
            None => Vec::new(),
        };
        let keys: Vec<_> = passkeys.iter().map(|p| p.key.clone()).collect();
        let started = self.ceremonies.start_authentication(&key, &keys).map_err(setup)?;
        let user = passkeys.first().map(|p| p.user.clone());
        self.keep(Purpose::SignIn { name: key, member: member.map(|m| m.id) }, user, started).await
    }

    /// Finishes signing in with a passkey: a new session. A credential that is not one of the name's passkeys
    /// or fails a check is a failed sign-in (counted toward the throttle).
    ///
    /// # Errors
    /// [`Refusal::CeremonyGone`], [`Error::Throttled`], [`Error::Invalid`] for credential JSON that is not a
    /// WebAuthn credential, [`Error::PasskeySignInFailed`].
    pub async fn finish_sign_in(
        &self,
        ceremony: &str,
        credential: &str,
        from: &ClientAddress,
    ) -> Result<SignedIn, Error> {
        let now = self.clock.now();
        let c = self.take(ceremony, now).await?;
        let Purpose::SignIn { name, member } = c.purpose else { return Err(Refusal::CeremonyGone.into()) };
        let key = self.auth.unthrottled(&name, from, now).await?;
        let used = self.ceremonies.credential_of(credential).map_err(refused)?;
        // The name's member now, if still the one the ceremony was started for.
        let now_member = match MemberName::new(&name) {
            Ok(n) => self.members.member_by_name(&n).await?.map(|(m, _)| m).filter(|m| Some(m.id) == member),
            Err(_) => None,
        };
        let signed = match &now_member {
            Some(m) => {
                let member = m.id;
                let passkeys = self.store.passkeys(member).await?;
                match passkeys.into_iter().find(|p| p.key.credential == used) {
                    Some(p) => match self.ceremonies.finish_authentication(&c.state, credential, &p.key) {
                        Ok(updated) => Some((p.passkey, updated)),
                        Err(PasskeyError::Rejected(reason)) => {
                            tracing::info!(member = %member, %reason, "a passkey sign-in was rejected");
                            None
                        }
                        Err(e) => return Err(refused(e)),
                    },
                    None => None,
                }
            }
            None => None,
        };
        let (Some(m), Some((passkey, updated))) = (now_member, signed) else {
            self.auth.sign_in_failed(&key, from, now).await?;
            return Err(Error::PasskeySignInFailed);
        };
        self.auth.signed_in(&key, from).await?;
        self.store.used_passkey(passkey.id, updated, now).await?;
        open_session(&*self.sessions, &*self.secrets, m, now).await
    }

    /// The caller's passkeys, oldest first.
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn list(&self, caller: &Caller) -> Result<Vec<Passkey>, Error> {
        caller.require(Permission::Read)?;
        Ok(self.store.passkeys(caller.member).await?.into_iter().map(|p| p.passkey).collect())
    }

    /// Starts adding a passkey called `name` to the caller.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad name, [`Error::Forbidden`] for a read token, [`Error::Unavailable`].
    pub async fn start_add(&self, caller: &Caller, name: &str) -> Result<Begun, Error> {
        caller.require(Permission::OwnTokens)?;
        let name = people::token_name(name).map_err(|e| Error::Invalid(e.to_string().replace("token", "passkey")))?;
        let member = self
            .members
            .member(caller.household, caller.member)
            .await
            .map_err(named(ObjectKind::Member, caller.member.0))?;
        let existing = self.store.passkeys(caller.member).await?;
        let user = match existing.first() {
            Some(p) => p.user.clone(),
            None => self.new_user_handle()?,
        };
        let exclude: Vec<_> = existing.iter().map(|p| p.key.credential.clone()).collect();
        let started = self.ceremonies.start_registration(&user, member.name.as_str(), &exclude).map_err(setup)?;
        self.keep(Purpose::Add { member: caller.member, name }, Some(user), started).await
    }

    /// Finishes adding a passkey to the caller: the passkey.
    ///
    /// # Errors
    /// [`Refusal::CeremonyGone`] (also for another member's ceremony), [`Error::Invalid`] for credential JSON
    /// that is not a WebAuthn credential, [`Refusal::PasskeyRefused`] when it fails WebAuthn's checks or is
    /// registered already.
    pub async fn finish_add(&self, caller: &Caller, ceremony: &str, credential: &str) -> Result<Passkey, Error> {
        caller.require(Permission::OwnTokens)?;
        let now = self.clock.now();
        let c = self.take(ceremony, now).await?;
        let (Purpose::Add { member, name }, Some(user)) = (c.purpose, c.user) else {
            return Err(Refusal::CeremonyGone.into());
        };
        if member != caller.member {
            return Err(Refusal::CeremonyGone.into());
        }
        let key = self.ceremonies.finish_registration(&c.state, credential).map_err(refused)?;
        self.store.add_passkey(member, NewPasskey { name, user, key, created_at: now }).await.map_err(|e| match e {
            RepoError::Conflict(Conflict::CredentialRegistered) => registered_already(),
            other => Error::from(other),
        })
    }

    /// Removes one of the caller's passkeys, unless it is their last way to sign in.
    ///
    /// # Errors
    /// [`Error::Forbidden`] for a read token, [`Error::NotFound`], [`Refusal::LastWayIn`].
    pub async fn remove(&self, caller: &Caller, id: PasskeyId) -> Result<(), Error> {
        caller.require(Permission::OwnTokens)?;
        self.store.remove_passkey(caller.household, caller.member, id).await.map_err(|e| match e {
            RepoError::Conflict(Conflict::LastWayIn(_)) => Refusal::LastWayIn(id).into(),
            other => named(ObjectKind::Passkey, id.0)(other),
        })
    }

    fn new_user_handle(&self) -> Result<UserHandle, Error> {
        let secret = self.secrets.new_secret()?;
        Ok(UserHandle(hash_token(&secret)[..32].to_owned()))
    }

    async fn keep(&self, purpose: Purpose, user: Option<UserHandle>, started: Started) -> Result<Begun, Error> {
        let id = self.secrets.new_secret()?;
        let now = self.clock.now();
        let ceremony = Ceremony { purpose, user, state: started.state, expires_at: now + CEREMONY_VALID_FOR };
        self.store.add_ceremony(&hash_token(&id), ceremony, now).await?;
        Ok(Begun { ceremony: id, options: started.options })
    }

    async fn take(&self, id: &str, now: Timestamp) -> Result<Ceremony, Error> {
        Ok(self.store.take_ceremony(&hash_token(id), now).await?.ok_or(Refusal::CeremonyGone)?)
    }
}

/// An error starting a ceremony.
fn setup(e: PasskeyError) -> Error {
    match e {
        PasskeyError::Unavailable(message) => Error::Unavailable { capability: "passkeys", message },
        other => Error::Unexpected(anyhow::anyhow!("starting a passkey ceremony: {other}")),
    }
}

/// A new passkey whose credential is registered already (to anyone).
fn registered_already() -> Error {
    Refusal::PasskeyRefused("it is registered already".into()).into()
}

/// An error checking a credential.
fn refused(e: PasskeyError) -> Error {
    match e {
        PasskeyError::Malformed(m) => Error::Invalid(format!("credential: {m}")),
        PasskeyError::Rejected(reason) => Refusal::PasskeyRefused(reason).into(),
        PasskeyError::Unavailable(message) => Error::Unavailable { capability: "passkeys", message },
        PasskeyError::Unexpected(e) => Error::Unexpected(e),
    }
}

#[cfg(test)]
mod tests;
