//! `LendingRepo` and `ReminderRepo`: loans (their units taken from the item in one conditional write), schedules
//! and the maintenance log, what falls due, members' channels and calendar keys, and the reminders each process
//! claims before it delivers them.

use crate::Store;
use crate::entity::{households, items, loans, maintenance, notification_settings, reminders, schedules};
use crate::mapping::to_json;
use crate::repo::history::insert_event;
use crate::repo::inventory::find_item;
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use chrono::NaiveDate;
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseTransaction, DbBackend, EntityTrait,
    FromQueryResult, QueryFilter, QueryOrder, QuerySelect, Statement,
};
use std::collections::HashMap;
use trove_application::RepoError;
use trove_application::ports::{
    Channels, LendingRepo, LoanFilter, Logged, NewLoan, NewReminder, Reminder, ReminderRepo, Subscriber,
};
use trove_domain::history::{self, ObjectKind, Recording};
use trove_domain::ids::{LoanId, ScheduleId};
use trove_domain::item::{Availability, Item};
use trove_domain::loan::{Borrower, Done, Due, DueKind, Every, Loan, Schedule};
use trove_domain::money::{Currency, Money};
use trove_domain::people::MemberId;
use trove_domain::{HouseholdId, ItemId, Timestamp};

fn loan_of(row: loans::Model, item_name: String) -> anyhow::Result<Loan> {
    let to = match row.member_id {
        Some(m) => Borrower::Member(m),
        None => Borrower::Named { name: row.borrower_name.clone(), contact: row.contact.clone() },
    };
    Ok(Loan {
        id: LoanId(row.id),
        item: ItemId(row.item_id),
        item_name,
        units: u32::try_from(row.units).map_err(|_| anyhow!("loan {} lends {} units", row.id, row.units))?,
        to,
        to_name: row.borrower_name,
        since: row.since,
        due: row.due,
        note: row.note,
        returned_at: row.returned_at,
        created_by: row.created_by.map(MemberId),
    })
}

fn every_of(days: Option<i64>, months: Option<i64>, id: i64) -> anyhow::Result<Every> {
    let n = |v: i64| u32::try_from(v).map_err(|_| anyhow!("schedule {id} comes round every {v}"));
    match (days, months) {
        (Some(d), None) => Ok(Every::Days(n(d)?)),
        (None, Some(m)) => Ok(Every::Months(n(m)?)),
        _ => Err(anyhow!("schedule {id} has no single period")),
    }
}

fn schedule_of(row: schedules::Model, item_name: String) -> anyhow::Result<Schedule> {
    Ok(Schedule {
        id: ScheduleId(row.id),
        item: ItemId(row.item_id),
        item_name,
        title: row.title,
        every: every_of(row.every_days, row.every_months, row.id)?,
        next: row.next,
    })
}

/// The names of the household's items of `ids`.
async fn item_names<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    ids: impl IntoIterator<Item = i64>,
) -> anyhow::Result<HashMap<i64, String>> {
    let mut ids: Vec<i64> = ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(1_000) {
        let rows: Vec<(i64, String)> = items::Entity::find()
            .select_only()
            .columns([items::Column::Id, items::Column::Name])
            .filter(items::Column::HouseholdId.eq(household.0))
            .filter(items::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(db)
            .await
            .context("read item names")?;
        out.extend(rows);
    }
    Ok(out)
}

async fn loans_of<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    rows: Vec<loans::Model>,
) -> anyhow::Result<Vec<Loan>> {
    let names = item_names(db, household, rows.iter().map(|r| r.item_id)).await?;
    rows.into_iter()
        .map(|r| {
            let name = names.get(&r.item_id).cloned().unwrap_or_default();
            loan_of(r, name)
        })
        .collect()
}

/// Writes the item's shown loan (`items.loan`): of its open loans, the one due back first.
async fn keep_shown_loan(txn: &DatabaseTransaction, household: HouseholdId, item: ItemId) -> anyhow::Result<()> {
    let open = loans::Entity::find()
        .filter(loans::Column::HouseholdId.eq(household.0))
        .filter(loans::Column::ItemId.eq(item.0))
        .filter(loans::Column::ReturnedAt.is_null())
        .all(txn)
        .await
        .context("read the item's open loans")?;
    // The shown loan names its borrower, not its item: no names to read.
    let open = open.into_iter().map(|r| loan_of(r, String::new())).collect::<anyhow::Result<Vec<_>>>()?;
    let shown = Loan::shown_of(&open).map(|l| to_json(&l.on_loan(), "loan")).transpose()?;
    items::Entity::update_many()
        .col_expr(items::Column::Loan, Expr::val(shown))
        .filter(items::Column::Id.eq(item.0))
        .exec(txn)
        .await
        .context("keep the item's loan")?;
    Ok(())
}

