//! Listing and search paging of items: the filters, sorts and search of a query, the kept totals, and the pages
//! read by revision.

use super::*;

/// The WHERE of a listing: the household and the filters; the search is [`searched`]'s.
pub(super) fn list_condition(backend: DbBackend, household: HouseholdId, query: &ItemQuery) -> sea_orm::Condition {
    let mut cond = sea_orm::Condition::all().add(items::Column::HouseholdId.eq(household.0));
    if let Some(intent) = query.intent {
        cond = cond.add(items::Column::Intent.eq(intent.as_str()));
    }
    if let Some(availability) = query.availability {
        cond = cond.add(items::Column::Availability.eq(availability.as_str()));
    }
    if let Some(item_type) = &query.item_type {
        cond = cond.add(items::Column::ItemType.eq(item_type.as_str()));
    }
    if !query.include_gone {
        cond = cond.add(items::Column::GoneReason.is_null());
    }
    if let Some(tag) = &query.tag {
        cond =
            cond.add(search::values_expr(backend, "LOWER(items.tags) LIKE ? ESCAPE '\\'", [tag_pattern(tag).into()]));
    }
    if query.low_stock {
        // `trove_domain::item::low_stock`, as SQL.
        cond = cond.add(Expr::cust("items.min_quantity IS NOT NULL AND items.quantity <= items.min_quantity"));
    }
    if let Some(filter) = query.place {
        let (h, p) = (household.0, filter.place.0);
        cond = cond.add(if filter.within {
            // The place and every place below it, in one recursive subquery; the depth bound ends the descent
            // even on a tree that somehow holds a cycle.
            // The place and household are bound, so one prepared statement serves every place.
            search::values_expr(
                backend,
                "items.place_id IN (WITH RECURSIVE within(id, depth) AS (\
                   SELECT id, 0 FROM places WHERE id = ? AND household_id = ? \
                   UNION ALL \
                   SELECT places.id, within.depth + 1 FROM places JOIN within ON places.parent_id = within.id \
                   WHERE within.depth < 10000) \
                 SELECT id FROM within)",
                [p.into(), h.into()],
            )
        } else {
            items::Column::PlaceId.eq(p)
        });
    }
    cond
}

/// `select` in the order `sort`, then by id (a stable order, so offsets page it).
pub(super) fn sorted(
    backend: DbBackend,
    mut select: sea_orm::Select<items::Entity>,
    sort: ItemSort,
) -> sea_orm::Select<items::Entity> {
    let order = if sort.descending { Order::Desc } else { Order::Asc };
    let value = match backend {
        DbBackend::Postgres => {
            "COALESCE((items.details::jsonb #>> '{asking_price,minor}')::bigint, \
             (items.details::jsonb #>> '{purchase,price,minor}')::bigint)"
        }
        _ => {
            "COALESCE(json_extract(items.details, '$.asking_price.minor'), \
              json_extract(items.details, '$.purchase.price.minor'))"
        }
    };
    let q = QueryTrait::query(&mut select);
    match sort.key {
        SortKey::Name => {
            q.order_by_expr(Expr::cust("LOWER(items.name)"), order);
        }
        SortKey::Updated => {
            q.order_by_expr(Expr::col((items::Entity, items::Column::UpdatedAt)), order);
        }
        SortKey::Place => {
            // Items in no place last, whichever way.
            q.order_by_expr(Expr::cust("items.search_place = ''"), Order::Asc);
            q.order_by_expr(Expr::cust("LOWER(items.search_place)"), order);
        }
        SortKey::Value => {
            q.order_by_expr(Expr::cust(format!("({value}) IS NULL")), Order::Asc);
            q.order_by_expr(Expr::cust(value), order);
        }
    }
    select.order_by_asc(items::Column::Id)
}

