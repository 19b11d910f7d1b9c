//! `LookupCache`: the instance's cache of product lookups, shared by every process on the database; expired rows
//! are removed as new ones are kept.

use crate::Store;
use crate::entity::lookup_cache;
use anyhow::Context as _;
use async_trait::async_trait;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};
use trove_application::RepoError;
use trove_application::ports::{CachedLookup, LookupCache, ProductCandidate, SourcedCandidate};
use trove_domain::Timestamp;

/// The JSON a cached lookup is kept as.
fn write(lookup: &CachedLookup) -> String {
    let candidates: Vec<Value> = lookup
        .candidates
        .iter()
        .map(|s| {
            let c = &s.candidate;
            json!({
                "source": s.source,
                "fetched_at": s.fetched_at,
                "name": c.name,
                "brand": c.brand,
                "item_type": c.item_type,
                "image_url": c.image_url,
                "attribution": c.attribution,
                "source_url": c.source_url,
            })
        })
        .collect();
    json!({"candidates": candidates, "asked": lookup.asked}).to_string()
}

/// Reads back what [`write`] kept.
fn read(answer: &str, fetched_at: Timestamp) -> anyhow::Result<CachedLookup> {
    let v: Value = serde_json::from_str(answer).context("a cached lookup is not JSON")?;
    let text = |v: &Value, field: &str| v.get(field).and_then(Value::as_str).map(str::to_owned);
    let candidates = v
        .get("candidates")
        .and_then(Value::as_array)
        .context("a cached lookup has no candidates")?
        .iter()
        .map(|c| {
            Ok(SourcedCandidate {
                source: text(c, "source").context("a cached candidate has no source")?,
                fetched_at: c.get("fetched_at").cloned().map(serde_json::from_value).transpose()?.unwrap_or(fetched_at),
                candidate: ProductCandidate {
                    name: text(c, "name").context("a cached candidate has no name")?,
                    brand: text(c, "brand"),
                    item_type: text(c, "item_type"),
                    image_url: text(c, "image_url"),
                    attribution: text(c, "attribution"),
                    source_url: text(c, "source_url").unwrap_or_default(),
                },
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let asked = v
        .get("asked")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    Ok(CachedLookup { candidates, asked, fetched_at })
}

#[async_trait]
impl LookupCache for Store {
    async fn cached(&self, key: &str, now: Timestamp) -> Result<Option<CachedLookup>, RepoError> {
        let row = lookup_cache::Entity::find_by_id(key.to_owned())
            .filter(lookup_cache::Column::ExpiresAt.gt(now))
            .one(&self.db)
            .await
            .context("read a cached lookup")?;
        // A row that cannot be read is as good as none: the providers are asked again and it is replaced.
        Ok(row.and_then(|r| {
            read(&r.answer, r.fetched_at)
                .inspect_err(|e| tracing::warn!(key, error = %e, "a cached lookup could not be read"))
                .ok()
        }))
    }

    async fn keep(&self, key: &str, lookup: CachedLookup, until: Timestamp) -> Result<(), RepoError> {
        let row = lookup_cache::ActiveModel {
            key: Set(key.to_owned()),
            answer: Set(write(&lookup)),
            fetched_at: Set(lookup.fetched_at),
            expires_at: Set(until),
        };
        lookup_cache::Entity::insert(row)
            .on_conflict(
                OnConflict::column(lookup_cache::Column::Key)
                    .update_columns([
                        lookup_cache::Column::Answer,
                        lookup_cache::Column::FetchedAt,
                        lookup_cache::Column::ExpiresAt,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await
            .context("keep a lookup in the cache")?;
        lookup_cache::Entity::delete_many()
            .filter(lookup_cache::Column::ExpiresAt.lte(lookup.fetched_at))
            .exec(&self.db)
            .await
            .context("forget expired lookups")?;
        Ok(())
    }
}
