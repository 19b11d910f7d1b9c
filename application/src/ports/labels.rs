//! Labels: printing them (a PDF of QR codes and names) and reading the codes in a photo back (our labels' QR
//! codes, and the barcodes on boxes).

use crate::ports::VisionError;
use trove_domain::barcode::Symbology;
use trove_domain::label::LabelTarget;

/// One label as it is printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// What the label is stuck on.
    pub target: LabelTarget,
    /// What the QR code holds: the link that opens the object's page (`PublicUrl::link`).
    pub link: String,
    /// The object's name; the printer shortens it to fit (`trove_domain::label::fit`).
    pub name: String,
    /// The short code printed for people (`I-42`, `P-7`).
    pub code: String,
    /// For a place, the names of the places it is in, outermost first, printed above its name so the many
    /// "Box 1"s of a garage are told apart; empty for an item (an item moves, its label stays).
    pub within: Vec<String>,
}

/// How labels are laid out on paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelLayout {
    /// A4 sheets of 3 x 7 labels of 63.5 x 38.1 mm (the common sheet of sticky labels, L7160).
    Sheet,
    /// One 62 x 29 mm label per page, for continuous label printers.
    Roll,
}

/// Makes the PDF of a set of labels. Synchronous: it is CPU work, which async callers run on a blocking thread.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait LabelPrinter: Send + Sync {
    /// A PDF with one label per entry of `labels`, in the order given, each with a QR code of its `link` that
    /// an ordinary QR reader decodes, its name (shortened to fit) and its code.
    ///
    /// # Errors
    /// Only when the PDF cannot be made (a link too long for a QR code); never for an empty list, which is one
    /// blank page.
    fn pdf(&self, labels: &[Label], layout: LabelLayout) -> anyhow::Result<Vec<u8>>;
}

/// A code read in a photo: its symbology and its text as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadCode {
    pub symbology: Symbology,
    /// The text the code holds (a GS1 element string's FNC1 separators as `\u{1d}`).
    pub text: String,
    /// Whether the reader saw the FNC1 that marks a GS1 element string (a GS1-128 or a GS1 DataMatrix).
    pub gs1: bool,
}

/// Reads the codes in a photo: QR codes, DataMatrix and the retail 1-D barcodes (EAN-13, EAN-8, UPC-A, UPC-E,
/// Code 128, ITF-14). Synchronous: it is CPU work, which async callers run on a blocking thread.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait CodeReader: Send + Sync {
    /// Decodes `image` (JPEG, PNG or WebP, told by its magic bytes) and answers every code it reads, QR codes
    /// first, each once; none found is an empty list, not an error. A large photo is read at a bounded working
    /// size, so its cost does not grow with its pixels beyond decoding it. A barcode turned by any angle is read.
    ///
    /// # Errors
    /// MUST return `Unsupported` when the bytes are of no supported format, `Undecodable` when they claim one and
    /// do not decode, and `TooLarge` when the image has more pixels than the reader accepts (checked before the
    /// pixels are decoded).
    fn read(&self, image: &[u8]) -> Result<Vec<ReadCode>, VisionError>;
}
