//! `PasskeyRepo`: members' passkeys and the passkey ceremonies in progress. A ceremony is taken by deleting
//! its row, and only the request whose delete removed it goes on, so a ceremony is finished at most once (also
//! by two processes on one PostgreSQL). Signing up with a passkey is one transaction: the invitation judged and
//! marked used as a password sign-up does (`people::use_invitation`), the member added and their first passkey
//! stored, or nothing.

use crate::Store;
use crate::entity::{members, passkey_ceremonies as ceremonies, passkeys};
use crate::repo::people::{insert_member, use_invitation, used_by};
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use trove_application::ports::PasskeyRepo;
use trove_application::ports::passkeys::{
    Ceremony, CeremonyState, CredentialId, NewPasskey, Passkey, PasskeyKey, Purpose, StoredPasskey, UserHandle,
};
use trove_application::ports::people::{Member, NewMember};
use trove_application::{Conflict, RepoError};
use trove_domain::ids::PasskeyId;
use trove_domain::people::MemberId;
use trove_domain::{HouseholdId, Timestamp};

fn stored(p: passkeys::Model) -> StoredPasskey {
    StoredPasskey {
        passkey: Passkey {
            id: PasskeyId(p.id),
            member: MemberId(p.member_id),
            name: p.name,
            created_at: p.created_at,
            last_used_at: p.last_used_at,
        },
        user: UserHandle(p.user_handle),
        key: PasskeyKey { credential: CredentialId(p.credential_id), serialised: p.passkey },
    }
}

/// Inserts a passkey unless its credential id is registered; answers it.
async fn insert_passkey(db: &impl ConnectionTrait, member: MemberId, new: NewPasskey) -> Result<Passkey, RepoError> {
    let credential = new.key.credential.0.clone();
    let row = passkeys::ActiveModel {
        member_id: Set(member.0),
        name: Set(new.name),
        credential_id: Set(credential.clone()),
        user_handle: Set(new.user.0),
        passkey: Set(new.key.serialised),
        created_at: Set(new.created_at),
        last_used_at: Set(None),
        ..Default::default()
    };
    let written = passkeys::Entity::insert(row)
        .on_conflict(OnConflict::column(passkeys::Column::CredentialId).do_nothing().to_owned())
        .exec_without_returning(db)
        .await
        .context("store a passkey")?;
    if written == 0 {
        return Err(RepoError::Conflict(Conflict::CredentialRegistered));
    }
    let p = passkeys::Entity::find()
        .filter(passkeys::Column::CredentialId.eq(credential))
        .one(db)
        .await
        .context("read the new passkey")?
        .ok_or_else(|| anyhow!("passkey missing right after its creation"))?;
    Ok(stored(p).passkey)
}

fn purpose_row(purpose: &Purpose) -> (&'static str, Option<i64>, Option<String>, Option<String>) {
    match purpose {
        Purpose::SignUp { invitation, name } => ("sign_up", None, Some(invitation.clone()), Some(name.clone())),
        Purpose::SignIn { name, member } => ("sign_in", member.map(|m| m.0), None, Some(name.clone())),
        Purpose::Add { member, name } => ("add", Some(member.0), None, Some(name.clone())),
    }
}

fn ceremony(c: ceremonies::Model) -> anyhow::Result<Ceremony> {
    let name = || c.name.clone().ok_or_else(|| anyhow!("passkey ceremony {} has no name", c.id));
    let purpose = match c.purpose.as_str() {
        "sign_up" => Purpose::SignUp {
            invitation: c.invitation_hash.clone().ok_or_else(|| anyhow!("sign-up ceremony {} has no code", c.id))?,
            name: name()?,
        },
        "sign_in" => Purpose::SignIn { name: name()?, member: c.member_id.map(MemberId) },
        "add" => Purpose::Add {
            member: MemberId(c.member_id.ok_or_else(|| anyhow!("ceremony {} adds to no member", c.id))?),
            name: name()?,
        },
        other => return Err(anyhow!("passkey ceremony {} has an unknown purpose {other:?}", c.id)),
    };
    Ok(Ceremony {
        purpose,
        user: c.user_handle.map(UserHandle),
        state: CeremonyState(c.state),
        expires_at: c.expires_at,
    })
}

#[async_trait]
impl PasskeyRepo for Store {
    async fn add_ceremony(&self, id_hash: &str, c: Ceremony, now: Timestamp) -> Result<(), RepoError> {
        ceremonies::Entity::delete_many()
            .filter(ceremonies::Column::ExpiresAt.lt(now))
            .exec(&self.db)
            .await
            .context("remove expired passkey ceremonies")?;
        let (purpose, member, invitation, name) = purpose_row(&c.purpose);
        let row = ceremonies::ActiveModel {
            id_hash: Set(id_hash.to_owned()),
            purpose: Set(purpose.to_owned()),
            member_id: Set(member),
            invitation_hash: Set(invitation),
            name: Set(name),
            user_handle: Set(c.user.map(|u| u.0)),
            state: Set(c.state.0),
            expires_at: Set(c.expires_at),
            ..Default::default()
        };
        let written = ceremonies::Entity::insert(row)
            .on_conflict(OnConflict::column(ceremonies::Column::IdHash).do_nothing().to_owned())
            .exec_without_returning(&self.db)
            .await
            .context("keep a passkey ceremony")?;
        if written == 0 {
            return Err(RepoError::Conflict(Conflict::AlreadyStored("the passkey ceremony id")));
        }
        Ok(())
    }

