//! `MemberRepo`, `InvitationRepo`, `SessionRepo` and `TokenRepo`: the people of households and their
//! credentials. Names are unique through `members.name_key`; the last-owner rule and accepting an invitation
//! are one write transaction each (owners' rows locked on PostgreSQL; an invitation's row and its maker's while
//! it is accepted), so concurrent requests never leave a household without an owner, use an invitation twice,
//! or accept one whose maker was removed or demoted meanwhile.

use crate::Store;
use crate::entity::{households, invitations, members, sessions, tokens};
use crate::repo::history::insert_events;
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect,
};
use std::collections::HashMap;
use trove_application::ports::people::{ApiToken, Household, Invitation, Member, NewMember, NewToken, Session};
use trove_application::ports::{InvitationRepo, MemberRepo, SessionRepo, TokenRepo};
use trove_application::recorder::{joined, member_fields};
use trove_application::{Conflict, RepoError};
use trove_domain::history::{ObjectKind, Recording};
use trove_domain::people::{
    InvitationGone, InvitationId, MemberId, MemberName, Role, Scope, SessionId, TokenId, check_invitation,
};
use trove_domain::{HouseholdId, Timestamp};

pub(crate) fn member(m: members::Model) -> anyhow::Result<Member> {
    Ok(Member {
        id: MemberId(m.id),
        household: HouseholdId(m.household_id),
        name: MemberName::new(&m.name).with_context(|| format!("member {} has a bad name", m.id))?,
        role: Role::parse(&m.role).ok_or_else(|| anyhow!("member {} has an unknown role {:?}", m.id, m.role))?,
        created_at: m.created_at,
    })
}

fn api_token(t: &tokens::Model, member: MemberId) -> anyhow::Result<ApiToken> {
    Ok(ApiToken {
        id: TokenId(t.id),
        member,
        name: t.name.clone(),
        scope: Scope::parse(&t.scope).ok_or_else(|| anyhow!("token {} has an unknown scope {:?}", t.id, t.scope))?,
        created_at: t.created_at,
        expires_at: t.expires_at,
        last_used_at: t.last_used_at,
    })
}

/// Inserts a member unless the name key is taken; answers it.
pub(crate) async fn insert_member(db: &impl ConnectionTrait, new: NewMember) -> Result<Member, RepoError> {
    let key = new.name.key();
    let row = members::ActiveModel {
        household_id: Set(new.household.0),
        name: Set(new.name.as_str().to_owned()),
        name_key: Set(key.clone()),
        role: Set(new.role.as_str().to_owned()),
        password_hash: Set(new.password_hash),
        created_at: Set(new.created_at),
        ..Default::default()
    };
    let written = members::Entity::insert(row)
        .on_conflict(OnConflict::column(members::Column::NameKey).do_nothing().to_owned())
        .exec_without_returning(db)
        .await
        .context("add member")?;
    if written == 0 {
        return Err(RepoError::Conflict(Conflict::NameTaken));
    }
    let m = members::Entity::find()
        .filter(members::Column::NameKey.eq(key))
        .one(db)
        .await
        .context("read the new member")?
        .ok_or_else(|| anyhow!("member missing right after its creation"))?;
    Ok(member(m)?)
}

/// Refuses a change that leaves `household` without an owner: `id` is an owner losing the role and no other
/// owner remains. The owners' rows are locked until the transaction ends (PostgreSQL; SQLite's write lock is
/// already held).
async fn keep_an_owner(db: &impl ConnectionTrait, household: HouseholdId, id: MemberId) -> Result<(), RepoError> {
    let mut owners = members::Entity::find()
        .select_only()
        .column(members::Column::Id)
        .filter(members::Column::HouseholdId.eq(household.0))
        .filter(members::Column::Role.eq(Role::Owner.as_str()));
    if db.get_database_backend() == sea_orm::DbBackend::Postgres {
        owners = owners.lock_exclusive();
    }
    let owners: Vec<i64> = owners.into_tuple().all(db).await.context("read the owners")?;
    if owners == [id.0] {
        return Err(RepoError::Conflict(Conflict::LastOwner(id)));
    }
    Ok(())
}

async fn member_in(db: &impl ConnectionTrait, household: HouseholdId, id: MemberId) -> Result<Member, RepoError> {
    let m = members::Entity::find_by_id(id.0)
        .filter(members::Column::HouseholdId.eq(household.0))
        .one(db)
        .await
        .context("read member")?
        .ok_or(RepoError::NotFound)?;
    Ok(member(m)?)
}

