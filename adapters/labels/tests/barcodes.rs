//! Barcodes read back from photos: each symbology made by a writer, printed on a box face and photographed
//! turned, at an angle and out of focus, then read by the same reader scanning uses.

use trove_application::ports::{CodeReader, ReadCode};
use trove_domain::barcode::Symbology;
use trove_labels::QrReader;
use trove_labels::testing::{Shot, barcode, blank, photographed, photographed_box};

/// One code of each symbology the reader reads, with what it holds.
const CODES: [(Symbology, &str); 8] = [
    (Symbology::Ean13, "4006381333931"),
    (Symbology::Ean8, "96385074"),
    (Symbology::UpcA, "036000291452"),
    (Symbology::UpcE, "01234565"),
    (Symbology::Code128, "TROVE-128 ab"),
    (Symbology::Itf, "10012345000017"),
    (Symbology::DataMatrix, "https://trove.example/p/42"),
    (Symbology::QrCode, "https://trove.example/#/items/7"),
];

/// The symbologies and texts `QrReader` reads in `photo`.
fn read(photo: &[u8]) -> Vec<(Symbology, String)> {
    QrReader.read(photo).unwrap().into_iter().map(|ReadCode { symbology, text, .. }| (symbology, text)).collect()
}

/// `shot` of a box carrying each code reads that code, and only it.
fn check(shot: Shot, what: &str) {
    for (symbology, text) in CODES {
        let module = if symbology == Symbology::DataMatrix || symbology == Symbology::QrCode { 4 } else { 2 };
        let photo = photographed_box(&barcode(symbology, text, module), shot);
        assert_eq!(read(&photo), [(symbology, text.to_owned())], "{symbology} {what}");
    }
}

#[test]
fn every_symbology_is_read_straight_and_turned_up_to_90_degrees() {
    for degrees in [0.0, 15.0, 45.0, 90.0, -30.0] {
        check(Shot { degrees, ..Shot::new() }, &format!("turned by {degrees} degrees"));
    }
}

#[test]
fn every_symbology_is_read_at_an_angle_and_out_of_focus() {
    check(Shot { degrees: 10.0, tilt: 0.3, ..Shot::new() }, "at an angle");
    check(Shot { degrees: -20.0, blur: 0.9, ..Shot::new() }, "out of focus");
}

/// A 12-megapixel photo of a box, the code a sixth of its width, turned, at an angle and a little out of focus, is
/// read at the reader's working size.
#[test]
fn a_phone_photo_of_a_box_is_read() {
    let shot = Shot { width: 4000, height: 3000, face: 0.45, degrees: 25.0, tilt: 0.2, blur: 2.0 };
    for (symbology, text) in [(Symbology::Ean13, "9780306406157"), (Symbology::UpcA, "036000291452")] {
        let photo = photographed_box(&barcode(symbology, text, 8), shot);
        assert_eq!(read(&photo), [(symbology, text.to_owned())], "{symbology}");
    }
}

/// A photo of a table, or of a box with no code on it, reads nothing (no misread of the noise).
#[test]
fn a_photo_without_a_code_reads_none() {
    assert!(read(&photographed(&blank(700, 330), 1.0, 15.0, 1600, 1200)).is_empty());
    assert!(read(&photographed_box(&blank(300, 200), Shot { degrees: 20.0, ..Shot::new() })).is_empty());
}