    async fn take_ceremony(&self, id_hash: &str, now: Timestamp) -> Result<Option<Ceremony>, RepoError> {
        let found = ceremonies::Entity::find()
            .filter(ceremonies::Column::IdHash.eq(id_hash))
            .one(&self.db)
            .await
            .context("find a passkey ceremony")?;
        let Some(row) = found else { return Ok(None) };
        let taken = ceremonies::Entity::delete_many()
            .filter(ceremonies::Column::Id.eq(row.id))
            .exec(&self.db)
            .await
            .context("take a passkey ceremony")?;
        // Another request took it between the read and the delete.
        if taken.rows_affected == 0 || row.expires_at < now {
            return Ok(None);
        }
        Ok(Some(ceremony(row)?))
    }

    async fn redeem_with_passkey(
        &self,
        code_hash: &str,
        member: NewMember,
        passkey: NewPasskey,
    ) -> Result<Member, RepoError> {
        let txn = self.begin_write().await.context("begin signing up with a passkey")?;
        let invitation = use_invitation(&txn, code_hash, member.created_at).await?;
        // A taken name or credential returns early: the transaction is dropped and nothing is written.
        let added = insert_member(&txn, member).await?;
        insert_passkey(&txn, added.id, passkey).await?;
        used_by(&txn, invitation, added.id).await?;
        crate::repo::history::insert_events(&txn, added.household, &[trove_application::recorder::joined(&added)])
            .await?;
        txn.commit().await.context("commit signing up with a passkey")?;
        Ok(added)
    }

    async fn add_passkey(&self, member: MemberId, passkey: NewPasskey) -> Result<Passkey, RepoError> {
        let txn = self.begin_write().await.context("begin adding a passkey")?;
        let added = insert_passkey(&txn, member, passkey).await?;
        txn.commit().await.context("commit adding a passkey")?;
        Ok(added)
    }

    async fn passkeys(&self, member: MemberId) -> Result<Vec<StoredPasskey>, RepoError> {
        let rows = passkeys::Entity::find()
            .filter(passkeys::Column::MemberId.eq(member.0))
            .order_by_asc(passkeys::Column::Id)
            .all(&self.db)
            .await
            .context("list a member's passkeys")?;
        Ok(rows.into_iter().map(stored).collect())
    }

    async fn user_handle(&self, member: MemberId) -> Result<Option<UserHandle>, RepoError> {
        let row = passkeys::Entity::find()
            .filter(passkeys::Column::MemberId.eq(member.0))
            .order_by_asc(passkeys::Column::Id)
            .one(&self.db)
            .await
            .context("read a member's user handle")?;
        Ok(row.map(|p| UserHandle(p.user_handle)))
    }

    async fn used_passkey(&self, id: PasskeyId, key: PasskeyKey, at: Timestamp) -> Result<(), RepoError> {
        passkeys::Entity::update_many()
            .col_expr(passkeys::Column::Passkey, Expr::value(key.serialised))
            .col_expr(passkeys::Column::LastUsedAt, Expr::value(at))
            .filter(passkeys::Column::Id.eq(id.0))
            .exec(&self.db)
            .await
            .context("record a passkey's use")?;
        Ok(())
    }

    async fn remove_passkey(&self, household: HouseholdId, member: MemberId, id: PasskeyId) -> Result<(), RepoError> {
        let txn = self.begin_write().await.context("begin removing a passkey")?;
        let mut owner = members::Entity::find_by_id(member.0).filter(members::Column::HouseholdId.eq(household.0));
        if txn.get_database_backend() == sea_orm::DbBackend::Postgres {
            // Two removals of a member's last two passkeys must not both see the other one.
            owner = sea_orm::QuerySelect::lock_exclusive(owner);
        }
        let m = owner.one(&txn).await.context("read the passkey's member")?.ok_or(RepoError::NotFound)?;
        let theirs = passkeys::Entity::find()
            .filter(passkeys::Column::MemberId.eq(member.0))
            .all(&txn)
            .await
            .context("read the member's passkeys")?;
        if !theirs.iter().any(|p| p.id == id.0) {
            return Err(RepoError::NotFound);
        }
        if m.password_hash.is_none() && theirs.len() == 1 {
            return Err(RepoError::Conflict(Conflict::LastWayIn(id)));
        }
        passkeys::Entity::delete_by_id(id.0).exec(&txn).await.context("remove a passkey")?;
        txn.commit().await.context("commit removing a passkey")?;
        Ok(())
    }
}
