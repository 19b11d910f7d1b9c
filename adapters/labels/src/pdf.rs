//! The PDF of labels: A4 sheets of sticky labels, or one label per page for a continuous label printer. The QR
//! code is drawn as filled squares (one path per page), the text in Helvetica, one of the PDF's standard fonts,
//! so nothing is embedded and a page of 21 labels is a few kilobytes.

use anyhow::Context;
use pdf_writer::{Content, Filter, Finish, Name, Pdf, Rect, Ref, Str};
use qrcode::{Color, EcLevel, QrCode};
use trove_application::ports::{Label, LabelLayout, LabelPrinter};
use trove_domain::label::{LabelTarget, fit, fit_path};

/// Points per millimetre (a point is 1/72 inch).
const PT_PER_MM: f32 = 72.0 / 25.4;
/// White space kept around a label's content, in mm.
const PADDING_MM: f32 = 2.0;
/// Light modules drawn around the code on each side (the standard asks for 4; the label's edge and padding
/// add to it).
const QUIET_MODULES: usize = 2;
pub(crate) const FONT: Name<'static> = Name(b"F1");
pub(crate) const BOLD: Name<'static> = Name(b"F2");

/// Where labels sit on a page, in mm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    pub page_width: f32,
    pub page_height: f32,
    pub label_width: f32,
    pub label_height: f32,
    pub columns: usize,
    pub rows: usize,
    /// The top-left label's left and top edges from the page's.
    pub left: f32,
    pub top: f32,
    /// From one label's left (top) edge to the next one's.
    pub pitch_x: f32,
    pub pitch_y: f32,
    /// An item's name's font size in points (the code's too), and at most how many lines it takes.
    pub font_size: f32,
    pub name_lines: usize,
}

/// A place's name, in points: large and bold, to be read on a box at arm's length (about 5.6 mm for a
/// capital).
pub const PLACE_NAME_PT: f32 = 16.0;
/// The places a place is in, in points, above its name (about 3.9 mm for a capital).
pub const PLACE_PATH_PT: f32 = 11.0;
/// Line height over font size.
const LEADING: f32 = 1.15;

impl Geometry {
    pub fn per_page(&self) -> usize {
        self.columns * self.rows
    }
}

/// The geometry of a layout. `Sheet` is the common A4 sheet of 63.5 x 38.1 mm labels (Avery L7160 and its
/// kin): 3 columns, and 7 rows, which is as many as 38.1 mm fit on 297 mm. `Roll` is a 62 x 29 mm label per page
/// (Brother DK-11209 and its kin).
pub fn geometry(layout: LabelLayout) -> Geometry {
    match layout {
        LabelLayout::Sheet => Geometry {
            page_width: 210.0,
            page_height: 297.0,
            label_width: 63.5,
            label_height: 38.1,
            columns: 3,
            rows: 7,
            left: 7.21,
            top: 15.15,
            pitch_x: 66.04,
            pitch_y: 38.1,
            font_size: 10.0,
            name_lines: 4,
        },
        LabelLayout::Roll => Geometry {
            page_width: 62.0,
            page_height: 29.0,
            label_width: 62.0,
            label_height: 29.0,
            columns: 1,
            rows: 1,
            left: 0.0,
            top: 0.0,
            pitch_x: 62.0,
            pitch_y: 29.0,
            font_size: 10.0,
            name_lines: 3,
        },
    }
}

/// The `LabelPrinter` over `qrcode` and `pdf-writer`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PdfLabels;

impl PdfLabels {
    pub fn new() -> Self {
        Self
    }
}

impl LabelPrinter for PdfLabels {
    fn pdf(&self, labels: &[Label], layout: LabelLayout) -> anyhow::Result<Vec<u8>> {
        render(labels, &geometry(layout))
    }
}

pub(crate) fn mm(v: f32) -> f32 {
    v * PT_PER_MM
}

/// The PDF of `labels` laid out by `g`.
fn render(labels: &[Label], g: &Geometry) -> anyhow::Result<Vec<u8>> {
    let mut pdf = Pdf::new();
    let catalog = Ref::new(1);
    let tree = Ref::new(2);
    let font = Ref::new(3);
    let bold = Ref::new(4);
    let pages: Vec<&[Label]> = if labels.is_empty() { vec![&[]] } else { labels.chunks(g.per_page()).collect() };
    let page_ids: Vec<Ref> = (0..pages.len()).map(|i| Ref::new(5 + 2 * i as i32)).collect();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree).kids(page_ids.iter().copied()).count(page_ids.len() as i32);
    pdf.type1_font(font).base_font(Name(b"Helvetica")).encoding_predefined(Name(b"WinAnsiEncoding"));
    pdf.type1_font(bold).base_font(Name(b"Helvetica-Bold")).encoding_predefined(Name(b"WinAnsiEncoding"));
    for (labels, page_id) in pages.into_iter().zip(&page_ids) {
        let content_id = Ref::new(page_id.get() + 1);
        let mut page = pdf.page(*page_id);
        page.media_box(Rect::new(0.0, 0.0, mm(g.page_width), mm(g.page_height)));
        page.parent(tree);
        page.contents(content_id);
        page.resources().fonts().pair(FONT, font).pair(BOLD, bold);
        page.finish();
        let mut content = Content::new();
        for (i, label) in labels.iter().enumerate() {
            let (col, row) = (i % g.columns, i / g.columns);
            let x = g.left + col as f32 * g.pitch_x;
            let top = g.page_height - g.top - row as f32 * g.pitch_y;
            draw(&mut content, label, g, x, top)?;
        }
        let deflated = miniz_oxide::deflate::compress_to_vec_zlib(&content.finish(), 6);
        pdf.stream(content_id, &deflated).filter(Filter::FlateDecode);
    }
    Ok(pdf.finish())
}