#[async_trait]
impl MemberRepo for Store {
    async fn household(&self, id: HouseholdId) -> Result<Household, RepoError> {
        let h = households::Entity::find_by_id(id.0)
            .one(&self.db)
            .await
            .context("read household")?
            .ok_or(RepoError::NotFound)?;
        Ok(Household { id, name: h.name })
    }

    async fn add_member(&self, new: NewMember) -> Result<Member, RepoError> {
        let txn = self.begin_write().await.context("begin adding a member")?;
        let added = insert_member(&txn, new).await?;
        txn.commit().await.context("commit adding a member")?;
        Ok(added)
    }

    async fn member_by_name(&self, name: &MemberName) -> Result<Option<(Member, Option<String>)>, RepoError> {
        let found = members::Entity::find()
            .filter(members::Column::NameKey.eq(name.key()))
            .one(&self.db)
            .await
            .context("find member by name")?;
        match found {
            Some(m) => {
                let hash = m.password_hash.clone();
                Ok(Some((member(m)?, hash)))
            }
            None => Ok(None),
        }
    }

    async fn member(&self, household: HouseholdId, id: MemberId) -> Result<Member, RepoError> {
        member_in(&self.db, household, id).await
    }

    async fn members(&self, household: HouseholdId) -> Result<Vec<Member>, RepoError> {
        let rows = members::Entity::find()
            .filter(members::Column::HouseholdId.eq(household.0))
            .order_by_asc(members::Column::Id)
            .all(&self.db)
            .await
            .context("list members")?;
        Ok(rows.into_iter().map(member).collect::<anyhow::Result<_>>()?)
    }

    async fn set_role(
        &self,
        household: HouseholdId,
        id: MemberId,
        role: Role,
        rec: &Recording,
    ) -> Result<Member, RepoError> {
        let txn = self.begin_write().await.context("begin a role change")?;
        let current = member_in(&txn, household, id).await?;
        if current.role == Role::Owner && role != Role::Owner {
            keep_an_owner(&txn, household, id).await?;
        }
        members::Entity::update_many()
            .col_expr(members::Column::Role, Expr::value(role.as_str()))
            .filter(members::Column::Id.eq(id.0))
            .exec(&txn)
            .await
            .context("change a role")?;
        let changed = Member { role, ..current.clone() };
        let event = rec.object(ObjectKind::Member, id.0, Some(member_fields(&current)), Some(member_fields(&changed)));
        insert_events(&txn, household, event.as_slice()).await?;
        txn.commit().await.context("commit a role change")?;
        Ok(changed)
    }

    async fn remove_member(&self, household: HouseholdId, id: MemberId, rec: &Recording) -> Result<(), RepoError> {
        let txn = self.begin_write().await.context("begin removing a member")?;
        let current = member_in(&txn, household, id).await?;
        if current.role == Role::Owner {
            keep_an_owner(&txn, household, id).await?;
        }
        sessions::Entity::delete_many()
            .filter(sessions::Column::MemberId.eq(id.0))
            .exec(&txn)
            .await
            .context("end the member's sessions")?;
        tokens::Entity::delete_many()
            .filter(tokens::Column::MemberId.eq(id.0))
            .exec(&txn)
            .await
            .context("revoke the member's tokens")?;
        crate::entity::passkeys::Entity::delete_many()
            .filter(crate::entity::passkeys::Column::MemberId.eq(id.0))
            .exec(&txn)
            .await
            .context("remove the member's passkeys")?;
        members::Entity::delete_by_id(id.0).exec(&txn).await.context("remove a member")?;
        let event = rec.object(ObjectKind::Member, id.0, Some(member_fields(&current)), None);
        insert_events(&txn, household, event.as_slice()).await?;
        txn.commit().await.context("commit removing a member")?;
        Ok(())
    }

    async fn first_owner(&self, household: HouseholdId) -> Result<Option<Member>, RepoError> {
        let m = members::Entity::find()
            .filter(members::Column::HouseholdId.eq(household.0))
            .filter(members::Column::Role.eq(Role::Owner.as_str()))
            .order_by_asc(members::Column::Id)
            .one(&self.db)
            .await
            .context("find the first owner")?;
        Ok(m.map(member).transpose()?)
    }
}

