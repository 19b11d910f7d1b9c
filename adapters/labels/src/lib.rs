//! Trove's labels: a PDF of labels, each a QR code of the link to an item's or a place's page, its name and its
//! short code ([`PdfLabels`], the `LabelPrinter` port, over `qrcode` and `pdf-writer`); and the codes in a
//! photo read back ([`QrReader`], the `CodeReader` port: QR codes over `rqrr`, the barcodes on boxes over `rxing`,
//! on the grey pixels `trove_vision::decode_luma_within` gives); and the value report as the PDF an insurer is sent
//! ([`PdfValueReport`], the `ValuePrinter` port). The only crate that knows QR codes, barcodes or PDF.

mod pdf;
mod read;
mod report;
#[cfg(feature = "testing")]
pub mod testing;

pub use pdf::{Geometry, PLACE_NAME_PT, PLACE_PATH_PT, PdfLabels, geometry};
pub use read::{QrReader, WORKING_SIDE};
pub use report::PdfValueReport;
