//! Labels read back: the PDF rendered to an image by `pdftoppm` (as a printer or a screen would), its QR codes
//! decoded by the same reader scanning uses, and compared with the links they were made of.

use trove_application::ports::{CodeReader, Label, LabelLayout, LabelPrinter};
use trove_domain::label::{LabelTarget, PublicUrl};
use trove_domain::{ItemId, PlaceId};
use trove_labels::testing::{blank, pages, photographed, png};
use trove_labels::{PdfLabels, QrReader, geometry};

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
            read.extend(QrReader.read(&png(&cut)).unwrap());
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
        assert_eq!(QrReader.read(&png(page)).unwrap(), std::slice::from_ref(&label.link));
    }
}

#[test]
fn a_photographed_label_decodes_to_its_link() {
    let labels = labels(1);
    let pdf = PdfLabels.pdf(&labels, LabelLayout::Roll).unwrap();
    let label = &pages(&pdf, 300)[0];
    for (scale, degrees, width, height) in [(1.0, 15.0, 1600, 1200), (2.5, -12.0, 4000, 3000), (0.8, 20.0, 1280, 960)] {
        let photo = photographed(label, scale, degrees, width, height);
        assert_eq!(QrReader.read(&photo).unwrap(), [labels[0].link.clone()], "x{scale} at {degrees} degrees");
    }
    // A photo of the table alone holds no code.
    let blank = blank(label.width(), label.height());
    assert!(QrReader.read(&photographed(&blank, 1.0, 15.0, 1600, 1200)).unwrap().is_empty());
}