/// Draws one label whose top-left corner is at (`x`, `top`) mm from the page's bottom-left.
fn draw(content: &mut Content, label: &Label, g: &Geometry, x: f32, top: f32) -> anyhow::Result<()> {
    let code = QrCode::with_error_correction_level(label.link.as_bytes(), EcLevel::M)
        .with_context(|| format!("the link {:?} does not fit a QR code", label.link))?;
    let modules = code.width();
    let side = g.label_height - 2.0 * PADDING_MM;
    let module = side / (modules + 2 * QUIET_MODULES) as f32;
    let (qr_x, qr_top) =
        (x + PADDING_MM + QUIET_MODULES as f32 * module, top - PADDING_MM - QUIET_MODULES as f32 * module);
    // In module units from the code's top-left corner, y down: each row's runs of dark modules as one
    // rectangle, all filled at once.
    content.save_state();
    content.transform([mm(module), 0.0, 0.0, -mm(module), mm(qr_x), mm(qr_top)]);
    content.set_fill_gray(0.0);
    let colors = code.to_colors();
    for (r, row) in colors.chunks(modules).enumerate() {
        let mut c = 0;
        while c < modules {
            if row[c] == Color::Dark {
                let start = c;
                while c < modules && row[c] == Color::Dark {
                    c += 1;
                }
                content.rect(start as f32, r as f32, (c - start) as f32, 1.0);
            } else {
                c += 1;
            }
        }
    }
    content.fill_nonzero();
    content.restore_state();

    // The code at the bottom; above it, from the top: a place's path then its name, large, or an item's name.
    let text_x = x + PADDING_MM + side + 1.0;
    let width = mm(x + g.label_width - PADDING_MM - text_x);
    let bottom = mm(top - g.label_height + PADDING_MM) + 1.0;
    show(content, BOLD, g.font_size, mm(text_x), bottom, width, &label.code);
    let room = mm(g.label_height - 2.0 * PADDING_MM) - g.font_size * LEADING;
    // Characters a line holds at `size`, at the average width of `text`'s own characters.
    let chars = |size: f32, text: &str, bold: bool| {
        let n = text.chars().count().max(1) as f32;
        let em = (text_width(text, bold) / n).max(0.3);
        (width / (size * em)).floor().max(4.0) as usize
    };
    let lines_of = |size: f32, room: f32| ((room / (size * LEADING)).floor() as usize).max(1);
    let mut y = mm(top - PADDING_MM);
    if matches!(label.target, LabelTarget::Place(_)) {
        let names: Vec<&str> = label.within.iter().map(String::as_str).collect();
        // The path takes at most two lines and leaves the name at least one.
        let path_lines = lines_of(PLACE_PATH_PT, room - PLACE_NAME_PT * LEADING).min(2);
        let path = fit_path(&names, chars(PLACE_PATH_PT, &names.join(" / "), false), path_lines);
        for line in &path {
            y -= PLACE_PATH_PT;
            show(content, FONT, PLACE_PATH_PT, mm(text_x), y, width, line);
            y -= PLACE_PATH_PT * (LEADING - 1.0);
        }
        let left = room - path.len() as f32 * PLACE_PATH_PT * LEADING;
        for line in fit(&label.name, chars(PLACE_NAME_PT, &label.name, true), lines_of(PLACE_NAME_PT, left)) {
            y -= PLACE_NAME_PT;
            show(content, BOLD, PLACE_NAME_PT, mm(text_x), y, width, &line);
            y -= PLACE_NAME_PT * (LEADING - 1.0);
        }
    } else {
        for line in
            fit(&label.name, chars(g.font_size, &label.name, false), g.name_lines.min(lines_of(g.font_size, room)))
        {
            y -= g.font_size;
            show(content, FONT, g.font_size, mm(text_x), y, width, &line);
            y -= g.font_size * (LEADING - 1.0);
        }
    }
    Ok(())
}

