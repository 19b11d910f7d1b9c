//! Labels read back: the PDF rendered to an image by `pdftoppm` (as a printer or a screen would), its QR codes
//! decoded by the same reader scanning uses, and compared with the links they were made of.

use trove_application::ports::{CodeReader, Label, LabelLayout, LabelPrinter};
use trove_domain::label::{LabelTarget, PublicUrl};
use trove_domain::{ItemId, PlaceId};
use trove_labels::testing::{blank, pages, photographed, png, words};
use trove_labels::{PLACE_NAME_PT, PLACE_PATH_PT, PdfLabels, QrReader, geometry};

/// The texts of the codes `QrReader` reads in `image`.
fn texts(image: &[u8]) -> Vec<String> {
    QrReader.read(image).unwrap().into_iter().map(|c| c.text).collect()
}

fn labels(n: i64) -> Vec<Label> {
    let url = PublicUrl::new("http://192.168.1.20:8080").unwrap();
    (1..=n)
        .map(|i| {
            let target =
                if i % 3 == 0 { LabelTarget::Place(PlaceId(i * 7)) } else { LabelTarget::Item(ItemId(i * 1000 + 1)) };
            Label {
                target,
                link: url.link(target),
                name: format!("Thing {i}: USB-C charger 65 W"),
                code: target.short_code(),
                within: if i % 3 == 0 { vec!["Garage".into(), format!("Shelf {i}")] } else { Vec::new() },
            }
        })
        .collect()
}

/// Every label of a sheet, each cut out of the page as a phone would frame it, decodes to its link.
#[test]
fn every_label_of_a_sheet_decodes_to_its_link() {
    let labels = labels(23);
    let pdf = PdfLabels.pdf(&labels, LabelLayout::Sheet).unwrap();
    let dpi = 150.0;
    let pages = pages(&pdf, dpi as u32);
    assert_eq!(pages.len(), 2);
    let g = geometry(LabelLayout::Sheet);
    let px = |mm: f32| (mm * dpi / 25.4).round() as u32;
    let mut read = Vec::new();
    for page in &pages {
        for i in 0..g.per_page() {
            let (col, row) = ((i % g.columns) as f32, (i / g.columns) as f32);
            let (x, y) = (px(g.left + col * g.pitch_x), px(g.top + row * g.pitch_y));
            let cut = image::imageops::crop_imm(page, x, y, px(g.label_width), px(g.label_height)).to_image();
            read.extend(texts(&png(&cut)));
        }
    }
    assert_eq!(read, labels.iter().map(|l| l.link.clone()).collect::<Vec<_>>());
}

#[test]
fn a_roll_label_decodes_to_its_link() {
    let labels = labels(2);
    let pdf = PdfLabels.pdf(&labels, LabelLayout::Roll).unwrap();
    let pages = pages(&pdf, 300);
    assert_eq!(pages.len(), 2);
    for (page, label) in pages.iter().zip(&labels) {
        assert_eq!(texts(&png(page)), std::slice::from_ref(&label.link));
    }
}

#[test]
fn a_photographed_label_decodes_to_its_link() {
    let labels = labels(1);
    let pdf = PdfLabels.pdf(&labels, LabelLayout::Roll).unwrap();
    let label = &pages(&pdf, 300)[0];
    for (scale, degrees, width, height) in [(1.0, 15.0, 1600, 1200), (2.5, -12.0, 4000, 3000), (0.8, 20.0, 1280, 960)] {
        let photo = photographed(label, scale, degrees, width, height);
        assert_eq!(texts(&photo), [labels[0].link.clone()], "x{scale} at {degrees} degrees");
    }
    // A photo of the table alone holds no code.
    let blank = blank(label.width(), label.height());
    assert!(QrReader.read(&photographed(&blank, 1.0, 15.0, 1600, 1200)).unwrap().is_empty());
}

/// A place's label says where the place is (the places it is in, so the many "Box 1"s are told apart) and its
/// name in large type; an item's label its name in the normal size. Read back from the PDF's text by pdftotext.
#[test]
fn a_place_label_shows_its_path_and_its_name_in_large_type() {
    let url = PublicUrl::new("http://192.168.1.20:8080").unwrap();
    let place = |id: i64, name: &str, within: &[&str]| Label {
        target: LabelTarget::Place(PlaceId(id)),
        link: url.link(LabelTarget::Place(PlaceId(id))),
        name: name.into(),
        code: LabelTarget::Place(PlaceId(id)).short_code(),
        within: within.iter().map(|s| (*s).to_string()).collect(),
    };
    let item = Label {
        target: LabelTarget::Item(ItemId(4)),
        link: url.link(LabelTarget::Item(ItemId(4))),
        name: "Drill".into(),
        code: "I-4".into(),
        within: Vec::new(),
    };
    let labels = [
        place(1, "Box 1", &["Garage", "Shelf 2"]),
        place(2, "Box 1", &["Attic"]),
        place(3, "Cellar", &[]),
        place(4, "Box 1", &["House", "Upstairs", "Spare bedroom", "Wardrobe", "Top shelf"]),
        item,
    ];
    for layout in [LabelLayout::Sheet, LabelLayout::Roll] {
        let pdf = PdfLabels.pdf(&labels, layout).unwrap();
        let words = words(&pdf);
        // Per label (a page on a roll; by position on the sheet), its words in reading order.
        let g = geometry(layout);
        let label_of = |w: &trove_labels::testing::Word| match layout {
            LabelLayout::Roll => w.page - 1,
            LabelLayout::Sheet => {
                let pt = 72.0 / 25.4;
                let col = ((w.x / pt - g.left) / g.pitch_x).floor() as usize;
                let row = ((w.y / pt - g.top) / g.pitch_y).floor() as usize;
                row * g.columns + col
            }
        };
        let text =
            |i: usize| words.iter().filter(|w| label_of(w) == i).map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
        assert_eq!(text(0), "Garage / Shelf 2 / Box 1 P-1", "{layout:?}");
        assert_eq!(text(1), "Attic / Box 1 P-2", "{layout:?}");
        assert_eq!(text(2), "Cellar P-3", "{layout:?}");
        assert!(text(3).starts_with("… / ") && text(3).ends_with("Top shelf / Box 1 P-4"), "{layout:?}: {}", text(3));
        assert_eq!(text(4), "Drill I-4", "{layout:?}");
        let height = |label: usize, word: &str| {
            words.iter().find(|w| label_of(w) == label && w.text == word).map(|w| w.height).unwrap()
        };
        // pdftotext's box of a word is Helvetica's ascent to descent: 0.925 of the font size.
        let size = |label: usize, word: &str| height(label, word) / 0.925;
        assert!((size(0, "Box") - PLACE_NAME_PT).abs() < 0.1, "{layout:?}: {}", size(0, "Box"));
        assert!((size(0, "Garage") - PLACE_PATH_PT).abs() < 0.1, "{layout:?}: {}", size(0, "Garage"));
        assert!(size(4, "Drill") < PLACE_PATH_PT, "{layout:?}: an item's name stays in the normal size");
    }
}
