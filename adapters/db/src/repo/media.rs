//! `MediaRepo`: the rows naming the blobs of the media store, and each item's cover (its first photo) for the
//! item read path.

use crate::Store;
use crate::entity::{items, media};
use crate::repo::CHUNK;
use crate::repo::history::insert_events;
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect,
};
use std::collections::{HashMap, HashSet};
use trove_application::RepoError;
use trove_application::ports::MediaRepo;
use trove_domain::history::{ObjectKind, Recording, medium_fields};
use trove_domain::item::Item;
use trove_domain::media::{Caption, ContentHash, MediaKind, MediaType, Medium, NewMedium, PixelSize};
use trove_domain::{HouseholdId, ItemId, MediaId, Timestamp};

/// A row as the domain's medium.
fn medium(m: media::Model) -> anyhow::Result<Medium> {
    let id = m.id;
    let hash =
        |h: &str| ContentHash::parse(h).ok_or_else(|| anyhow!("media {id} names a blob {h:?} that is no SHA-256"));
    let size = match (m.width, m.height) {
        (Some(w), Some(h)) => Some(PixelSize {
            width: u32::try_from(w).with_context(|| format!("width of media {id}"))?,
            height: u32::try_from(h).with_context(|| format!("height of media {id}"))?,
        }),
        (None, None) => None,
        _ => return Err(anyhow!("media {id} has half a size")),
    };
    Ok(Medium {
        id: MediaId(id),
        item_id: m.item_id.map(ItemId),
        kind: MediaKind::parse(&m.kind).with_context(|| format!("kind of media {id}"))?,
        media_type: MediaType::parse(&m.media_type)
            .ok_or_else(|| anyhow!("media {id} has the unknown media type {:?}", m.media_type))?,
        bytes: u64::try_from(m.bytes).with_context(|| format!("bytes of media {id}"))?,
        size,
        sha256: hash(&m.sha256)?,
        thumb: m.thumb_sha256.as_deref().map(hash).transpose()?,
        caption: m
            .caption
            .as_deref()
            .map(Caption::new)
            .transpose()
            .with_context(|| format!("caption of media {id}"))?
            .flatten(),
        created_at: m.created_at,
    })
}

fn media_list(rows: Vec<media::Model>) -> anyhow::Result<Vec<Medium>> {
    rows.into_iter().map(medium).collect()
}

async fn find<C: ConnectionTrait>(db: &C, household: HouseholdId, id: MediaId) -> anyhow::Result<Option<media::Model>> {
    media::Entity::find_by_id(id.0)
        .filter(media::Column::HouseholdId.eq(household.0))
        .one(db)
        .await
        .with_context(|| format!("read media {id}"))
}

/// Sets the `cover` of each item: the id of its first photo (the lowest id of kind `photo`), in one query per
/// [`CHUNK`] items.
pub(crate) async fn fill_covers<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    items: &mut [Item],
) -> anyhow::Result<()> {
    let ids: Vec<i64> = items.iter().map(|i| i.id.0).collect();
    let mut covers: HashMap<i64, i64> = HashMap::new();
    for chunk in ids.chunks(CHUNK) {
        let rows: Vec<(Option<i64>, Option<i64>)> = media::Entity::find()
            .select_only()
            .column(media::Column::ItemId)
            .column_as(media::Column::Id.min(), "cover")
            .filter(media::Column::HouseholdId.eq(household.0))
            .filter(media::Column::Kind.eq(MediaKind::Photo.as_str()))
            .filter(media::Column::ItemId.is_in(chunk.iter().copied()))
            .group_by(media::Column::ItemId)
            .into_tuple()
            .all(db)
            .await
            .context("read the items' covers")?;
        covers.extend(rows.into_iter().filter_map(|(item, cover)| Some((item?, cover?))));
    }
    for item in items.iter_mut() {
        item.cover = covers.get(&item.id.0).copied().map(MediaId);
    }
    Ok(())
}

/// Attaches the pending media `ids` (of `household`, on no item) to `item`, inside the caller's transaction.
/// Answers the first id that is not pending media of the household; the caller rolls back then.
/// The media of `ids` in the household, by id (for the events of the media an item took).
pub(crate) async fn media_by_id<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    ids: &[MediaId],
) -> anyhow::Result<Vec<Medium>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(CHUNK) {
        let rows = media::Entity::find()
            .filter(media::Column::HouseholdId.eq(household.0))
            .filter(media::Column::Id.is_in(chunk.iter().map(|m| m.0)))
            .order_by_asc(media::Column::Id)
            .all(db)
            .await
            .context("read media")?;
        for row in rows {
            out.push(medium(row)?);
        }
    }
    out.sort_by_key(|m| m.id.0);
    out.dedup_by_key(|m| m.id.0);
    Ok(out)
}