async fn found_item(txn: &DatabaseTransaction, household: HouseholdId, item: ItemId) -> Result<Item, RepoError> {
    find_item(txn, household, item, None).await?.ok_or(RepoError::NotFound)
}

#[async_trait]
impl LendingRepo for Store {
    async fn lend(&self, household: HouseholdId, new: &NewLoan, rec: &Recording) -> Result<(Loan, Item), RepoError> {
        let item = new.item;
        let txn = self.begin_write().await.context("begin the loan")?;
        let before = found_item(&txn, household, item).await?;
        let units = i64::from(new.units);
        let update = items::Entity::update_many()
            .col_expr(items::Column::Version, Expr::col(items::Column::Version).add(1))
            .col_expr(items::Column::UpdatedAt, Expr::val(rec.at))
            .filter(items::Column::Id.eq(item.0))
            .filter(items::Column::HouseholdId.eq(household.0))
            .filter(items::Column::GoneReason.is_null())
            .filter(items::Column::Availability.eq(Availability::Available.as_str()));
        // `Item::lendable` in the statement: an item lent whole is taken at the version read; a stock's units
        // neither held nor lent must still cover the loan. The row's lock (SQLite's one writer) makes it one step.
        let update = if new.whole {
            update
                .col_expr(items::Column::Availability, Expr::val(Availability::Lent.as_str()))
                .filter(items::Column::Version.eq(new.version))
        } else {
            update.col_expr(items::Column::UnitsLent, Expr::col(items::Column::UnitsLent).add(units)).filter(
                Expr::col(items::Column::Quantity)
                    .sub(Expr::col(items::Column::UnitsHeld))
                    .sub(Expr::col(items::Column::UnitsLent))
                    .gte(units),
            )
        };
        let written = update.exec(&txn).await.with_context(|| format!("lend item {item}"))?;
        if written.rows_affected != 1 {
            txn.rollback().await.context("roll back the loan")?;
            return Err(RepoError::Stale(item));
        }
        let (member_id, contact) = match &new.to {
            Borrower::Member(m) => (Some(*m), None),
            Borrower::Named { contact, .. } => (None, contact.clone()),
        };
        let row = loans::ActiveModel {
            household_id: Set(household.0),
            item_id: Set(item.0),
            units: Set(units),
            member_id: Set(member_id),
            borrower_name: Set(new.to_name.clone()),
            contact: Set(contact),
            since: Set(new.since),
            due: Set(new.due),
            note: Set(new.note.clone()),
            returned_at: Set(None),
            created_by: Set(rec.member.map(|m| m.0)),
            created_at: Set(rec.at),
            ..Default::default()
        }
        .insert(&txn)
        .await
        .context("write the loan")?;
        let loan = loan_of(row, before.name.to_string())?;
        keep_shown_loan(&txn, household, item).await?;
        let after = found_item(&txn, household, item).await?;
        let event =
            rec.event(ObjectKind::Item, item.0, history::loan_changes(&loan, true, new.whole), Some(after.version));
        insert_event(&txn, household, &event).await?;
        txn.commit().await.context("commit the loan")?;
        Ok((loan, after))
    }

