//! Labels and scanning: a PDF of labels for items and places (each a QR code of the link to its page, its name
//! and a short code), and a photo of a label read back into the item or place it names, or of a box's barcode
//! read into the product code it carries (`trove_domain::barcode`).

use crate::Error;
use crate::jobs::Jobs;
use crate::photo::PhotoError;
use crate::ports::{CodeReader, InventoryRepo, Label, LabelLayout, LabelPrinter, PlaceRepo, ReadCode};
use std::sync::Arc;
use trove_domain::barcode::{Symbology, product_code};
use trove_domain::code::Code;
use trove_domain::history::ObjectKind;
use trove_domain::label::{LabelTarget, PublicUrl};
use trove_domain::place::{PlacePath, PlaceTree};
use trove_domain::{HouseholdId, ItemId, PlaceId};

/// Most labels one PDF may hold (about 42 sheets).
pub const LABELS_MAX: usize = 1000;

/// What scanning a photo of a label found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    pub target: LabelTarget,
    /// The item's or the place's name.
    pub name: String,
    /// For a place, the way to it (root first, itself last); for an item, the way to its place; `None` for an
    /// item in no place.
    pub path: Option<PlacePath>,
}

/// A code read in a photo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedCode {
    pub symbology: Symbology,
    /// The text as read.
    pub text: String,
    /// The GTIN or ISBN it carries (`trove_domain::barcode::product_code`); `None` for a QR code and a shop's own
    /// code.
    pub code: Option<Code>,
}

/// What a photo held: one of our labels, or none, and every code read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The first of our labels read, if one was.
    pub label: Option<LabelTarget>,
    /// Every code read, QR codes first (our label's included), misreads of retail barcodes left out.
    pub codes: Vec<ScannedCode>,
}

/// What reading the codes of a photo reports besides success.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The image itself: not a JPEG, PNG or WebP, too many pixels, or not decodable.
    #[error(transparent)]
    Image(#[from] PhotoError),
    /// No code could be read in the photo.
    #[error(
        "no QR code could be read in the image, nor a barcode; photograph one label or barcode, flat and in focus, \
         filling much of the frame"
    )]
    NoCode,
    /// Only QR codes were read, and none is a label of this Trove (another server's, or not a link at all).
    #[error("the code read is not a label of this Trove: {0:?}")]
    NotOurs(String),
    /// The limit of image jobs refused the read ([`Error::Busy`]), or the read failed unexpectedly.
    #[error(transparent)]
    Job(#[from] Error),
}

/// The labels use cases.
#[derive(Clone)]
pub struct Labels {
    items: Arc<dyn InventoryRepo>,
    places: Arc<dyn PlaceRepo>,
    /// Makes the PDF (CPU work).
    printer: Arc<dyn LabelPrinter>,
    /// Reads QR codes in photos (CPU work).
    reader: Arc<dyn CodeReader>,
    /// Where the labels' links point (`TROVE_PUBLIC_URL`), and the only links a scan accepts.
    url: PublicUrl,
    /// The server's one limit of CPU-heavy jobs: reading a photo and making a PDF run under it, like every
    /// other image job.
    jobs: Jobs,
}

impl std::fmt::Debug for Labels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Labels").field("url", &self.url).finish_non_exhaustive()
    }
}

impl Labels {
    pub fn new(
        items: Arc<dyn InventoryRepo>,
        places: Arc<dyn PlaceRepo>,
        printer: Arc<dyn LabelPrinter>,
        reader: Arc<dyn CodeReader>,
        url: PublicUrl,
        jobs: Jobs,
    ) -> Self {
        Self { items, places, printer, reader, url, jobs }
    }