/// The `LIKE` pattern of a tag in the `tags` column (a JSON list of strings): the tag lower-cased, as a quoted
/// JSON string (so it matches a whole tag, never part of one), with `LIKE`'s own characters escaped.
pub(super) fn tag_pattern(tag: &str) -> String {
    let quoted = serde_json::to_string(&tag.trim().to_lowercase()).unwrap_or_default();
    let escaped = quoted.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// The items of `filter` that match the full-text query `text` (see [`search`]).
pub(super) fn searched(backend: DbBackend, filter: sea_orm::Condition, text: &str) -> sea_orm::Select<items::Entity> {
    let mut select = items::Entity::find().filter(filter).filter(search::values_expr(
        backend,
        search::match_condition(backend),
        [text.into()],
    ));
    if backend != DbBackend::Postgres {
        QueryTrait::query(&mut select).join(JoinType::InnerJoin, "items_search", Expr::cust(search::SQLITE_JOIN));
    }
    select
}

/// The filter of a listing written out, without its page: the key of its total in the count cache.
pub(super) fn filter_key(query: &ItemQuery, text: Option<&str>) -> String {
    let filter = ItemQuery { q: None, limit: 0, offset: 0, after: None, ..query.clone() };
    format!("{filter:?} {text:?}")
}

/// The page of a household that does not exist: empty.
pub(super) fn no_page() -> ItemPage {
    ItemPage { items: Vec::new(), total: 0, more: false }
}

impl Store {
    /// The household's item revision (`None`: no such household), as of a moment after this call began: read
    /// by this call or by one that started after it, shared with the calls that arrive while it runs
    /// (`revisions`). Read with `all`, not `one`: `one` adds a bound `LIMIT`, which makes SQLite prepare the
    /// statement again at every run.
    pub(super) async fn revision(&self, household: HouseholdId) -> Result<Option<i64>, RepoError> {
        let read = || async {
            let revision: Vec<i64> = households::Entity::find_by_id(household.0)
                .select_only()
                .column_as(Expr::cust("item_revision"), "item_revision")
                .into_tuple()
                .all(&self.db)
                .await
                .context("read the item revision")?;
            Ok::<_, RepoError>(revision.into_iter().next())
        };
        self.revisions.read(household.0, read).await
    }

    /// The total of a listing and the revision it is current at: kept by the count cache while the household's
    /// item revision is unchanged, counted otherwise. The revision is read before the count, so a total is never
    /// older than its revision. `None` for no such household.
    pub(super) async fn total(
        &self,
        household: HouseholdId,
        key: String,
        all: sea_orm::Select<items::Entity>,
    ) -> Result<Option<(u64, i64)>, RepoError> {
        let Some(revision) = self.revision(household).await? else { return Ok(None) };
        Ok(Some((self.total_at(household, key, all, revision).await?, revision)))
    }

    /// The total of a listing at `revision`, read before: kept, or counted and kept.
    pub(super) async fn total_at(
        &self,
        household: HouseholdId,
        key: String,
        all: sea_orm::Select<items::Entity>,
        revision: i64,
    ) -> Result<u64, RepoError> {
        if let Some(total) = self.counts.get(household.0, &key, revision) {
            return Ok(total);
        }
        let total = all.count(&self.db).await.context("count items")?;
        self.counts.put(household.0, key, revision, total);
        Ok(total)
    }

    /// The rows of a page of the ordered listing `ordered` (offset and limit of `query`), with one row past it
    /// to tell whether more follow.
    pub(super) async fn page_rows(
        &self,
        household: HouseholdId,
        ordered: sea_orm::Select<items::Entity>,
        query: &ItemQuery,
    ) -> Result<Vec<sea_orm::QueryResult>, RepoError> {
        let backend = self.db.get_database_backend();
        let page = Some((u64::from(query.limit) + 1, query.offset));
        let statement = item_rows_statement(backend, household, ordered, page);
        Ok(self.db.query_all_raw(statement).await.context("list items")?)
    }

    /// A page of the listing `all` in the order `ordered` (no search): the rows read first, with the household's
    /// item revision in the same statement, then the total kept at that revision or counted. A repeated page
    /// costs one statement.
    pub(super) async fn plain_page(
        &self,
        household: HouseholdId,
        all: sea_orm::Select<items::Entity>,
        ordered: sea_orm::Select<items::Entity>,
        query: &ItemQuery,
    ) -> Result<ItemPage, RepoError> {
        // The household's id written as a number (an integer only), so the subquery is read once, not per row.
        let revision = Expr::cust(format!(
            "(SELECT households.item_revision FROM households WHERE households.id = {})",
            household.0
        ));
        let rows = self.page_rows(household, ordered.select_only().column_as(revision, "revision"), query).await?;
        let revision = match rows.first() {
            Some(row) => Some(row.try_get::<i64>("", "revision").context("read the item revision")?),
            None => self.revision(household).await?,
        };
        let Some(revision) = revision else { return Ok(no_page()) };
        let total = self.total_at(household, filter_key(query, None), all, revision).await?;
        self.page_of(household, rows, query, (total, revision)).await
    }

    /// A page of the ordered listing `ordered` at the total and revision `counted` (`None`: no such household,
    /// an empty page).
    pub(super) async fn page(
        &self,
        household: HouseholdId,
        ordered: sea_orm::Select<items::Entity>,
        query: &ItemQuery,
        counted: Option<(u64, i64)>,
    ) -> Result<ItemPage, RepoError> {
        let Some(counted) = counted else { return Ok(no_page()) };
        let rows = self.page_rows(household, ordered.select_only(), query).await?;
        self.page_of(household, rows, query, counted).await
    }

    /// The page of `rows` (read with one past the page) at the total and revision `counted`, the paths of its
    /// places kept at that revision, or read once and kept.
    pub(super) async fn page_of(
        &self,
        household: HouseholdId,
        mut rows: Vec<sea_orm::QueryResult>,
        query: &ItemQuery,
        counted: (u64, i64),
    ) -> Result<ItemPage, RepoError> {
        let (total, revision) = counted;
        let more = rows.len() > query.limit as usize;
        rows.truncate(query.limit as usize);
        let mut items = mapping::item_results(&rows)?;
        place_paths(&self.db, household, &mut items, Some((&self.counts, revision))).await?;
        Ok(ItemPage { items, total, more })
    }
}

impl Store {
    /// A page of the listing `query` asks for, leaving out the items `exclude` names (those a code search put
    /// first); `exclude` is empty but for a search.
    pub(super) async fn listing(
        &self,
        household: HouseholdId,
        query: &ItemQuery,
        exclude: &[i64],
    ) -> Result<ItemPage, RepoError> {
        let backend = self.db.get_database_backend();
        let mut filter = list_condition(backend, household, query);
        if !exclude.is_empty() {
            filter = filter.add(items::Column::Id.is_not_in(exclude.iter().copied()));
        }

        let Some(mut search) = query.q.as_deref().and_then(Search::parse) else {
            let all = items::Entity::find().filter(filter);
            if let Some(sort) = query.sort {
                let page = sorted(backend, all.clone(), sort);
                return self.plain_page(household, all, page, query).await;
            }
            let mut page = all.clone();
            if let Some(after) = query.after {
                page = page.filter(items::Column::Id.gt(after.0));
            }
            return self.plain_page(household, all, page.order_by_asc(items::Column::Id), query).await;
        };

        // A search: relevance first, then the id. A word that starts no word of the household's items is
        // given its one typo, only when the search as typed finds nothing.
        let mut text = search.query(backend);
        let mut total = self
            .total(household, excluded_key(query, Some(&text), exclude), searched(backend, filter.clone(), &text))
            .await?;
        if total.is_some_and(|(total, _)| total == 0)
            && let Some(corrected) = search.corrected(&self.db, household).await?
        {
            search = corrected;
            text = search.query(backend);
            total = self
                .total(household, excluded_key(query, Some(&text), exclude), searched(backend, filter.clone(), &text))
                .await?;
        }
        let mut page = searched(backend, filter, &text);
        let relevance = || -> Expr {
            match backend {
                DbBackend::Postgres => search::values_expr(backend, search::relevance(backend), [text.clone().into()]),
                _ => Expr::cust(search::relevance(backend)),
            }
        };
        if let Some(after) = query.after {
            // The items after the cursor's item in this order: ranked below it, or level with it and a greater
            // id. A cursor whose item no longer matches the search ends the walk (an empty page).
            let of = search::relevance_of(backend);
            let (t, a) = (text.clone(), after.0);
            let keyset = match backend {
                DbBackend::Postgres => search::values_expr(
                    backend,
                    &format!("({}, items.id) > ({of}, ?)", search::relevance(backend)),
                    [t.clone().into(), t.clone().into(), sea_orm::Value::from(a), t.into(), a.into()],
                ),
                _ => Expr::cust_with_values(
                    format!("({}, items.id) > ({of}, ?)", search::relevance(backend)),
                    [sea_orm::Value::from(t), a.into(), a.into()],
                ),
            };
            page = page.filter(keyset);
        }
        if let Some(sort) = query.sort {
            // Sorted by a key: paged by offset (the cursor skips), never by the relevance keyset.
            return self.page(household, sorted(backend, page, sort), query, total).await;
        }
        QueryTrait::query(&mut page).order_by_expr(relevance(), Order::Asc);
        self.page(household, page.order_by_asc(items::Column::Id), query, total).await
    }

    /// A search whose `q` is a code some items carry (`holders`, in id order): those items first, then the other
    /// matches of `q`, one listing paged by the query's offset and limit, its total both counted.
    pub(super) async fn code_first(
        &self,
        household: HouseholdId,
        query: &ItemQuery,
        holders: &[i64],
    ) -> Result<ItemPage, RepoError> {
        let n = holders.len() as u64;
        let start = Ord::min(query.offset, n);
        let end = Ord::min(query.offset + u64::from(query.limit), n);
        let ids: Vec<ItemId> = holders[start as usize..end as usize].iter().map(|id| ItemId(*id)).collect();
        let mut items = item_rows_by_id(&self.db, household, &ids, false).await?;
        with_places(&self.db, household, &mut items).await?;
        // The rest of the page from the other matches; a page the holders fill still asks for one row, to tell
        // whether more follow, and for the total.
        let rest = ItemQuery {
            offset: query.offset.saturating_sub(n),
            limit: query.limit - (end - start) as u32,
            ..query.clone()
        };
        let rest = self.listing(household, &rest, holders).await?;
        items.extend(rest.items);
        Ok(ItemPage { items, total: rest.total + n, more: rest.more })
    }
}

/// [`filter_key`] of a listing that leaves out the items `exclude` names.
fn excluded_key(query: &ItemQuery, text: Option<&str>, exclude: &[i64]) -> String {
    if exclude.is_empty() { filter_key(query, text) } else { format!("{} {exclude:?}", filter_key(query, text)) }
}
