//! `SsoRepo`: the single sign-ons on their way (`oidc_sign_ins`) and the provider accounts of members
//! (`oidc_identities`).

use crate::Store;
use crate::entity::{members, oidc_identities as identities, oidc_sign_ins as sign_ins};
use crate::repo::people::{insert_member, member, use_invitation, used_by};
use anyhow::Context as _;
use async_trait::async_trait;
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use trove_application::ports::people::{Member, NewMember};
use trove_application::ports::sso::{PendingSignIn, SsoRepo};
use trove_application::{Conflict, RepoError};
use trove_domain::Timestamp;

#[async_trait]
impl SsoRepo for Store {
    async fn add_sign_in(&self, state_hash: &str, p: PendingSignIn, now: Timestamp) -> Result<(), RepoError> {
        sign_ins::Entity::delete_many()
            .filter(sign_ins::Column::ExpiresAt.lt(now))
            .exec(&self.db)
            .await
            .context("remove expired single sign-ons")?;
        let row = sign_ins::ActiveModel {
            state_hash: Set(state_hash.to_owned()),
            nonce: Set(p.nonce),
            verifier: Set(p.verifier),
            invitation_hash: Set(p.invitation),
            expires_at: Set(p.expires_at),
            ..Default::default()
        };
        let written = sign_ins::Entity::insert(row)
            .on_conflict(OnConflict::column(sign_ins::Column::StateHash).do_nothing().to_owned())
            .exec_without_returning(&self.db)
            .await
            .context("keep a single sign-on")?;
        if written == 0 {
            return Err(RepoError::Conflict(Conflict::AlreadyStored("the single sign-on state")));
        }
        Ok(())
    }

    async fn take_sign_in(&self, state_hash: &str, now: Timestamp) -> Result<Option<PendingSignIn>, RepoError> {
        let found = sign_ins::Entity::find()
            .filter(sign_ins::Column::StateHash.eq(state_hash))
            .one(&self.db)
            .await
            .context("find a single sign-on")?;
        let Some(row) = found else { return Ok(None) };
        let taken = sign_ins::Entity::delete_many()
            .filter(sign_ins::Column::Id.eq(row.id))
            .exec(&self.db)
            .await
            .context("take a single sign-on")?;
        // Another request took it between the read and the delete.
        if taken.rows_affected == 0 || row.expires_at < now {
            return Ok(None);
        }
        Ok(Some(PendingSignIn {
            nonce: row.nonce,
            verifier: row.verifier,
            invitation: row.invitation_hash,
            expires_at: row.expires_at,
        }))
    }

    async fn member_by_identity(
        &self,
        issuer: &str,
        subject: &str,
        at: Timestamp,
    ) -> Result<Option<(Member, bool)>, RepoError> {
        let found = identities::Entity::find()
            .filter(identities::Column::Issuer.eq(issuer))
            .filter(identities::Column::Subject.eq(subject))
            .one(&self.db)
            .await
            .context("find a single sign-on account")?;
        let Some(identity) = found else { return Ok(None) };
        let Some(row) =
            members::Entity::find_by_id(identity.member_id).one(&self.db).await.context("read its member")?
        else {
            return Ok(None);
        };
        identities::Entity::update_many()
            .col_expr(identities::Column::LastUsedAt, Expr::value(at))
            .filter(identities::Column::Id.eq(identity.id))
            .exec(&self.db)
            .await
            .context("record a single sign-on")?;
        Ok(Some((member(row)?, identity.by_group)))
    }

    async fn add_member_with_identity(
        &self,
        invitation: Option<String>,
        new: NewMember,
        issuer: &str,
        subject: &str,
    ) -> Result<Member, RepoError> {
        let at = new.created_at;
        let txn = self.begin_write().await.context("begin signing up with single sign-on")?;
        let used = match &invitation {
            Some(hash) => Some(use_invitation(&txn, hash, at).await?),
            None => None,
        };
        // A taken name or account returns early: the transaction is dropped and nothing is written.
        let added = insert_member(&txn, new).await?;
        let row = identities::ActiveModel {
            member_id: Set(added.id.0),
            issuer: Set(issuer.to_owned()),
            subject: Set(subject.to_owned()),
            by_group: Set(invitation.is_none()),
            created_at: Set(at),
            last_used_at: Set(Some(at)),
            ..Default::default()
        };
        let written = identities::Entity::insert(row)
            .on_conflict(
                OnConflict::columns([identities::Column::Issuer, identities::Column::Subject]).do_nothing().to_owned(),
            )
            .exec_without_returning(&txn)
            .await
            .context("link the single sign-on account")?;
        if written == 0 {
            return Err(RepoError::Conflict(Conflict::AlreadyStored("the single sign-on account")));
        }
        if let Some(id) = used {
            used_by(&txn, id, added.id).await?;
        }
        crate::repo::history::insert_events(&txn, added.household, &[trove_application::recorder::joined(&added)])
            .await?;
        txn.commit().await.context("commit signing up with single sign-on")?;
        Ok(added)
    }
}
