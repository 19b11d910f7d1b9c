//! The value report as a PDF, as an insurer is sent it: A4 pages in Helvetica (a standard font, nothing embedded)
//! with each item's photo as a JPEG thumbnail (embedded as it is, `DCTDecode`, never decoded here).
//!
//! The cover names the household, the day and what the report covers, with the totals per currency (never
//! converted) and per room and type; then one section per place, an item a row (thumbnail, name, quantity,
//! serial, purchase, current value and where it comes from); then an annex listing every receipt.

use crate::pdf::{BOLD, FONT, mm, show, text_width};
use anyhow::Context as _;
use image::ImageDecoder as _;
use pdf_writer::{Content, Filter, Finish, Name, Pdf, Rect, Ref};
use std::collections::{BTreeMap, HashMap};
use trove_application::ports::{ValueDocument, ValuePrinter};
use trove_domain::ItemId;
use trove_domain::money::{Currency, Money};
use trove_domain::report::{Sums, ValueSource};

const PAGE_W: f32 = 210.0;
const PAGE_H: f32 = 297.0;
const MARGIN: f32 = 18.0;
/// A thumbnail's side, in mm.
const THUMB: f32 = 20.0;
const BODY_PT: f32 = 9.5;
const HEAD_PT: f32 = 13.0;
const TITLE_PT: f32 = 22.0;
const LINE: f32 = 1.3;

/// The value report's PDF over `pdf-writer`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PdfValueReport;

impl ValuePrinter for PdfValueReport {
    fn pdf(&self, doc: &ValueDocument, thumbs: &HashMap<ItemId, Vec<u8>>) -> anyhow::Result<Vec<u8>> {
        render(doc, thumbs)
    }
}

/// A JPEG's size and colour space, read from its header.
#[derive(Debug, Clone, Copy)]
struct Jpeg {
    width: u32,
    height: u32,
    grey: bool,
}

fn jpeg_info(bytes: &[u8]) -> anyhow::Result<Jpeg> {
    let decoder = image::codecs::jpeg::JpegDecoder::new(std::io::Cursor::new(bytes)).context("a thumbnail")?;
    let (width, height) = decoder.dimensions();
    Ok(Jpeg { width, height, grey: matches!(decoder.color_type(), image::ColorType::L8) })
}

/// One page being written: its content and the thumbnails it shows.
struct Page {
    content: Content,
    images: Vec<(String, Ref)>,
}

/// Pages written top to bottom, a new one when the next block does not fit.
struct Writer {
    pages: Vec<Page>,
    /// The top of what is left on the current page, in mm from the page's bottom.
    y: f32,
    /// The report's title, repeated small at the top of every page after the cover.
    running: String,
}

impl Writer {
    fn new(running: String) -> Self {
        let mut w = Self { pages: Vec::new(), y: 0.0, running };
        w.page();
        w
    }

    fn page(&mut self) {
        let mut page = Page { content: Content::new(), images: Vec::new() };
        let n = self.pages.len() + 1;
        let footer = format!("{}  -  page {n}", self.running);
        show(&mut page.content, FONT, 8.0, mm(MARGIN), mm(10.0), mm(PAGE_W - 2.0 * MARGIN), &footer);
        self.pages.push(page);
        self.y = PAGE_H - MARGIN;
    }

    /// Makes room for a block `height` mm high, on a new page if it does not fit.
    fn room(&mut self, height: f32) {
        if self.y - height < MARGIN {
            self.page();
        }
    }

    fn content(&mut self) -> &mut Content {
        &mut self.pages.last_mut().expect("a writer always has a page").content
    }

    /// One line of text at `x` mm (from the left margin), at `size` pt, moving down.
    fn line(&mut self, x: f32, size: f32, bold: bool, text: &str) {
        let h = size * LINE / mm(1.0);
        self.room(h);
        self.y -= size / mm(1.0);
        let y = self.y;
        let width = mm(PAGE_W - MARGIN - (MARGIN + x));
        show(self.content(), if bold { BOLD } else { FONT }, size, mm(MARGIN + x), mm(y), width, text);
        self.y -= h - size / mm(1.0);
    }

