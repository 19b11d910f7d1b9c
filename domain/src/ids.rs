//! Identifiers. Each is a newtype so an item id can never be passed where a project id is expected.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id!(
    /// An item of the inventory, unique in the store.
    ItemId
);
id!(
    /// A template (a project that may be proposed).
    TemplateId
);
id!(
    /// A project written by the rules from a proposal.
    ProjectId
);
id!(
    /// A household: every object belongs to exactly one.
    HouseholdId
);
id!(
    /// A place where things are (a room, a shelf, a box), unique in the store.
    PlaceId
);
id!(
    /// A medium (a photo, receipt or manual) kept on an item, unique in the store.
    MediaId
);
id!(
    /// A member of a household, unique in the store.
    MemberId
);
id!(
    /// A signed-in browser session.
    SessionId
);
id!(
    /// A personal API token.
    TokenId
);
id!(
    /// An event of the history.
    EventId
);
id!(
    /// A passkey a member signs in with.
    PasskeyId
);
id!(
    /// A one-time invitation into a household.
    InvitationId
);
id!(
    /// A loan of an item (or of units of a stock) to someone.
    LoanId
);
id!(
    /// A maintenance schedule of an item.
    ScheduleId
);