    /// The labels of `items` then `places`, in the order given (an id given twice gets two labels).
    ///
    /// # Errors
    /// [`Error::Invalid`] for no id or more than [`LABELS_MAX`]; [`Error::NotFound`] naming the first item or
    /// place that is not the household's.
    pub async fn labels(
        &self,
        household: HouseholdId,
        items: &[ItemId],
        places: &[PlaceId],
    ) -> Result<Vec<Label>, Error> {
        let count = items.len() + places.len();
        if count == 0 {
            return Err(Error::Invalid("items or places must name at least one object to label".into()));
        }
        if count > LABELS_MAX {
            return Err(Error::Invalid(format!("at most {LABELS_MAX} labels at once, not {count}")));
        }
        let mut out = Vec::with_capacity(count);
        if !items.is_empty() {
            let found = self.items.get_many(household, items).await?;
            for id in items {
                let item =
                    found.iter().find(|i| i.id == *id).ok_or(Error::NotFound { what: ObjectKind::Item, id: id.0 })?;
                out.push(self.label(LabelTarget::Item(*id), item.name.to_string(), Vec::new()));
            }
        }
        if !places.is_empty() {
            let all = self.places.all(household).await?;
            let tree = PlaceTree::new(&all);
            for id in places {
                let place = tree.get(*id).ok_or(Error::NotFound { what: ObjectKind::Place, id: id.0 })?;
                let mut within: Vec<String> = tree.ancestors(*id).map(|p| p.name.to_string()).collect();
                within.reverse();
                out.push(self.label(LabelTarget::Place(*id), place.name.to_string(), within));
            }
        }
        Ok(out)
    }

    fn label(&self, target: LabelTarget, name: String, within: Vec<String>) -> Label {
        Label { target, link: self.url.link(target), name, code: target.short_code(), within }
    }

    /// The PDF of `labels`, made under the limit of CPU-heavy jobs.
    ///
    /// # Errors
    /// [`Error::Busy`] when the limit's queue is full; `Unexpected` when the printer fails.
    pub async fn pdf(&self, labels: Vec<Label>, layout: LabelLayout) -> Result<Vec<u8>, Error> {
        let printer = self.printer.clone();
        Ok(self.jobs.run(move || printer.pdf(&labels, layout)).await??)
    }

    /// Reads the codes in `image`: the label is the first QR code that is one of our links; a barcode (any code
    /// but a QR code) is answered with the product code it carries, if any, and a retail barcode whose digits
    /// fail their check is a misread, left out. A QR code that is not our label is answered only beside a label
    /// or a barcode. The read runs under the limit of CPU-heavy jobs, so many scans at once wait their turn (or
    /// are refused) with every other image job.
    ///
    /// # Errors
    /// [`ScanError::Image`] for an image of no supported format, too large or undecodable;
    /// [`ScanError::NoCode`] when no code is read; [`ScanError::NotOurs`] when only QR codes are read and none is
    /// our label; [`ScanError::Job`] when the limit's queue is full.
    pub async fn read(&self, image: Vec<u8>) -> Result<Reading, ScanError> {
        let reader = self.reader.clone();
        let read = self.jobs.run(move || reader.read(&image)).await?.map_err(PhotoError::from)?;
        let codes: Vec<ScannedCode> = read
            .into_iter()
            .filter_map(|ReadCode { symbology, text, gs1 }| {
                let code = product_code(symbology, &text, gs1);
                (code.is_some() || !symbology.is_retail()).then_some(ScannedCode { symbology, text, code })
            })
            .collect();
        let label = codes.iter().filter(|c| c.symbology == Symbology::QrCode).find_map(|c| self.url.read(&c.text));
        if label.is_some() || codes.iter().any(|c| c.symbology != Symbology::QrCode) {
            return Ok(Reading { label, codes });
        }
        match codes.into_iter().next() {
            Some(code) => Err(ScanError::NotOurs(trove_domain::text::clip(&code.text, 200))),
            None => Err(ScanError::NoCode),
        }
    }

