//! The index of items' codes (`item_codes`, `m0021_item_codes`): written with the item, in its transaction, and
//! read by a search by code.

use super::*;
use crate::entity::item_codes;
use sea_orm::sea_query::OnConflict;
use trove_domain::code::Codes;

/// Makes `item`'s rows of the index its `codes` (none while it is gone), inside the caller's transaction: the
/// rows it had are removed first when `replace` (a new item has none). The unique index on (household, key)
/// decides: a code another item holds is written by no one here, and answered as that item's.
///
/// # Errors
/// `Conflict(CodeHeld)` naming the first code another item of the household holds (the caller rolls back);
/// `Unexpected` otherwise.
pub(crate) async fn write_codes<C: ConnectionTrait>(
    txn: &C,
    household: HouseholdId,
    item: ItemId,
    codes: &Codes,
    replace: bool,
) -> Result<(), RepoError> {
    if replace {
        item_codes::Entity::delete_many()
            .filter(item_codes::Column::ItemId.eq(item.0))
            .exec(txn)
            .await
            .with_context(|| format!("remove the codes of item {item}"))?;
    }
    if codes.is_empty() {
        return Ok(());
    }
    let rows = codes.as_slice().iter().map(|c| item_codes::ActiveModel {
        household_id: Set(household.0),
        item_id: Set(item.0),
        kind: Set(c.kind().as_str().to_owned()),
        key: Set(c.key().to_owned()),
        value: Set(c.shown().to_owned()),
        ..Default::default()
    });
    // A key another writer holds, committed or not, is left alone (PostgreSQL waits for that writer to end):
    // fewer rows written than codes given tells it, and no error aborts the transaction.
    let written = item_codes::Entity::insert_many(rows)
        .on_conflict(
            OnConflict::columns([item_codes::Column::HouseholdId, item_codes::Column::Key]).do_nothing().to_owned(),
        )
        .exec_without_returning(txn)
        .await
        .with_context(|| format!("write the codes of item {item}"))?;
    if written as usize == codes.as_slice().len() {
        return Ok(());
    }
    let keys: Vec<&str> = codes.as_slice().iter().map(|c| c.key()).collect();
    let held: Option<(String, i64, String)> = item_codes::Entity::find()
        .select_only()
        .column(item_codes::Column::Key)
        .column(item_codes::Column::ItemId)
        .column_as(Expr::cust("(SELECT items.name FROM items WHERE items.id = item_codes.item_id)"), "name")
        .filter(item_codes::Column::HouseholdId.eq(household.0))
        .filter(item_codes::Column::Key.is_in(keys))
        .filter(item_codes::Column::ItemId.ne(item.0))
        .order_by_asc(item_codes::Column::Id)
        .into_tuple()
        .one(txn)
        .await
        .with_context(|| format!("find who holds a code of item {item}"))?;
    let (key, holder, name) =
        held.ok_or_else(|| anyhow!("a code of item {item} was not written, and no other item holds it"))?;
    let code = codes.find(&key).map_or(key.clone(), ToString::to_string);
    Err(RepoError::Conflict(Conflict::CodeHeld { code, item: ItemId(holder), name }))
}

/// The present items of the household holding the code `key`, in id order (at most one, by the index).
pub(crate) fn holding(household: HouseholdId, key: &str) -> sea_orm::Condition {
    sea_orm::Condition::all().add(
        items::Column::Id.in_subquery(
            item_codes::Entity::find()
                .select_only()
                .column(item_codes::Column::ItemId)
                .filter(item_codes::Column::HouseholdId.eq(household.0))
                .filter(item_codes::Column::Key.eq(key))
                .into_query(),
        ),
    )
}

/// The codes of an import's new rows: `fresh` the items' positions in `items`, `ids` the rows they became.
///
/// # Errors
/// As [`write_codes`]: `Conflict(CodeHeld)` for a code another item holds (one written earlier in the import
/// too).
pub(super) async fn write_fresh_codes<C: ConnectionTrait>(
    txn: &C,
    household: HouseholdId,
    items: &[NewItem],
    fresh: &[usize],
    ids: &[i64],
) -> Result<(), RepoError> {
    for (&n, &id) in fresh.iter().zip(ids) {
        if !items[n].codes.is_empty() {
            write_codes(txn, household, ItemId(id), &items[n].codes, false).await?;
        }
    }
    Ok(())
}