    async fn give_back(&self, household: HouseholdId, id: LoanId, rec: &Recording) -> Result<Option<Loan>, RepoError> {
        let txn = self.begin_write().await.context("begin the return")?;
        let row = loans::Entity::find_by_id(id.0)
            .filter(loans::Column::HouseholdId.eq(household.0))
            .one(&txn)
            .await
            .context("read the loan")?
            .ok_or(RepoError::NotFound)?;
        let closed = loans::Entity::update_many()
            .col_expr(loans::Column::ReturnedAt, Expr::val(rec.at))
            .filter(loans::Column::Id.eq(id.0))
            .filter(loans::Column::ReturnedAt.is_null())
            .exec(&txn)
            .await
            .context("mark the loan returned")?;
        if closed.rows_affected != 1 {
            txn.rollback().await.context("roll back the return")?;
            return Ok(None);
        }
        let item = ItemId(row.item_id);
        let before = found_item(&txn, household, item).await?;
        let units = row.units;
        // A stock's units lent go back; an item lent whole is `lent` with no units counted, and becomes
        // available again.
        let whole = i64::from(before.units_lent) < units && before.availability == Availability::Lent;
        let update = items::Entity::update_many()
            .col_expr(items::Column::Version, Expr::col(items::Column::Version).add(1))
            .col_expr(items::Column::UpdatedAt, Expr::val(rec.at))
            .filter(items::Column::Id.eq(item.0));
        let update = if whole {
            update.col_expr(items::Column::Availability, Expr::val(Availability::Available.as_str()))
        } else {
            update.col_expr(items::Column::UnitsLent, Expr::col(items::Column::UnitsLent).sub(units))
        };
        update.exec(&txn).await.with_context(|| format!("give item {item} its units back"))?;
        let mut loan = loan_of(row, before.name.to_string())?;
        loan.returned_at = Some(rec.at);
        keep_shown_loan(&txn, household, item).await?;
        let after = found_item(&txn, household, item).await?;
        let event =
            rec.event(ObjectKind::Item, item.0, history::loan_changes(&loan, false, whole), Some(after.version));
        insert_event(&txn, household, &event).await?;
        txn.commit().await.context("commit the return")?;
        Ok(Some(loan))
    }

    async fn loan(&self, household: HouseholdId, id: LoanId) -> Result<Loan, RepoError> {
        let row = loans::Entity::find_by_id(id.0)
            .filter(loans::Column::HouseholdId.eq(household.0))
            .one(&self.db)
            .await
            .context("read the loan")?
            .ok_or(RepoError::NotFound)?;
        Ok(loans_of(&self.db, household, vec![row]).await?.remove(0))
    }

    async fn loans(&self, household: HouseholdId, filter: LoanFilter) -> Result<Vec<Loan>, RepoError> {
        let mut query = loans::Entity::find().filter(loans::Column::HouseholdId.eq(household.0));
        if filter.open {
            query = query.filter(loans::Column::ReturnedAt.is_null());
        }
        if let Some(item) = filter.item {
            query = query.filter(loans::Column::ItemId.eq(item.0));
        }
        if let Some(member) = filter.member {
            query = query.filter(loans::Column::MemberId.eq(member.0));
        }
        let rows = query.order_by_desc(loans::Column::Id).all(&self.db).await.context("list loans")?;
        let mut all = loans_of(&self.db, household, rows).await?;
        // Open ones due back first (those without a date after), then the returned, last returned first.
        all.sort_by_key(|l| {
            (l.returned_at.is_some(), l.due.is_none(), l.due, std::cmp::Reverse(l.returned_at), l.since, l.id)
        });
        Ok(all)
    }

    async fn add_schedule(
        &self,
        household: HouseholdId,
        item: ItemId,
        title: &str,
        every: Every,
        next: NaiveDate,
        rec: &Recording,
    ) -> Result<Schedule, RepoError> {
        let txn = self.begin_write().await.context("begin the schedule")?;
        let found = found_item(&txn, household, item).await?;
        let (days, months) = match every {
            Every::Days(d) => (Some(i64::from(d)), None),
            Every::Months(m) => (None, Some(i64::from(m))),
        };
        let row = schedules::ActiveModel {
            household_id: Set(household.0),
            item_id: Set(item.0),
            title: Set(title.to_owned()),
            every_days: Set(days),
            every_months: Set(months),
            next: Set(next),
            created_at: Set(rec.at),
            ..Default::default()
        }
        .insert(&txn)
        .await
        .context("write the schedule")?;
        let schedule = schedule_of(row, found.name.to_string())?;
        let changes = history::schedule_changes(&schedule);
        insert_event(&txn, household, &rec.event(ObjectKind::Item, item.0, changes, None)).await?;
        txn.commit().await.context("commit the schedule")?;
        Ok(schedule)
    }

    async fn schedule(&self, household: HouseholdId, id: ScheduleId) -> Result<Schedule, RepoError> {
        let row = schedules::Entity::find_by_id(id.0)
            .filter(schedules::Column::HouseholdId.eq(household.0))
            .one(&self.db)
            .await
            .context("read the schedule")?
            .ok_or(RepoError::NotFound)?;
        let names = item_names(&self.db, household, [row.item_id]).await?;
        let name = names.get(&row.item_id).cloned().unwrap_or_default();
        Ok(schedule_of(row, name)?)
    }