    /// `text` wrapped to the width from `x` mm, at `size` pt.
    fn paragraph(&mut self, x: f32, size: f32, bold: bool, text: &str) {
        for line in wrap(text, mm(PAGE_W - 2.0 * MARGIN - x), size, bold) {
            self.line(x, size, bold, &line);
        }
    }

    fn gap(&mut self, h: f32) {
        self.y -= h;
    }
}

/// Words of `text` in lines no wider than `width` pt at `size`; a word wider than a line is left to `show`,
/// which shrinks it.
fn wrap(text: &str, width: f32, size: f32, bold: bool) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let candidate = if current.is_empty() { word.to_owned() } else { format!("{current} {word}") };
        if !current.is_empty() && text_width(&candidate, bold) * size > width {
            lines.push(std::mem::replace(&mut current, word.to_owned()));
        } else {
            current = candidate;
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
}

/// Amounts per currency, as "EUR 1,234.50 + GBP 20.00"; "none" for no amount.
fn per_currency(sums: &BTreeMap<Currency, i64>) -> String {
    if sums.is_empty() {
        return "none".into();
    }
    sums.iter().map(|(c, minor)| Money { minor: *minor, currency: *c }.to_string()).collect::<Vec<_>>().join(" + ")
}

fn sums_line(label: &str, s: &Sums) -> String {
    let unvalued = if s.unvalued > 0 { format!(" ({} without a value)", s.unvalued) } else { String::new() };
    let label = format!("{label}, {} {}", s.items, if s.items == 1 { "item" } else { "items" });
    format!("{label}: worth {}{unvalued}; paid {}", per_currency(&s.current), per_currency(&s.paid))
}