/// Writes `text` at (`x`, `y`) pt, its size lowered when it would be wider than `width` pt.
pub(crate) fn show(content: &mut Content, font: Name, size: f32, x: f32, y: f32, width: f32, text: &str) {
    let em = text_width(text, font == BOLD);
    let size = if em * size > width { width / em } else { size };
    content.begin_text();
    content.set_font(font, size);
    content.next_line(x, y);
    content.show(Str(&win_ansi(text)));
    content.end_text();
}

/// `text` in the WinAnsi encoding of the standard fonts; a character it lacks is `?`.
fn win_ansi(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| match c {
            ' '..='~' => c as u8,
            '\u{A0}'..='\u{FF}' => c as u32 as u8,
            '€' => 0x80,
            '‚' => 0x82,
            '„' => 0x84,
            '…' => 0x85,
            '‘' => 0x91,
            '’' => 0x92,
            '“' => 0x93,
            '”' => 0x94,
            '•' => 0x95,
            '–' => 0x96,
            '—' => 0x97,
            '™' => 0x99,
            'Œ' => 0x8C,
            'œ' => 0x9C,
            'Š' => 0x8A,
            'š' => 0x9A,
            'Ž' => 0x8E,
            'ž' => 0x9E,
            'Ÿ' => 0x9F,
            _ => b'?',
        })
        .collect()
}

/// The widths of Helvetica's printable ASCII characters (from its AFM), in thousandths of an em.
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556, 556,
    556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833,
    722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556,
    556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334,
    260, 334, 584,
];

/// The width of `text` in ems; bold is taken as a tenth wider, other characters as wide as a capital.
pub(crate) fn text_width(text: &str, bold: bool) -> f32 {
    let thousandths: u32 = text
        .chars()
        .map(|c| match c {
            ' '..='~' => u32::from(HELVETICA[c as usize - 32]),
            '…' => 1000,
            _ => 722,
        })
        .sum();
    thousandths as f32 / 1000.0 * if bold { 1.1 } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trove_domain::ItemId;

    fn label(i: i64) -> Label {
        Label {
            target: LabelTarget::Item(ItemId(i)),
            link: format!("http://192.168.1.20:8080/#/items/{i}"),
            name: format!("Item number {i} with a rather long name"),
            code: format!("I-{i}"),
            within: Vec::new(),
        }
    }

    fn count(haystack: &[u8], needle: &[u8]) -> usize {
        haystack.windows(needle.len()).filter(|w| *w == needle).count()
    }

    #[test]
    fn labels_fill_pages_of_their_layout() {
        let labels: Vec<Label> = (1..=22).map(label).collect();
        let sheet = PdfLabels.pdf(&labels, LabelLayout::Sheet).unwrap();
        assert!(sheet.starts_with(b"%PDF-"));
        assert_eq!(count(&sheet, b"/Type /Page\n"), 2, "21 labels a sheet");
        assert_eq!(count(&sheet, b"/MediaBox [0 0 595.2756"), 2, "A4: 210 x 297 mm");
        assert_eq!(count(&sheet, b" 841.8898]"), 2, "A4: 210 x 297 mm");
        let roll = PdfLabels.pdf(&labels[..3], LabelLayout::Roll).unwrap();
        assert_eq!(count(&roll, b"/Type /Page\n"), 3, "one label a page");
        assert_eq!(count(&roll, b"/MediaBox [0 0 175.748"), 3, "62 x 29 mm");
        assert_eq!(count(&roll, b" 82.2047"), 3, "62 x 29 mm");
        let blank = PdfLabels.pdf(&[], LabelLayout::Sheet).unwrap();
        assert_eq!(count(&blank, b"/Type /Page\n"), 1);
        let mut long = label(1);
        long.link = "x".repeat(5000);
        assert!(PdfLabels.pdf(&[long], LabelLayout::Roll).is_err());
    }

    #[test]
    fn the_sheet_fits_the_page() {
        for layout in [LabelLayout::Sheet, LabelLayout::Roll] {
            let g = geometry(layout);
            let right = g.left + (g.columns - 1) as f32 * g.pitch_x + g.label_width;
            let bottom = g.top + (g.rows - 1) as f32 * g.pitch_y + g.label_height;
            assert!(right <= g.page_width + 0.01 && bottom <= g.page_height + 0.01, "{layout:?}");
        }
        assert_eq!(geometry(LabelLayout::Sheet).per_page(), 21);
    }

    #[test]
    fn text_is_encoded_for_the_standard_fonts() {
        assert_eq!(win_ansi("Box 4"), b"Box 4");
        assert_eq!(win_ansi("Über…€"), [0xDC, b'b', b'e', b'r', 0x85, 0x80]);
        assert_eq!(win_ansi("箱"), b"?");
        assert!((text_width("Hi", false) - 0.944).abs() < 1e-6);
    }
}
