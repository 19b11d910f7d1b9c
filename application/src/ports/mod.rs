//! The ports: what the use cases need from the world. Each is an `#[async_trait]` trait held as `Arc<dyn Port>`;
//! `mockall` mocks of them are exported behind the `testing` feature.

pub mod access;
pub mod backup;
pub mod clock;
pub mod documents;
pub mod history;
pub mod households;
pub mod idempotency;
pub mod inventory;
pub mod labels;
pub mod lending;
pub mod lookup;
pub mod media;
pub mod model;
pub mod notify;
pub mod passkeys;
pub mod people;
pub mod places;
pub mod prices;
pub mod projects;
pub mod ready;
pub mod sheet;
pub mod spend;
pub mod sso;
pub mod templates;
pub mod throttle;
pub mod vision;

pub use access::{AccessChange, AccessChanges};
pub use backup::{BackupArchives, BackupFile, BackupRepo, DumpSink, Dumped, LoadSource, Loaded};
pub use clock::Clock;
pub use documents::{ValueDocument, ValuePrinter, ValueSheet, ValuedItem};
pub use history::EventRepo;
pub use households::HouseholdRepo;
pub use idempotency::IdempotencyStore;
pub use inventory::{
    ImportEvents, ImportHistory, ImportWritten, InventoryRepo, ItemPage, ItemQuery, ItemSort, PlaceFilter, Reimported,
    SortKey,
};
pub use labels::{CodeReader, Label, LabelLayout, LabelPrinter, ReadCode};
pub use lending::{
    Channels, LendingRepo, LoanFilter, Logged, NewLoan, NewReminder, Reminder, ReminderRepo, Subscriber,
};
pub use lookup::{CachedLookup, LookupCache, ProductCandidate, ProductSource, ProviderFailed, SourcedCandidate};
pub use media::{MediaRepo, MediaStore, Pictures};
pub use model::ModelPort;
pub use notify::{CalendarWriter, DeliveryFailed, Note, Notifier};
pub use passkeys::{PasskeyCeremonies, PasskeyRepo};
pub use people::{InvitationRepo, MemberRepo, PasswordHasher, SecretSource, SessionRepo, TokenRepo};
pub use places::{FoundPath, PlaceRepo};
pub use prices::PriceRepo;
pub use projects::ProjectRepo;
pub use sheet::ItemSheet;
pub use spend::SpendLedger;
pub use templates::TemplateRepo;
pub use throttle::{InstanceSecrets, SignInFailures};
pub use vision::{MIN_SIDE, ModelImages, PhotoSegmenter, PreparedImage, Segmentation, VisionError};