#[async_trait]
impl InvitationRepo for Store {
    async fn add_invitation(
        &self,
        household: HouseholdId,
        code_hash: &str,
        role: Role,
        created_by: Option<MemberId>,
        at: Timestamp,
    ) -> Result<(), RepoError> {
        let row = invitations::ActiveModel {
            household_id: Set(household.0),
            code_hash: Set(code_hash.to_owned()),
            role: Set(role.as_str().to_owned()),
            created_by: Set(created_by.map(|m| m.0)),
            created_at: Set(at),
            used_at: Set(None),
            used_by: Set(None),
            ..Default::default()
        };
        let written = invitations::Entity::insert(row)
            .on_conflict(OnConflict::column(invitations::Column::CodeHash).do_nothing().to_owned())
            .exec_without_returning(&self.db)
            .await
            .context("store an invitation")?;
        if written == 0 {
            return Err(RepoError::Conflict(Conflict::AlreadyStored("the invitation code")));
        }
        Ok(())
    }

    async fn invitation(&self, code_hash: &str) -> Result<Option<Invitation>, RepoError> {
        let found = invitations::Entity::find()
            .filter(invitations::Column::CodeHash.eq(code_hash))
            .one(&self.db)
            .await
            .context("find an invitation")?;
        let Some(row) = found else { return Ok(None) };
        Ok(Some(with_maker(&self.db, row, false).await?))
    }

    async fn open_invitations(
        &self,
        household: HouseholdId,
        made_after: Timestamp,
    ) -> Result<Vec<Invitation>, RepoError> {
        let rows = invitations::Entity::find()
            .filter(invitations::Column::HouseholdId.eq(household.0))
            .filter(invitations::Column::UsedAt.is_null())
            .filter(invitations::Column::RevokedAt.is_null())
            .filter(invitations::Column::CreatedAt.gt(made_after))
            .order_by_asc(invitations::Column::Id)
            .all(&self.db)
            .await
            .context("list the open invitations")?;
        let members: HashMap<MemberId, Member> =
            self.members(household).await?.into_iter().map(|m| (m.id, m)).collect();
        Ok(rows
            .into_iter()
            .map(|row| {
                let maker = row.created_by.and_then(|id| members.get(&MemberId(id)).cloned());
                invitation(row, maker)
            })
            .collect::<anyhow::Result<_>>()?)
    }

    async fn revoke_invitation(
        &self,
        household: HouseholdId,
        id: InvitationId,
        at: Timestamp,
    ) -> Result<(), RepoError> {
        let revoked = invitations::Entity::update_many()
            .col_expr(invitations::Column::RevokedAt, Expr::value(at))
            .filter(invitations::Column::Id.eq(id.0))
            .filter(invitations::Column::HouseholdId.eq(household.0))
            .filter(invitations::Column::UsedAt.is_null())
            .filter(invitations::Column::RevokedAt.is_null())
            .exec(&self.db)
            .await
            .context("revoke an invitation")?;
        if revoked.rows_affected == 1 {
            return Ok(());
        }
        // Nothing changed: no such invitation, or it was used or revoked already (neither is ever undone).
        let row = invitations::Entity::find_by_id(id.0)
            .filter(invitations::Column::HouseholdId.eq(household.0))
            .one(&self.db)
            .await
            .context("read an invitation not revoked")?
            .ok_or(RepoError::NotFound)?;
        if row.used_at.is_some() {
            return Err(RepoError::Conflict(Conflict::Invitation(InvitationGone::Used)));
        }
        Ok(())
    }

    async fn redeem(&self, code_hash: &str, new: NewMember) -> Result<Member, RepoError> {
        let txn = self.begin_write().await.context("begin accepting an invitation")?;
        let id = use_invitation(&txn, code_hash, new.created_at).await?;
        // A taken name returns early: the transaction is dropped, so the invitation stays unused.
        let added = insert_member(&txn, new).await?;
        used_by(&txn, id, added.id).await?;
        insert_events(&txn, added.household, &[joined(&added)]).await?;
        txn.commit().await.context("commit accepting an invitation")?;
        Ok(added)
    }
}

/// An invitation's row with its maker as they are now (`None`: made from the command line, or the maker is no
/// longer in the household).
fn invitation(row: invitations::Model, maker: Option<Member>) -> anyhow::Result<Invitation> {
    Ok(Invitation {
        id: InvitationId(row.id),
        household: HouseholdId(row.household_id),
        role: Role::parse(&row.role).ok_or_else(|| anyhow!("invitation {} has an unknown role", row.id))?,
        created_at: row.created_at,
        used: row.used_at.is_some(),
        revoked: row.revoked_at.is_some(),
        created_by: row.created_by.map(MemberId),
        maker,
    })
}