    async fn schedules(&self, household: HouseholdId, item: Option<ItemId>) -> Result<Vec<Schedule>, RepoError> {
        let mut query = schedules::Entity::find().filter(schedules::Column::HouseholdId.eq(household.0));
        if let Some(item) = item {
            query = query.filter(schedules::Column::ItemId.eq(item.0));
        }
        let rows = query
            .order_by_asc(schedules::Column::Next)
            .order_by_asc(schedules::Column::Id)
            .all(&self.db)
            .await
            .context("list schedules")?;
        let names = item_names(&self.db, household, rows.iter().map(|r| r.item_id)).await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let name = names.get(&r.item_id).cloned().unwrap_or_default();
                schedule_of(r, name)
            })
            .collect::<anyhow::Result<_>>()?)
    }

    async fn done(
        &self,
        household: HouseholdId,
        done: &Done,
        was: NaiveDate,
        next: NaiveDate,
        rec: &Recording,
    ) -> Result<Option<Schedule>, RepoError> {
        let id = done.schedule.ok_or_else(|| anyhow!("maintenance done on no schedule"))?;
        let txn = self.begin_write().await.context("begin the maintenance")?;
        let row = schedules::Entity::find_by_id(id.0)
            .filter(schedules::Column::HouseholdId.eq(household.0))
            .one(&txn)
            .await
            .context("read the schedule")?
            .ok_or(RepoError::NotFound)?;
        let moved = schedules::Entity::update_many()
            .col_expr(schedules::Column::Next, Expr::val(next))
            .filter(schedules::Column::Id.eq(id.0))
            .filter(schedules::Column::Next.eq(was))
            .exec(&txn)
            .await
            .context("move the schedule on")?;
        if moved.rows_affected != 1 {
            txn.rollback().await.context("roll back the maintenance")?;
            return Ok(None);
        }
        maintenance::ActiveModel {
            household_id: Set(household.0),
            item_id: Set(done.item.0),
            schedule_id: Set(Some(id.0)),
            title: Set(done.title.clone()),
            at: Set(done.at),
            note: Set(done.note.clone()),
            cost_minor: Set(done.cost.map(|c| c.minor)),
            cost_currency: Set(done.cost.map(|c| c.currency.as_str().to_owned())),
            member_id: Set(done.member.map(|m| m.0)),
            recorded_at: Set(rec.at),
            ..Default::default()
        }
        .insert(&txn)
        .await
        .context("log the maintenance")?;
        let names = item_names(&txn, household, [row.item_id]).await?;
        let name = names.get(&row.item_id).cloned().unwrap_or_default();
        let before = schedule_of(row, name)?;
        let after = Schedule { next, ..before.clone() };
        let changes = history::maintenance_changes(done, &before, &after);
        insert_event(&txn, household, &rec.event(ObjectKind::Item, done.item.0, changes, None)).await?;
        txn.commit().await.context("commit the maintenance")?;
        Ok(Some(after))
    }

    async fn maintenance(&self, household: HouseholdId, item: ItemId) -> Result<Vec<Logged>, RepoError> {
        let rows = maintenance::Entity::find()
            .filter(maintenance::Column::HouseholdId.eq(household.0))
            .filter(maintenance::Column::ItemId.eq(item.0))
            .order_by_desc(maintenance::Column::At)
            .order_by_desc(maintenance::Column::Id)
            .all(&self.db)
            .await
            .context("read the maintenance log")?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let cost = match (r.cost_minor, &r.cost_currency) {
                    (Some(minor), Some(code)) => Some(Money {
                        minor,
                        currency: Currency::new(code).map_err(|e| anyhow!("maintenance {}: {e}", r.id))?,
                    }),
                    _ => None,
                };
                Ok(Logged {
                    id: r.id,
                    done: Done {
                        item: ItemId(r.item_id),
                        schedule: r.schedule_id.map(ScheduleId),
                        title: r.title,
                        at: r.at,
                        note: r.note,
                        cost,
                        member: r.member_id.map(MemberId),
                    },
                    recorded_at: r.recorded_at,
                })
            })
            .collect::<anyhow::Result<_>>()?)
    }

    async fn due(&self, household: HouseholdId, today: NaiveDate, until: NaiveDate) -> Result<Vec<Due>, RepoError> {
        let loans = loans::Entity::find()
            .filter(loans::Column::HouseholdId.eq(household.0))
            .filter(loans::Column::ReturnedAt.is_null())
            .filter(loans::Column::Due.lte(until))
            .all(&self.db)
            .await
            .context("read the loans due")?;
        let schedules = schedules::Entity::find()
            .filter(schedules::Column::HouseholdId.eq(household.0))
            .filter(schedules::Column::Next.lte(until))
            .all(&self.db)
            .await
            .context("read the maintenance due")?;
        let backend = self.db.get_database_backend();
        let warranty = match backend {
            DbBackend::Postgres => "(details::jsonb ->> 'warranty_until')",
            _ => "json_extract(details, '$.warranty_until')",
        };
        let (a, b, c) = match backend {
            DbBackend::Postgres => ("$1", "$2", "$3"),
            _ => ("?", "?", "?"),
        };
        // Most items have no details (`{}`): the text test skips them before any JSON is read.
        let sql = format!(
            "SELECT id, name, {warranty} AS until FROM items WHERE household_id = {a} AND gone_reason IS NULL \
             AND details LIKE '%warranty_until%' AND {warranty} >= {b} AND {warranty} <= {c}"
        );
        let rows = self
            .db
            .query_all_raw(Statement::from_sql_and_values(
                backend,
                sql,
                [
                    household.0.into(),
                    today.format("%Y-%m-%d").to_string().into(),
                    until.format("%Y-%m-%d").to_string().into(),
                ],
            ))
            .await
            .context("read the warranties ending")?;
        let names =
            item_names(&self.db, household, loans.iter().map(|l| l.item_id).chain(schedules.iter().map(|s| s.item_id)))
                .await?;
        let name = |id: i64| names.get(&id).cloned().unwrap_or_default();
        let mut out = Vec::with_capacity(loans.len() + schedules.len() + rows.len());
        for l in loans {
            let Some(on) = l.due else { continue };
            let what = Due::loan_what(&l.borrower_name, u32::try_from(l.units).unwrap_or(u32::MAX));
            out.push(Due {
                on,
                kind: DueKind::LoanBack,
                item: ItemId(l.item_id),
                item_name: name(l.item_id),
                what,
                source: l.id,
            });
        }
        for s in schedules {
            out.push(Due {
                on: s.next,
                kind: DueKind::Maintenance,
                item: ItemId(s.item_id),
                item_name: name(s.item_id),
                what: s.title,
                source: s.id,
            });
        }
        for row in rows {
            let id: i64 = row.try_get("", "id").context("read a warranty")?;
            let item_name: String = row.try_get("", "name").context("read a warranty")?;
            let until: String = row.try_get("", "until").context("read a warranty")?;
            let on = NaiveDate::parse_from_str(&until, "%Y-%m-%d")
                .with_context(|| format!("item {id}'s warranty_until {until:?}"))?;
            out.push(Due {
                on,
                kind: DueKind::WarrantyEnds,
                item: ItemId(id),
                item_name,
                what: Due::WARRANTY_WHAT.to_owned(),
                source: id,
            });
        }
        Ok(out)
    }
}