fn render(doc: &ValueDocument, thumbs: &HashMap<ItemId, Vec<u8>>) -> anyhow::Result<Vec<u8>> {
    let day = doc.at.date_naive();
    let covering = doc.within.as_deref().unwrap_or("the whole household");
    let mut w = Writer::new(format!("{}: value report of {day}", doc.household));

    // The cover.
    w.line(0.0, TITLE_PT, true, "Inventory value report");
    w.gap(2.0);
    w.line(0.0, HEAD_PT, true, &doc.household);
    w.line(0.0, BODY_PT + 1.0, false, &format!("Made on {day} ({} UTC)", doc.at.format("%H:%M")));
    w.line(0.0, BODY_PT + 1.0, false, &format!("Covering {covering}: {} items", doc.report.lines.len()));
    w.gap(6.0);
    w.line(0.0, HEAD_PT, true, "Totals");
    w.paragraph(0.0, BODY_PT + 1.0, false, &format!("Current value: {}", per_currency(&doc.report.total.current)));
    w.paragraph(0.0, BODY_PT + 1.0, false, &format!("Paid: {}", per_currency(&doc.report.total.paid)));
    if doc.report.total.unvalued > 0 {
        w.paragraph(
            0.0,
            BODY_PT + 1.0,
            false,
            &match doc.report.total.unvalued {
                1 => "1 item has no current value (never priced, or too little evidence).".to_owned(),
                n => format!("{n} items have no current value (never priced, or too little evidence)."),
            },
        );
    }
    w.paragraph(
        0.0,
        BODY_PT,
        false,
        "Amounts are kept in the currency they were found in and never converted. A current value is the typical \
         price of the latest estimate from grounded web comparables, or a value set by hand; each item says which \
         and when.",
    );
    w.gap(4.0);
    w.line(0.0, HEAD_PT, true, "By room");
    // Rooms by name, the items in no place last.
    let rooms = doc.report.by_room.iter().filter(|(r, _)| r.is_some()).chain(doc.report.by_room.get_key_value(&None));
    for (room, sums) in rooms {
        w.paragraph(0.0, BODY_PT, false, &sums_line(room.as_deref().unwrap_or("In no place"), sums));
    }
    w.gap(4.0);
    w.line(0.0, HEAD_PT, true, "By type");
    for (item_type, sums) in &doc.report.by_type {
        w.paragraph(0.0, BODY_PT, false, &sums_line(item_type, sums));
    }

    // A section per place, items in the report's order (by place, then by name).
    let mut images: Vec<(Ref, &[u8], Jpeg)> = Vec::new();
    let mut next_ref = 10;
    let mut section: Option<Option<&str>> = None;
    let mut shown_without = 0usize;
    for line in &doc.report.lines {
        let item = doc.item(line.item);
        let place = item.place.as_deref();
        if section != Some(place) {
            // The first section starts after the cover; the others follow on, a heading never alone at a
            // page's foot.
            if section.is_none() {
                w.page();
            } else {
                w.gap(5.0);
                w.room(HEAD_PT * LINE / mm(1.0) + 2.0 + THUMB + 3.0);
            }
            section = Some(place);
            w.line(0.0, HEAD_PT, true, place.unwrap_or("In no place"));
            w.gap(2.0);
        }
        let mut text = vec![format!("Quantity {}", line.quantity)];
        if let Some(serial) = &item.serial {
            text.push(format!("serial {serial}"));
        }
        let mut bought = Vec::new();
        if let Some(d) = item.purchased {
            bought.push(format!("on {d}"));
        }
        if let Some(v) = &item.vendor {
            bought.push(format!("at {v}"));
        }
        if let Some(p) = line.paid {
            bought.push(format!("for {p}"));
        }
        if !bought.is_empty() {
            text.push(format!("bought {}", bought.join(" ")));
        }
        let value = match (line.current, line.current_total) {
            (Some(c), Some(total)) => {
                let source = match c.source {
                    ValueSource::Estimate { at } => format!("estimate of {}", at.date_naive()),
                    ValueSource::Hand { at } => format!("set by hand on {}", at.date_naive()),
                };
                format!("Value {} each, {total} in all ({source})", c.each)
            }
            _ => "No current value".to_owned(),
        };
        let receipts = if item.receipts.is_empty() {
            String::new()
        } else {
            format!("Receipts: {}", item.receipts.iter().map(|r| format!("M-{}", r.id)).collect::<Vec<_>>().join(", "))
        };
        let text_x = THUMB + 4.0;
        let width = mm(PAGE_W - 2.0 * MARGIN - text_x);
        let body: Vec<String> = [text.join(", "), value, receipts]
            .iter()
            .filter(|t| !t.is_empty())
            .flat_map(|t| wrap(t, width, BODY_PT, false))
            .collect();
        let height = ((1 + body.len()) as f32 * BODY_PT * LINE / mm(1.0)).max(THUMB) + 3.0;
        w.room(height);
        let top = w.y;
        if let Some(bytes) = thumbs.get(&line.item) {
            let info = jpeg_info(bytes)?;
            let id = Ref::new(next_ref);
            next_ref += 1;
            images.push((id, bytes, info));
            let name = format!("Im{}", images.len());
            let (iw, ih) = (info.width as f32, info.height as f32);
            let scale = THUMB / iw.max(ih);
            let (dw, dh) = (iw * scale, ih * scale);
            let content = w.content();
            content.save_state();
            content.transform([mm(dw), 0.0, 0.0, mm(dh), mm(MARGIN + (THUMB - dw) / 2.0), mm(top - dh)]);
            content.x_object(Name(name.as_bytes()));
            content.restore_state();
            w.pages.last_mut().expect("a page").images.push((name, id));
        } else if item.photo.is_some() {
            shown_without += 1;
        }
        w.line(text_x, BODY_PT + 0.5, true, &format!("{} (I-{})", item.name, line.item));
        for l in &body {
            w.line(text_x, BODY_PT, false, l);
        }
        w.y = w.y.min(top - THUMB) - 3.0;
    }
    if shown_without > 0 {
        w.gap(2.0);
        w.paragraph(0.0, BODY_PT, false, &format!("{shown_without} items with a photo are shown without it."));
    }

    // The annex: every receipt.
    w.page();
    w.line(0.0, HEAD_PT, true, "Annex: receipts");
    w.gap(2.0);
    let mut any = false;
    for line in &doc.report.lines {
        let item = doc.item(line.item);
        for r in &item.receipts {
            any = true;
            let caption = r.caption.as_ref().map(|c| format!(": {c}")).unwrap_or_default();
            w.paragraph(
                0.0,
                BODY_PT,
                false,
                &format!(
                    "M-{} on {} (I-{}){caption}, {} of {} KB, kept on {}",
                    r.id,
                    item.name,
                    line.item,
                    r.media_type,
                    r.bytes.div_ceil(1024),
                    r.created_at.date_naive()
                ),
            );
        }
    }
    if !any {
        w.line(0.0, BODY_PT, false, "No receipts are kept on these items.");
    }

    // The file: catalog, pages, fonts, images.
    let mut pdf = Pdf::new();
    let (catalog, tree, font, bold) = (Ref::new(1), Ref::new(2), Ref::new(3), Ref::new(4));
    let first_page = next_ref;
    let page_ids: Vec<Ref> = (0..w.pages.len()).map(|i| Ref::new(first_page + 2 * i as i32)).collect();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree).kids(page_ids.iter().copied()).count(page_ids.len() as i32);
    pdf.type1_font(font).base_font(Name(b"Helvetica")).encoding_predefined(Name(b"WinAnsiEncoding"));
    pdf.type1_font(bold).base_font(Name(b"Helvetica-Bold")).encoding_predefined(Name(b"WinAnsiEncoding"));
    for (id, bytes, info) in &images {
        let mut image = pdf.image_xobject(*id, bytes);
        image.filter(Filter::DctDecode);
        image.width(info.width as i32);
        image.height(info.height as i32);
        if info.grey {
            image.color_space().device_gray();
        } else {
            image.color_space().device_rgb();
        }
        image.bits_per_component(8);
        image.finish();
    }
    for (page, page_id) in w.pages.into_iter().zip(&page_ids) {
        let content_id = Ref::new(page_id.get() + 1);
        let mut p = pdf.page(*page_id);
        p.media_box(Rect::new(0.0, 0.0, mm(PAGE_W), mm(PAGE_H)));
        p.parent(tree);
        p.contents(content_id);
        let mut resources = p.resources();
        resources.fonts().pair(FONT, font).pair(BOLD, bold);
        let mut objects = resources.x_objects();
        for (name, id) in &page.images {
            objects.pair(Name(name.as_bytes()), *id);
        }
        objects.finish();
        resources.finish();
        p.finish();
        let deflated = miniz_oxide::deflate::compress_to_vec_zlib(&page.content.finish(), 6);
        pdf.stream(content_id, &deflated).filter(Filter::FlateDecode);
    }
    Ok(pdf.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_wraps_at_the_width() {
        let lines = wrap("one two three four five six seven", 60.0, 10.0, false);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| text_width(l, false) * 10.0 <= 60.0 || !l.contains(' ')), "{lines:?}");
        assert_eq!(lines.join(" "), "one two three four five six seven");
        assert_eq!(wrap("", 60.0, 10.0, false), vec![String::new()]);
    }

    #[test]
    fn amounts_are_kept_per_currency() {
        let (eur, gbp) = (Currency::new("EUR").unwrap(), Currency::new("GBP").unwrap());
        assert_eq!(per_currency(&BTreeMap::from([(eur, 12_050), (gbp, 99)])), "EUR 120.50 + GBP 0.99");
        assert_eq!(per_currency(&BTreeMap::new()), "none");
    }
}