pub(crate) async fn attach_pending<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    item: ItemId,
    ids: &[MediaId],
) -> anyhow::Result<Option<MediaId>> {
    let mut ids: Vec<i64> = ids.iter().map(|m| m.0).collect();
    ids.sort_unstable();
    ids.dedup();
    for chunk in ids.chunks(CHUNK) {
        let pending: HashSet<i64> = media::Entity::find()
            .select_only()
            .column(media::Column::Id)
            .filter(media::Column::HouseholdId.eq(household.0))
            .filter(media::Column::ItemId.is_null())
            .filter(media::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple::<i64>()
            .all(db)
            .await
            .context("look up the pending media")?
            .into_iter()
            .collect();
        if let Some(missing) = chunk.iter().find(|id| !pending.contains(id)) {
            return Ok(Some(MediaId(*missing)));
        }
        media::Entity::update_many()
            .col_expr(media::Column::ItemId, Expr::value(item.0))
            .filter(media::Column::HouseholdId.eq(household.0))
            .filter(media::Column::ItemId.is_null())
            .filter(media::Column::Id.is_in(chunk.iter().copied()))
            .exec(db)
            .await
            .context("attach the pending media")?;
    }
    Ok(None)
}

#[async_trait]
impl MediaRepo for Store {
    async fn insert(&self, household: HouseholdId, new: NewMedium, rec: &Recording) -> Result<Medium, RepoError> {
        let txn = self.begin_write().await.context("begin the media insert")?;
        if let Some(item) = new.item_id {
            let found = items::Entity::find_by_id(item.0)
                .filter(items::Column::HouseholdId.eq(household.0))
                .count(&txn)
                .await
                .with_context(|| format!("look up item {item}"))?;
            if found == 0 {
                txn.rollback().await.context("roll back the media insert")?;
                return Err(RepoError::NotFound);
            }
        }
        let side = |s: u32| i32::try_from(s).context("a picture's side over 2^31 pixels");
        let row = media::ActiveModel {
            household_id: Set(household.0),
            item_id: Set(new.item_id.map(|i| i.0)),
            kind: Set(new.kind.as_str().to_owned()),
            media_type: Set(new.media_type.mime().to_owned()),
            bytes: Set(i64::try_from(new.bytes).context("a file over 2^63 bytes")?),
            width: Set(new.size.map(|s| side(s.width)).transpose()?),
            height: Set(new.size.map(|s| side(s.height)).transpose()?),
            sha256: Set(new.sha256.as_str().to_owned()),
            thumb_sha256: Set(None),
            caption: Set(new.caption.as_ref().map(|c| c.as_str().to_owned())),
            created_at: Set(rec.at),
            ..Default::default()
        }
        .insert(&txn)
        .await
        .context("insert the media row")?;
        let stored = medium(row)?;
        if stored.item_id.is_some() {
            let event = rec.object(ObjectKind::Media, stored.id.0, None, Some(medium_fields(&stored)));
            insert_events(&txn, household, event.as_slice()).await?;
        }
        txn.commit().await.context("commit the media insert")?;
        Ok(stored)
    }

    async fn get(&self, household: HouseholdId, id: MediaId) -> Result<Medium, RepoError> {
        Ok(medium(find(&self.db, household, id).await?.ok_or(RepoError::NotFound)?)?)
    }

    async fn of_item(&self, household: HouseholdId, item: ItemId) -> Result<Vec<Medium>, RepoError> {
        let rows = media::Entity::find()
            .filter(media::Column::HouseholdId.eq(household.0))
            .filter(media::Column::ItemId.eq(item.0))
            .order_by_asc(media::Column::Id)
            .all(&self.db)
            .await
            .with_context(|| format!("read the media of item {item}"))?;
        Ok(media_list(rows)?)
    }

    async fn on_items(&self, household: HouseholdId) -> Result<Vec<Medium>, RepoError> {
        let rows = media::Entity::find()
            .filter(media::Column::HouseholdId.eq(household.0))
            .filter(media::Column::ItemId.is_not_null())
            .order_by_asc(media::Column::Id)
            .all(&self.db)
            .await
            .with_context(|| format!("read the media of household {household}'s items"))?;
        Ok(media_list(rows)?)
    }

    async fn set_thumb(&self, household: HouseholdId, id: MediaId, thumb: &ContentHash) -> Result<(), RepoError> {
        let written = media::Entity::update_many()
            .col_expr(media::Column::ThumbSha256, Expr::val(thumb.as_str()))
            .filter(media::Column::Id.eq(id.0))
            .filter(media::Column::HouseholdId.eq(household.0))
            .filter(media::Column::ThumbSha256.is_null())
            .exec(&self.db)
            .await
            .with_context(|| format!("record the thumbnail of media {id}"))?;
        if written.rows_affected == 0 && find(&self.db, household, id).await?.is_none() {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    async fn set_caption(
        &self,
        household: HouseholdId,
        id: MediaId,
        caption: Option<Caption>,
        rec: &Recording,
    ) -> Result<Medium, RepoError> {
        let txn = self.begin_write().await.context("begin a caption")?;
        let Some(before) = find(&txn, household, id).await? else {
            txn.rollback().await.context("roll back a caption")?;
            return Err(RepoError::NotFound);
        };
        let before = medium(before)?;
        media::Entity::update_many()
            .col_expr(media::Column::Caption, Expr::val(caption.as_ref().map(|c| c.as_str().to_owned())))
            .filter(media::Column::Id.eq(id.0))
            .filter(media::Column::HouseholdId.eq(household.0))
            .exec(&txn)
            .await
            .with_context(|| format!("write the caption of media {id}"))?;
        let after = medium(find(&txn, household, id).await?.ok_or(RepoError::NotFound)?)?;
        let event = rec.object(ObjectKind::Media, id.0, Some(medium_fields(&before)), Some(medium_fields(&after)));
        insert_events(&txn, household, event.as_slice()).await?;
        txn.commit().await.context("commit a caption")?;
        Ok(after)
    }

    async fn delete(&self, household: HouseholdId, id: MediaId, rec: &Recording) -> Result<Medium, RepoError> {
        let txn = self.begin_write().await.context("begin the media delete")?;
        let Some(row) = find(&txn, household, id).await? else {
            txn.rollback().await.context("roll back the media delete")?;
            return Err(RepoError::NotFound);
        };
        media::Entity::delete_many()
            .filter(media::Column::Id.eq(id.0))
            .filter(media::Column::HouseholdId.eq(household.0))
            .exec(&txn)
            .await
            .with_context(|| format!("delete media {id}"))?;
        let gone = medium(row)?;
        let event = rec.object(ObjectKind::Media, id.0, Some(medium_fields(&gone)), None);
        insert_events(&txn, household, event.as_slice()).await?;
        txn.commit().await.context("commit the media delete")?;
        Ok(gone)
    }

    async fn names(&self, hash: &ContentHash) -> Result<bool, RepoError> {
        let n = media::Entity::find()
            .filter(
                sea_orm::Condition::any()
                    .add(media::Column::Sha256.eq(hash.as_str()))
                    .add(media::Column::ThumbSha256.eq(hash.as_str())),
            )
            .count(&self.db)
            .await
            .with_context(|| format!("look up the rows naming blob {hash}"))?;
        Ok(n > 0)
    }

    async fn hashes(&self) -> Result<HashSet<ContentHash>, RepoError> {
        let rows: Vec<(String, Option<String>)> = media::Entity::find()
            .select_only()
            .column(media::Column::Sha256)
            .column(media::Column::ThumbSha256)
            .into_tuple()
            .all(&self.db)
            .await
            .context("read the blobs the media rows name")?;
        let mut out = HashSet::with_capacity(rows.len());
        for (blob, thumb) in rows {
            for h in std::iter::once(blob).chain(thumb) {
                out.insert(ContentHash::parse(&h).ok_or_else(|| anyhow!("a media row names {h:?}, no SHA-256"))?);
            }
        }
        Ok(out)
    }

    async fn delete_pending(&self, before: Timestamp) -> Result<Vec<Medium>, RepoError> {
        let txn = self.begin_write().await.context("begin the pending media sweep")?;
        let rows = media::Entity::find()
            .filter(media::Column::ItemId.is_null())
            .filter(media::Column::CreatedAt.lt(before))
            .all(&txn)
            .await
            .context("read the pending media")?;
        let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
        for chunk in ids.chunks(CHUNK) {
            media::Entity::delete_many()
                .filter(media::Column::Id.is_in(chunk.iter().copied()))
                .filter(media::Column::ItemId.is_null())
                .exec(&txn)
                .await
                .context("delete the pending media")?;
        }
        txn.commit().await.context("commit the pending media sweep")?;
        Ok(media_list(rows)?)
    }
}