fn channels_of(row: &notification_settings::Model) -> anyhow::Result<Channels> {
    Ok(Channels {
        email: row.email.clone(),
        urls: serde_json::from_str(&row.urls).with_context(|| format!("urls of member {}", row.member_id))?,
        lead_days: u32::try_from(row.lead_days).unwrap_or(0),
    })
}

fn reminder_of(r: reminders::Model) -> Reminder {
    Reminder {
        id: r.id,
        household: HouseholdId(r.household_id),
        member: MemberId(r.member_id),
        key: r.key,
        channel: r.channel,
        item: ItemId(r.item_id),
        subject: r.subject,
        body: r.body,
        status: r.status,
        attempts: u32::try_from(r.attempts).unwrap_or(0),
        last_error: r.last_error,
        created_at: r.created_at,
        next_try_at: r.next_try_at,
        sent_at: r.sent_at,
    }
}

#[async_trait]
impl ReminderRepo for Store {
    async fn channels(&self, member: MemberId) -> Result<Option<Channels>, RepoError> {
        let row = notification_settings::Entity::find_by_id(member.0)
            .one(&self.db)
            .await
            .context("read the member's channels")?;
        Ok(row.map(|r| channels_of(&r)).transpose()?)
    }

    async fn set_channels(&self, household: HouseholdId, member: MemberId, c: &Channels) -> Result<(), RepoError> {
        let row = notification_settings::ActiveModel {
            member_id: Set(member.0),
            household_id: Set(household.0),
            email: Set(c.email.clone()),
            urls: Set(to_json(&c.urls, "urls")?),
            lead_days: Set(i64::from(c.lead_days)),
            calendar_key: Set(None),
        };
        notification_settings::Entity::insert(row)
            .on_conflict(
                OnConflict::column(notification_settings::Column::MemberId)
                    .update_columns([
                        notification_settings::Column::Email,
                        notification_settings::Column::Urls,
                        notification_settings::Column::LeadDays,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await
            .context("write the member's channels")?;
        Ok(())
    }

    async fn subscribers(&self) -> Result<Vec<Subscriber>, RepoError> {
        let rows = notification_settings::Entity::find()
            .filter(notification_settings::Column::Email.is_not_null().or(notification_settings::Column::Urls.ne("[]")))
            .order_by_asc(notification_settings::Column::MemberId)
            .all(&self.db)
            .await
            .context("read the subscribers")?;
        Ok(rows
            .iter()
            .map(|r| {
                Ok(Subscriber {
                    household: HouseholdId(r.household_id),
                    member: MemberId(r.member_id),
                    channels: channels_of(r)?,
                })
            })
            .collect::<anyhow::Result<_>>()?)
    }

    async fn set_calendar_key(&self, household: HouseholdId, member: MemberId, key: &str) -> Result<(), RepoError> {
        let row = notification_settings::ActiveModel {
            member_id: Set(member.0),
            household_id: Set(household.0),
            email: Set(None),
            urls: Set("[]".to_owned()),
            lead_days: Set(i64::from(trove_application::reminders::LEAD_DAYS_DEFAULT)),
            calendar_key: Set(Some(key.to_owned())),
        };
        notification_settings::Entity::insert(row)
            .on_conflict(
                OnConflict::column(notification_settings::Column::MemberId)
                    .update_column(notification_settings::Column::CalendarKey)
                    .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await
            .context("write the calendar key")?;
        Ok(())
    }

    async fn calendar_key(&self, member: MemberId) -> Result<Option<String>, RepoError> {
        let row =
            notification_settings::Entity::find_by_id(member.0).one(&self.db).await.context("read the calendar key")?;
        Ok(row.and_then(|r| r.calendar_key))
    }

    async fn calendar_owner(&self, key: &str) -> Result<Option<(HouseholdId, MemberId)>, RepoError> {
        let row = notification_settings::Entity::find()
            .filter(notification_settings::Column::CalendarKey.eq(key))
            .one(&self.db)
            .await
            .context("find the calendar's owner")?;
        Ok(row.map(|r| (HouseholdId(r.household_id), MemberId(r.member_id))))
    }

    async fn notify_secret(&self, household: HouseholdId, fresh: &str) -> Result<String, RepoError> {
        households::Entity::update_many()
            .col_expr(households::Column::NotifySecret, Expr::val(fresh))
            .filter(households::Column::Id.eq(household.0))
            .filter(households::Column::NotifySecret.is_null())
            .exec(&self.db)
            .await
            .context("make the household's signing key")?;
        let row = households::Entity::find_by_id(household.0)
            .one(&self.db)
            .await
            .context("read the household's signing key")?
            .ok_or(RepoError::NotFound)?;
        Ok(row.notify_secret.ok_or_else(|| anyhow!("household {household} has no signing key"))?)
    }

    async fn add_reminders(
        &self,
        household: HouseholdId,
        all: &[NewReminder],
        at: Timestamp,
    ) -> Result<u64, RepoError> {
        let mut written = 0;
        for chunk in all.chunks(500) {
            let rows = chunk.iter().map(|r| reminders::ActiveModel {
                household_id: Set(household.0),
                member_id: Set(r.member.0),
                key: Set(r.key.clone()),
                channel: Set(r.channel.clone()),
                item_id: Set(r.item.0),
                subject: Set(r.subject.clone()),
                body: Set(r.body.clone()),
                status: Set("pending".to_owned()),
                attempts: Set(0),
                last_error: Set(None),
                created_at: Set(at),
                next_try_at: Set(at),
                claimed_until: Set(None),
                sent_at: Set(None),
                ..Default::default()
            });
            written += reminders::Entity::insert_many(rows)
                .on_conflict(
                    OnConflict::columns([
                        reminders::Column::MemberId,
                        reminders::Column::Key,
                        reminders::Column::Channel,
                    ])
                    .do_nothing()
                    .to_owned(),
                )
                .exec_without_returning(&self.db)
                .await
                .context("write reminders")?;
        }
        Ok(written)
    }

    async fn claim(&self, now: Timestamp, until: Timestamp, limit: u64) -> Result<Vec<Reminder>, RepoError> {
        let backend = self.db.get_database_backend();
        // One statement: the rows are chosen and marked together. PostgreSQL skips rows another process is
        // claiming this instant (`SKIP LOCKED`); SQLite runs it under its one write lock.
        let sql = match backend {
            DbBackend::Postgres => format!(
                "UPDATE reminders SET claimed_until = $1 WHERE id IN (SELECT id FROM reminders \
                 WHERE status = 'pending' AND next_try_at <= $2 AND (claimed_until IS NULL OR claimed_until < $2) \
                 ORDER BY id LIMIT {limit} FOR UPDATE SKIP LOCKED) RETURNING *"
            ),
            _ => format!(
                "UPDATE reminders SET claimed_until = ? WHERE id IN (SELECT id FROM reminders \
                 WHERE status = 'pending' AND next_try_at <= ? AND (claimed_until IS NULL OR claimed_until < ?) \
                 ORDER BY id LIMIT {limit}) RETURNING *"
            ),
        };
        let values: Vec<sea_orm::Value> = match backend {
            DbBackend::Postgres => vec![until.into(), now.into()],
            _ => vec![until.into(), now.into(), now.into()],
        };
        let txn = self.begin_write().await.context("begin the claim")?;
        let rows = reminders::Model::find_by_statement(Statement::from_sql_and_values(backend, sql, values))
            .all(&txn)
            .await
            .context("claim reminders")?;
        txn.commit().await.context("commit the claim")?;
        let mut all: Vec<Reminder> = rows.into_iter().map(reminder_of).collect();
        all.sort_by_key(|r| r.id);
        Ok(all)
    }

    async fn sent(&self, id: i64, at: Timestamp) -> Result<(), RepoError> {
        reminders::Entity::update_many()
            .col_expr(reminders::Column::Status, Expr::val("sent"))
            .col_expr(reminders::Column::SentAt, Expr::val(at))
            .col_expr(reminders::Column::Attempts, Expr::col(reminders::Column::Attempts).add(1))
            .col_expr(reminders::Column::ClaimedUntil, Expr::val(Option::<Timestamp>::None))
            .col_expr(reminders::Column::LastError, Expr::val(Option::<String>::None))
            .filter(reminders::Column::Id.eq(id))
            .exec(&self.db)
            .await
            .context("mark a reminder sent")?;
        Ok(())
    }

    async fn failed(&self, id: i64, error: &str, retry: Option<Timestamp>) -> Result<(), RepoError> {
        let mut update = reminders::Entity::update_many()
            .col_expr(reminders::Column::Attempts, Expr::col(reminders::Column::Attempts).add(1))
            .col_expr(reminders::Column::ClaimedUntil, Expr::val(Option::<Timestamp>::None))
            .col_expr(reminders::Column::LastError, Expr::val(error.chars().take(500).collect::<String>()))
            .filter(reminders::Column::Id.eq(id));
        update = match retry {
            Some(at) => update.col_expr(reminders::Column::NextTryAt, Expr::val(at)),
            None => update.col_expr(reminders::Column::Status, Expr::val("failed")),
        };
        update.exec(&self.db).await.context("mark a reminder failed")?;
        Ok(())
    }

    async fn log(&self, household: HouseholdId, limit: u64) -> Result<Vec<Reminder>, RepoError> {
        let rows = reminders::Entity::find()
            .filter(reminders::Column::HouseholdId.eq(household.0))
            .order_by_desc(reminders::Column::Id)
            .limit(limit)
            .all(&self.db)
            .await
            .context("read the delivery log")?;
        Ok(rows.into_iter().map(reminder_of).collect())
    }
}