    /// The item or place a scanned label names, with its name and path.
    ///
    /// # Errors
    /// [`Error::NotFound`] when it is not the household's.
    pub async fn scanned(&self, household: HouseholdId, target: LabelTarget) -> Result<Scanned, Error> {
        match target {
            LabelTarget::Item(id) => {
                let item = self.items.get(household, id).await.map_err(crate::error::named(ObjectKind::Item, id.0))?;
                let path = match item.place_id {
                    Some(p) => self.places.paths(household, &[p]).await?.remove(&p),
                    None => None,
                };
                Ok(Scanned { target, name: item.name.to_string(), path })
            }
            LabelTarget::Place(id) => {
                let path = self.places.paths(household, &[id]).await?.remove(&id);
                let path = path.ok_or(Error::NotFound { what: ObjectKind::Place, id: id.0 })?;
                Ok(Scanned { target, name: path.place().name.to_string(), path: Some(path) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RepoError;
    use crate::ports::VisionError;
    use crate::ports::inventory::MockInventoryRepo;
    use crate::ports::labels::{MockCodeReader, MockLabelPrinter};
    use crate::ports::places::MockPlaceRepo;
    use chrono::{TimeZone, Utc};
    use trove_domain::item::{Condition, Item};
    use trove_domain::place::{Place, PlaceName, PlaceStep};

    const H: HouseholdId = HouseholdId(3);

    fn item(id: i64, name: &str, place: Option<i64>) -> Item {
        let mut item = trove_domain::testing::named(id, name, "laptop", Condition::Good);
        item.place_id = place.map(PlaceId);
        item
    }

    fn place(id: i64, name: &str, parent: Option<i64>) -> Place {
        Place {
            id: PlaceId(id),
            name: PlaceName::new(name).unwrap(),
            parent_id: parent.map(PlaceId),
            note: None,
            created_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        }
    }

    /// Items 1 ("ThinkPad", in place 2) and 2 ("Pi"); places 1 "Garage" > 2 "Shelf B2".
    fn labels(reader: MockCodeReader) -> Labels {
        labels_under(reader, Jobs::new(1, 1))
    }

    fn labels_under(reader: MockCodeReader, jobs: Jobs) -> Labels {
        let mut items = MockInventoryRepo::new();
        let stored = vec![item(1, "ThinkPad", Some(2)), item(2, "Pi", None)];
        let kept = stored.clone();
        items
            .expect_get_many()
            .returning(move |_, ids| Ok(kept.iter().filter(|i| ids.contains(&i.id)).cloned().collect()));
        items
            .expect_get()
            .returning(move |_, id| stored.iter().find(|i| i.id == id).cloned().ok_or(RepoError::NotFound));
        let mut places = MockPlaceRepo::new();
        let tree = vec![place(1, "Garage", None), place(2, "Shelf B2", Some(1))];
        let all = tree.clone();
        places.expect_all().returning(move |_| Ok(all.clone()));
        places.expect_paths().returning(move |_, ids| {
            let t = PlaceTree::new(&tree);
            Ok(ids.iter().filter_map(|id| t.path(*id).map(|p| (*id, p))).collect())
        });
        Labels::new(
            Arc::new(items),
            Arc::new(places),
            Arc::new(MockLabelPrinter::new()),
            Arc::new(reader),
            PublicUrl::new("http://trove.local:8080").unwrap(),
            jobs,
        )
    }

    #[tokio::test]
    async fn labels_carry_links_names_and_codes_in_the_order_given() {
        let l = labels(MockCodeReader::new());
        let got = l.labels(H, &[ItemId(2), ItemId(1)], &[PlaceId(2)]).await.unwrap();
        let got: Vec<(&str, &str, &str, Vec<&str>)> = got
            .iter()
            .map(|l| (l.link.as_str(), l.name.as_str(), l.code.as_str(), l.within.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            got,
            [
                ("http://trove.local:8080/#/items/2", "Pi", "I-2", vec![]),
                ("http://trove.local:8080/#/items/1", "ThinkPad", "I-1", vec![]),
                ("http://trove.local:8080/#/places/2", "Shelf B2", "P-2", vec!["Garage"]),
            ]
        );
        let err = |r: Result<Vec<Label>, Error>| r.unwrap_err().to_string();
        assert_eq!(err(l.labels(H, &[ItemId(1), ItemId(9)], &[]).await), "no such item 9");
        assert_eq!(err(l.labels(H, &[], &[PlaceId(5)]).await), "no such place 5");
        assert_eq!(err(l.labels(H, &[], &[]).await), "items or places must name at least one object to label");
        let many: Vec<ItemId> = (1..=1001).map(ItemId).collect();
        assert_eq!(err(l.labels(H, &many, &[]).await), "at most 1000 labels at once, not 1001");
    }

    /// A reader that reads `codes` in every photo.
    fn reading_codes(codes: Vec<(Symbology, &'static str)>) -> MockCodeReader {
        let mut reader = MockCodeReader::new();
        reader.expect_read().returning(move |_| {
            Ok(codes
                .iter()
                .map(|(symbology, text)| ReadCode { symbology: *symbology, text: (*text).to_owned(), gs1: false })
                .collect())
        });
        reader
    }

    /// A reader that reads the QR codes of `texts` in every photo.
    fn reading(texts: &'static [&'static str]) -> MockCodeReader {
        let codes: Vec<(Symbology, &'static str)> = texts.iter().map(|t| (Symbology::QrCode, *t)).collect();
        reading_codes(codes)
    }

    #[tokio::test]
    async fn a_scan_accepts_only_our_links() {
        let l = labels(reading(&["WIFI:S:home;;", "http://trove.local:8080/#/items/1"]));
        let target = l.read(b"photo".to_vec()).await.unwrap().label.unwrap();
        assert_eq!(target, LabelTarget::Item(ItemId(1)));
        let scanned = l.scanned(H, target).await.unwrap();
        assert_eq!(
            (scanned.name.as_str(), scanned.path.map(|p| p.joined())),
            ("ThinkPad", Some("Garage / Shelf B2".into()))
        );
        let place = l.scanned(H, LabelTarget::Place(PlaceId(2))).await.unwrap();
        assert_eq!(
            place.path.unwrap().steps().to_vec(),
            [
                PlaceStep { id: PlaceId(1), name: PlaceName::new("Garage").unwrap() },
                PlaceStep { id: PlaceId(2), name: PlaceName::new("Shelf B2").unwrap() }
            ]
        );
        assert_eq!(l.scanned(H, LabelTarget::Item(ItemId(2))).await.unwrap().path, None);
        assert_eq!(l.scanned(H, LabelTarget::Item(ItemId(7))).await.unwrap_err().to_string(), "no such item 7");
        assert_eq!(l.scanned(H, LabelTarget::Place(PlaceId(7))).await.unwrap_err().to_string(), "no such place 7");

        let l = labels(reading(&["http://elsewhere:8080/#/items/1"]));
        assert!(
            matches!(l.read(b"photo".to_vec()).await, Err(ScanError::NotOurs(t)) if t == "http://elsewhere:8080/#/items/1")
        );
        let l = labels(reading(&[]));
        assert!(matches!(l.read(b"photo".to_vec()).await, Err(ScanError::NoCode)));
        let mut reader = MockCodeReader::new();
        reader.expect_read().returning(|_| Err(VisionError::Unsupported));
        assert!(matches!(labels(reader).read(b"gif".to_vec()).await, Err(ScanError::Image(PhotoError::Unsupported))));
    }

    #[tokio::test]
    async fn a_scan_waits_its_turn_with_the_other_image_jobs_and_is_refused_past_the_queue() {
        let jobs = Jobs::new(1, 0);
        let l = labels_under(reading(&["http://trove.local:8080/#/items/1"]), jobs.clone());
        let other = jobs.admit().unwrap();
        assert!(matches!(l.read(b"photo".to_vec()).await, Err(ScanError::Job(Error::Busy { .. }))));
        drop(other);
        assert_eq!(l.read(b"photo".to_vec()).await.unwrap().label, Some(LabelTarget::Item(ItemId(1))));
    }

    #[tokio::test]
    async fn a_barcode_is_answered_with_the_product_code_it_carries_and_misreads_are_left_out() {
        let l = labels(reading_codes(vec![
            (Symbology::QrCode, "WIFI:S:home;;"),
            (Symbology::Ean13, "9780306406157"),
            (Symbology::Ean13, "4006381333932"),
            (Symbology::Code128, "SHELF-12"),
            (Symbology::UpcE, "01234565"),
        ]));
        let read = l.read(b"photo".to_vec()).await.unwrap();
        assert_eq!(read.label, None);
        let got: Vec<(Symbology, &str, Option<&str>)> =
            read.codes.iter().map(|c| (c.symbology, c.text.as_str(), c.code.as_ref().map(Code::key))).collect();
        assert_eq!(
            got,
            [
                (Symbology::QrCode, "WIFI:S:home;;", None),
                (Symbology::Ean13, "9780306406157", Some("09780306406157")),
                (Symbology::Code128, "SHELF-12", None),
                (Symbology::UpcE, "01234565", Some("00012345000065")),
            ]
        );
        // Our label beside a barcode is the label, the barcode still answered.
        let l = labels(reading_codes(vec![
            (Symbology::QrCode, "http://trove.local:8080/#/places/2"),
            (Symbology::Ean8, "96385074"),
        ]));
        let read = l.read(b"photo".to_vec()).await.unwrap();
        assert_eq!((read.label, read.codes.len()), (Some(LabelTarget::Place(PlaceId(2))), 2));
        // A retail barcode's misread alone is no code at all.
        let l = labels(reading_codes(vec![(Symbology::Itf, "10012345000018")]));
        assert!(matches!(l.read(b"photo".to_vec()).await, Err(ScanError::NoCode)));
    }
}