/// An invitation's row with its maker's row as `db` has it now. With `lock_maker`, on PostgreSQL, the maker's
/// row is locked (shared) until the transaction ends, so their role change or removal waits for it, and one
/// that committed first is what is read.
async fn with_maker(
    db: &impl ConnectionTrait,
    row: invitations::Model,
    lock_maker: bool,
) -> Result<Invitation, RepoError> {
    let maker = match row.created_by {
        None => None,
        Some(id) => {
            let mut find = members::Entity::find_by_id(id).filter(members::Column::HouseholdId.eq(row.household_id));
            if lock_maker && db.get_database_backend() == sea_orm::DbBackend::Postgres {
                find = find.lock_shared();
            }
            find.one(db).await.context("read an invitation's maker")?.map(member).transpose()?
        }
    };
    Ok(invitation(row, maker)?)
}

/// Marks the invitation with this code hash used at `at` in `txn`, when the rules accept it there: its row is
/// locked (PostgreSQL; SQLite's write lock is held already) and its maker read in the same transaction, so
/// of concurrent accepts one wins and the others find it used, and a maker removed or demoted meanwhile is
/// seen. Answers the invitation's id.
///
/// # Errors
/// `Conflict(Invitation(reason))` when [`check_invitation`] refuses it; `Unexpected` otherwise.
pub(crate) async fn use_invitation(
    txn: &DatabaseTransaction,
    code_hash: &str,
    at: Timestamp,
) -> Result<InvitationId, RepoError> {
    let mut find = invitations::Entity::find().filter(invitations::Column::CodeHash.eq(code_hash));
    if txn.get_database_backend() == sea_orm::DbBackend::Postgres {
        find = find.lock_exclusive();
    }
    let row = find
        .one(txn)
        .await
        .context("read the invitation to accept")?
        .ok_or(RepoError::Conflict(Conflict::Invitation(InvitationGone::Unknown)))?;
    let found = with_maker(txn, row, true).await?;
    check_invitation(&found.state(), at).map_err(|gone| RepoError::Conflict(Conflict::Invitation(gone)))?;
    let used = invitations::Entity::update_many()
        .col_expr(invitations::Column::UsedAt, Expr::value(at))
        .filter(invitations::Column::Id.eq(found.id.0))
        .filter(invitations::Column::UsedAt.is_null())
        .filter(invitations::Column::RevokedAt.is_null())
        .exec(txn)
        .await
        .context("mark the invitation used")?;
    // The write's own guard; under the row's lock it always writes.
    if used.rows_affected == 0 {
        return Err(RepoError::Conflict(Conflict::Invitation(InvitationGone::Used)));
    }
    Ok(found.id)
}

/// Notes who accepted the invitation `id`.
pub(crate) async fn used_by(txn: &DatabaseTransaction, id: InvitationId, member: MemberId) -> Result<(), RepoError> {
    invitations::Entity::update_many()
        .col_expr(invitations::Column::UsedBy, Expr::value(member.0))
        .filter(invitations::Column::Id.eq(id.0))
        .exec(txn)
        .await
        .context("note who used the invitation")?;
    Ok(())
}

#[async_trait]
impl SessionRepo for Store {
    async fn add_session(&self, member: MemberId, hash: &str, at: Timestamp) -> Result<SessionId, RepoError> {
        let txn = self.begin_write().await.context("begin a session")?;
        let row = sessions::ActiveModel {
            member_id: Set(member.0),
            hash: Set(hash.to_owned()),
            created_at: Set(at),
            last_seen_at: Set(at),
            ..Default::default()
        }
        .insert(&txn)
        .await
        .context("store a session")?;
        txn.commit().await.context("commit a session")?;
        Ok(SessionId(row.id))
    }

    async fn session(&self, hash: &str) -> Result<Option<Session>, RepoError> {
        let found = sessions::Entity::find()
            .filter(sessions::Column::Hash.eq(hash))
            .one(&self.db)
            .await
            .context("find a session")?;
        let Some(s) = found else { return Ok(None) };
        let m = members::Entity::find_by_id(s.member_id).one(&self.db).await.context("read a session's member")?;
        let Some(m) = m else { return Ok(None) };
        Ok(Some(Session { id: SessionId(s.id), member: member(m)?, last_seen: s.last_seen_at }))
    }

