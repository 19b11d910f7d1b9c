//! What it is all worth: the value report (JSON, CSV, or the PDF an insurer is sent) and a value set by hand.
//!
//! The figures are the domain's (`trove_domain::report`): each item valued by its latest price report, totals per
//! room, per type and per currency, never converted. This use case gathers what the report needs (the items, the
//! latest reports, their photos and receipts, the household's name) and has the document made.

use crate::Error;
use crate::error::named;
use crate::jobs::Jobs;
use crate::media::Media;
use crate::ports::{
    Clock, InventoryRepo, MediaRepo, MemberRepo, PlaceRepo, PriceRepo, ValueDocument, ValuePrinter, ValueSheet,
    ValuedItem,
};
use std::collections::HashMap;
use std::sync::Arc;
use trove_domain::history::ObjectKind;
use trove_domain::media::MediaKind;
use trove_domain::money::Money;
use trove_domain::pricing::{self, PriceReport};
use trove_domain::report::value_report;
use trove_domain::{HouseholdId, ItemId, PlaceId};

/// Most items shown with a thumbnail in the PDF: beyond it the report is a register, and its pages would weigh
/// tens of megabytes. The PDF says how many are shown without.
pub const THUMBS_MAX: usize = 1_000;

/// The value report use cases.
#[derive(Clone)]
pub struct Valuation {
    items: Arc<dyn InventoryRepo>,
    places: Arc<dyn PlaceRepo>,
    prices: Arc<dyn PriceRepo>,
    media_rows: Arc<dyn MediaRepo>,
    /// The household's name for the cover.
    members: Arc<dyn MemberRepo>,
    /// Thumbnails, made once and kept.
    media: Media,
    printer: Arc<dyn ValuePrinter>,
    sheet: Arc<dyn ValueSheet>,
    clock: Arc<dyn Clock>,
    /// Making the PDF is CPU work, run under the server's one limit of it.
    jobs: Jobs,
}

impl std::fmt::Debug for Valuation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Valuation").finish_non_exhaustive()
    }
}

/// The ports a [`Valuation`] reads.
pub struct ValuationPorts {
    pub items: Arc<dyn InventoryRepo>,
    pub places: Arc<dyn PlaceRepo>,
    pub prices: Arc<dyn PriceRepo>,
    pub media_rows: Arc<dyn MediaRepo>,
    pub members: Arc<dyn MemberRepo>,
    pub printer: Arc<dyn ValuePrinter>,
    pub sheet: Arc<dyn ValueSheet>,
    pub clock: Arc<dyn Clock>,
}

impl Valuation {
    pub fn new(ports: ValuationPorts, media: Media, jobs: Jobs) -> Self {
        let ValuationPorts { items, places, prices, media_rows, members, printer, sheet, clock } = ports;
        Self { items, places, prices, media_rows, members, media, printer, sheet, clock, jobs }
    }

    /// The value report of the household's items (those not gone), or of those in `within` and the places below
    /// it, with every item's facts.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the place when `within` is not one of the household's.
    pub async fn report(&self, household: HouseholdId, within: Option<PlaceId>) -> Result<ValueDocument, Error> {
        let at = self.clock.now();
        let mut items = self.items.all_present(household).await?;
        let within = match within {
            Some(place) => {
                items.retain(|i| i.place_path.as_ref().is_some_and(|p| p.steps().iter().any(|s| s.id == place)));
                Some(self.place_path(household, place).await?)
            }
            None => None,
        };
        // By place (items in no place last), then by name: the order of the PDF's sections and the CSV's rows.
        items.sort_by_cached_key(|i| {
            (
                i.place_path.is_none(),
                i.location().unwrap_or_default().to_lowercase(),
                i.name.to_string().to_lowercase(),
                i.id,
            )
        });
        let latest = self.prices.latest(household).await?;
        let report = value_report(&items, &latest);
        let mut media: HashMap<ItemId, Vec<trove_domain::media::Medium>> = HashMap::new();
        for m in self.media_rows.on_items(household).await? {
            if let Some(item) = m.item_id {
                media.entry(item).or_default().push(m);
            }
        }
        let facts = items
            .iter()
            .map(|i| {
                let mine = media.remove(&i.id).unwrap_or_default();
                let photo = mine.iter().find(|m| m.kind == MediaKind::Photo && m.size.is_some()).map(|m| m.id);
                let purchase = i.details.purchase.as_ref();
                let fact = ValuedItem {
                    name: i.name.to_string(),
                    place: i.location(),
                    serial: i.details.serial.clone(),
                    purchased: purchase.and_then(|p| p.date),
                    vendor: purchase.and_then(|p| p.vendor.clone()),
                    photo,
                    receipts: mine.into_iter().filter(|m| m.kind == MediaKind::Receipt).collect(),
                };
                (i.id, fact)
            })
            .collect();
        let household_name = self.members.household(household).await?.name;
        Ok(ValueDocument { household: household_name, at, within, report, items: facts })
    }

    /// The report as CSV (a row per item).
    ///
    /// # Errors
    /// As [`Valuation::report`].
    pub async fn csv(&self, household: HouseholdId, within: Option<PlaceId>) -> Result<Vec<u8>, Error> {
        let doc = self.report(household, within).await?;
        Ok(self.sheet.csv(&doc)?)
    }

    /// The report as the PDF an insurer is sent, with each item's photo's thumbnail (up to [`THUMBS_MAX`]).
    ///
    /// # Errors
    /// As [`Valuation::report`]; [`Error::Busy`] when the limit of CPU-heavy jobs is full.
    pub async fn pdf(&self, household: HouseholdId, within: Option<PlaceId>) -> Result<Vec<u8>, Error> {
        let doc = self.report(household, within).await?;
        let mut thumbs = HashMap::new();
        for line in &doc.report.lines {
            if thumbs.len() >= THUMBS_MAX {
                break;
            }
            if let Some(photo) = doc.item(line.item).photo {
                // A picture whose thumbnail cannot be made (a lost blob) is shown without one.
                match self.media.thumbnail(household, photo).await {
                    Ok(bytes) => {
                        thumbs.insert(line.item, bytes);
                    }
                    Err(e) => tracing::warn!(media = photo.0, error = %e, "no thumbnail for the value report"),
                }
            }
        }
        let printer = self.printer.clone();
        Ok(self.jobs.run(move || printer.pdf(&doc, &thumbs)).await??)
    }

    /// Sets what one unit of an item is worth by hand: kept in its price history as a report of its own, the
    /// item's current value until a newer one. Answers the report kept.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the item.
    pub async fn set_value(&self, household: HouseholdId, id: ItemId, each: Money) -> Result<PriceReport, Error> {
        self.items.get(household, id).await.map_err(named(ObjectKind::Item, id.0))?;
        let report = pricing::hand_value(id, self.clock.now(), each);
        self.prices.add(household, &report).await?;
        Ok(report)
    }

    async fn place_path(&self, household: HouseholdId, place: PlaceId) -> Result<String, Error> {
        let mut paths = self.places.paths(household, &[place]).await?;
        paths.remove(&place).map(|p| p.joined()).ok_or(Error::NotFound { what: ObjectKind::Place, id: place.0 })
    }
}
