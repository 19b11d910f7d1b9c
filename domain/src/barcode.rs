//! Barcodes as a reader reads them from a photo: which symbology each is, and the product code (a GTIN or an ISBN)
//! it carries, if it carries one.
//!
//! A retail barcode (EAN-13, EAN-8, UPC-A, ITF-14) holds the GTIN's digits; a UPC-E holds a UPC-A with its zeros
//! left out, so its eight digits are expanded before they are read (they are no EAN-8). A Code 128 or a
//! DataMatrix holds any text: a GTIN when it is the digits of one, or when it is a GS1 element string (the reader
//! saw its FNC1) starting with the application identifier `01` and fourteen digits. A QR code is never read as a
//! product code: Trove's own labels are QR codes, read as links.
//!
//! ```
//! use trove_domain::barcode::{Symbology, product_code};
//! let ean = product_code(Symbology::Ean13, "4006381333931", false).unwrap();
//! assert_eq!(ean.key(), "04006381333931");
//! let upc_e = product_code(Symbology::UpcE, "01234565", false).unwrap();
//! assert_eq!(upc_e.shown(), "012345000065");
//! assert!(product_code(Symbology::Code128, "SHELF-12", false).is_none());
//! ```

use crate::code::{Code, CodeKind, upc_e_to_upc_a};
use std::fmt;

/// The symbologies Trove reads from photos.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Symbology {
    /// A QR code: Trove's own labels, and any other.
    QrCode,
    /// A DataMatrix (GS1 DataMatrix on medicines and many boxes).
    DataMatrix,
    Ean13,
    Ean8,
    UpcA,
    UpcE,
    Code128,
    /// Interleaved 2 of 5; read only as ITF-14 (the fourteen digits of a carton's GTIN).
    Itf,
}

impl Symbology {
    /// Every symbology, in the order the API lists them.
    pub const ALL: [Self; 8] =
        [Self::QrCode, Self::DataMatrix, Self::Ean13, Self::Ean8, Self::UpcA, Self::UpcE, Self::Code128, Self::Itf];

    /// Its name in the API, the one the browsers' `BarcodeDetector` uses: `qr_code`, `data_matrix`, `ean_13`,
    /// `ean_8`, `upc_a`, `upc_e`, `code_128`, `itf`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::QrCode => "qr_code",
            Self::DataMatrix => "data_matrix",
            Self::Ean13 => "ean_13",
            Self::Ean8 => "ean_8",
            Self::UpcA => "upc_a",
            Self::UpcE => "upc_e",
            Self::Code128 => "code_128",
            Self::Itf => "itf",
        }
    }

    /// Whether it is a retail symbology whose text is always a GTIN's digits (EAN, UPC, ITF-14), so a text that
    /// is not a valid GTIN is a misread, not a code.
    pub fn is_retail(self) -> bool {
        matches!(self, Self::Ean13 | Self::Ean8 | Self::UpcA | Self::UpcE | Self::Itf)
    }
}

impl fmt::Display for Symbology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The GTIN or ISBN a barcode of `symbology` reading `text` carries; `gs1` is whether the reader saw the FNC1
/// that marks a GS1 element string (a GS1-128 or a GS1 DataMatrix). `None` for a QR code, for a text that is no
/// GTIN or ISBN (a shop's own code), and for a retail symbology whose digits fail their check (a misread).
///
/// ```
/// use trove_domain::barcode::{Symbology, product_code};
/// use trove_domain::code::CodeKind;
/// let book = product_code(Symbology::Ean13, "9780306406157", false).unwrap();
/// assert_eq!(book.kind(), CodeKind::Isbn);
/// let gs1 = product_code(Symbology::DataMatrix, "0109501101530003\u{1d}17261231", true).unwrap();
/// assert_eq!(gs1.shown(), "09501101530003");
/// assert!(product_code(Symbology::QrCode, "4006381333931", false).is_none());
/// assert!(product_code(Symbology::Ean13, "4006381333932", false).is_none());
/// ```
pub fn product_code(symbology: Symbology, text: &str, gs1: bool) -> Option<Code> {
    let digits = match symbology {
        Symbology::QrCode => return None,
        Symbology::UpcE => upc_e_to_upc_a(text)?,
        Symbology::Ean13 | Symbology::Ean8 | Symbology::UpcA | Symbology::Itf => text.to_owned(),
        Symbology::Code128 | Symbology::DataMatrix => match gs1_gtin(text) {
            Some(gtin) if gs1 => gtin.to_owned(),
            _ if is_gtin_shaped(text) => text.to_owned(),
            _ => return None,
        },
    };
    Code::parse(None, &digits).ok().filter(|c| c.kind() != CodeKind::Other)
}

/// The fourteen digits after the application identifier `01` that opens a GS1 element string.
fn gs1_gtin(text: &str) -> Option<&str> {
    let gtin = text.strip_prefix("01")?.get(..14)?;
    gtin.bytes().all(|b| b.is_ascii_digit()).then_some(gtin)
}

/// Whether `text` is 8, 12, 13 or 14 digits and nothing else.
fn is_gtin_shaped(text: &str) -> bool {
    matches!(text.len(), 8 | 12 | 13 | 14) && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use Symbology::*;

    /// `text` read as `symbology` (with `gs1`) carries the code of `want`: (kind, key), or none.
    fn check(symbology: Symbology, text: &str, gs1: bool, want: Option<(CodeKind, &str)>) {
        let got = product_code(symbology, text, gs1);
        assert_eq!(got.as_ref().map(|c| (c.kind(), c.key())), want, "{symbology} {text:?} gs1={gs1}");
    }

    #[test]
    fn each_symbology_carries_its_product_code() {
        check(Ean13, "4006381333931", false, Some((CodeKind::Gtin, "04006381333931")));
        check(Ean13, "9780306406157", false, Some((CodeKind::Isbn, "09780306406157")));
        check(Ean8, "96385074", false, Some((CodeKind::Gtin, "00000096385074")));
        check(UpcA, "036000291452", false, Some((CodeKind::Gtin, "00036000291452")));
        // A UPC-E is the UPC-A it stands for, not the EAN-8 its eight digits would be.
        check(UpcE, "01234565", false, Some((CodeKind::Gtin, "00012345000065")));
        check(UpcE, "21234565", false, None);
        check(Itf, "10012345000017", false, Some((CodeKind::Gtin, "10012345000017")));
        check(Code128, "4006381333931", false, Some((CodeKind::Gtin, "04006381333931")));
        check(Code128, "0110012345000017", true, Some((CodeKind::Gtin, "10012345000017")));
        check(DataMatrix, "0109501101530003\u{1d}17261231\u{1d}10AB12", true, Some((CodeKind::Gtin, "09501101530003")));
        // Without the FNC1 the digits are only a number, and 16 digits are no GTIN.
        check(DataMatrix, "0109501101530003", false, None);
    }

    #[test]
    fn shop_codes_misreads_and_qr_codes_carry_none() {
        check(Code128, "SHELF-12", false, None);
        check(Code128, "12345", false, None);
        check(DataMatrix, "https://example.com/p/1", false, None);
        check(QrCode, "4006381333931", false, None);
        // A retail symbology's digits that fail the GS1 check are a misread.
        check(Ean13, "4006381333932", false, None);
        check(Itf, "10012345000018", false, None);
        check(Itf, "123456", false, None);
        check(Code128, "0110012345000018", true, None);
    }
}