    async fn touch_session(&self, id: SessionId, at: Timestamp) -> Result<(), RepoError> {
        sessions::Entity::update_many()
            .col_expr(sessions::Column::LastSeenAt, Expr::value(at))
            .filter(sessions::Column::Id.eq(id.0))
            .exec(&self.db)
            .await
            .context("touch a session")?;
        Ok(())
    }

    async fn end_session(&self, id: SessionId) -> Result<(), RepoError> {
        sessions::Entity::delete_by_id(id.0).exec(&self.db).await.context("end a session")?;
        Ok(())
    }

    async fn end_sessions(&self, member: MemberId) -> Result<u64, RepoError> {
        let done = sessions::Entity::delete_many()
            .filter(sessions::Column::MemberId.eq(member.0))
            .exec(&self.db)
            .await
            .context("end a member's sessions")?;
        Ok(done.rows_affected)
    }
}

#[async_trait]
impl TokenRepo for Store {
    async fn add_token(&self, new: NewToken) -> Result<ApiToken, RepoError> {
        let row = tokens::ActiveModel {
            hash: Set(new.hash.clone()),
            household_id: Set(new.household.0),
            name: Set(new.name),
            created_at: Set(new.created_at),
            member_id: Set(Some(new.member.0)),
            scope: Set(new.scope.as_str().to_owned()),
            expires_at: Set(new.expires_at),
            last_used_at: Set(None),
            ..Default::default()
        };
        let written = tokens::Entity::insert(row)
            .on_conflict(OnConflict::column(tokens::Column::Hash).do_nothing().to_owned())
            .exec_without_returning(&self.db)
            .await
            .context("store a token hash")?;
        if written == 0 {
            return Err(RepoError::Conflict(Conflict::AlreadyStored("the token")));
        }
        let t = tokens::Entity::find()
            .filter(tokens::Column::Hash.eq(new.hash))
            .one(&self.db)
            .await
            .context("read the new token")?
            .ok_or_else(|| anyhow!("token missing right after its creation"))?;
        Ok(api_token(&t, new.member)?)
    }

    async fn token(&self, hash: &str) -> Result<Option<(ApiToken, Member)>, RepoError> {
        let found =
            tokens::Entity::find().filter(tokens::Column::Hash.eq(hash)).one(&self.db).await.context("find a token")?;
        let Some(t) = found else { return Ok(None) };
        let Some(member_id) = t.member_id else { return Ok(None) };
        let m = members::Entity::find_by_id(member_id).one(&self.db).await.context("read a token's member")?;
        let Some(m) = m else { return Ok(None) };
        Ok(Some((api_token(&t, MemberId(member_id))?, member(m)?)))
    }

    async fn tokens(&self, household: HouseholdId, member: Option<MemberId>) -> Result<Vec<ApiToken>, RepoError> {
        let mut query = tokens::Entity::find()
            .filter(tokens::Column::HouseholdId.eq(household.0))
            .filter(tokens::Column::MemberId.is_not_null());
        if let Some(m) = member {
            query = query.filter(tokens::Column::MemberId.eq(m.0));
        }
        let rows = query.order_by_asc(tokens::Column::Id).all(&self.db).await.context("list tokens")?;
        Ok(rows
            .iter()
            .map(|t| api_token(t, MemberId(t.member_id.unwrap_or_default())))
            .collect::<anyhow::Result<_>>()?)
    }

    async fn revoke_token(
        &self,
        household: HouseholdId,
        id: TokenId,
        member: Option<MemberId>,
    ) -> Result<(), RepoError> {
        let mut delete = tokens::Entity::delete_many()
            .filter(tokens::Column::Id.eq(id.0))
            .filter(tokens::Column::HouseholdId.eq(household.0));
        if let Some(m) = member {
            delete = delete.filter(tokens::Column::MemberId.eq(m.0));
        }
        let done = delete.exec(&self.db).await.context("revoke a token")?;
        if done.rows_affected == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    async fn touch_token(&self, id: TokenId, at: Timestamp) -> Result<(), RepoError> {
        tokens::Entity::update_many()
            .col_expr(tokens::Column::LastUsedAt, Expr::value(at))
            .filter(tokens::Column::Id.eq(id.0))
            .exec(&self.db)
            .await
            .context("touch a token")?;
        Ok(())
    }
}
