//! The models people use through Trove, with their list rates and whether they reason: rates follow the model,
//! not the provider's profile (gpt-5 and gpt-4o-mini differ tenfold on one provider), and only a reasoning model
//! is asked for its encrypted reasoning (a non-reasoning model refuses the `include`). Every rate stays
//! overridable (`RATE_*`); a model not in the table keeps its profile's rates, and `trove model check` says they
//! are assumed.

use trove_domain::money::MicroUsd;
use trove_domain::spend::Rates;

/// A model of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// Its id, or the start of its dated ids (`gpt-5-mini` covers `gpt-5-mini-2025-08-07`).
    pub name: &'static str,
    /// Per million input, cached input and output tokens.
    pub input_per_mtok: MicroUsd,
    pub cached_per_mtok: MicroUsd,
    pub output_per_mtok: MicroUsd,
    /// Whether it reasons (and so returns reasoning items to replay with its function calls).
    pub reasons: bool,
}

const fn model(name: &'static str, input: i64, cached: i64, output: i64, reasons: bool) -> KnownModel {
    KnownModel {
        name,
        input_per_mtok: MicroUsd(input),
        cached_per_mtok: MicroUsd(cached),
        output_per_mtok: MicroUsd(output),
        reasons,
    }
}

/// The table, in USD per million tokens (standard tier list prices).
pub const MODELS: &[KnownModel] = &[
    model("muse-spark", 1_250_000, 150_000, 4_250_000, true),
    model("gpt-5", 1_250_000, 125_000, 10_000_000, true),
    model("gpt-5-mini", 250_000, 25_000, 2_000_000, true),
    model("gpt-5-nano", 50_000, 5_000, 400_000, true),
    model("gpt-4.1", 2_000_000, 500_000, 8_000_000, false),
    model("gpt-4.1-mini", 400_000, 100_000, 1_600_000, false),
    model("gpt-4o", 2_500_000, 1_250_000, 10_000_000, false),
    model("gpt-4o-mini", 150_000, 75_000, 600_000, false),
    model("o4-mini", 1_100_000, 275_000, 4_400_000, true),
];

/// The model of the table `name` is (the longest name it starts with), if any.
///
/// ```
/// use trove_model::models::known;
/// assert_eq!(known("gpt-5-mini-2025-08-07").map(|m| m.name), Some("gpt-5-mini"));
/// assert_eq!(known("gpt-4.1").map(|m| m.reasons), Some(false));
/// assert_eq!(known("my-finetune"), None);
/// ```
pub fn known(name: &str) -> Option<&'static KnownModel> {
    let name = name.trim().to_ascii_lowercase();
    MODELS
        .iter()
        .filter(|m| name == m.name || name.strip_prefix(m.name).is_some_and(|rest| rest.starts_with(['-', '.', ':'])))
        .max_by_key(|m| m.name.len())
}

impl KnownModel {
    /// Its rates, the search and transcription rates taken from `base` (the provider's).
    pub fn rates(&self, base: Rates) -> Rates {
        Rates {
            input_per_mtok: self.input_per_mtok,
            cached_per_mtok: self.cached_per_mtok,
            output_per_mtok: self.output_per_mtok,
            ..base
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_name_wins_and_dated_ids_are_found() {
        assert_eq!(known("gpt-5").map(|m| m.name), Some("gpt-5"));
        assert_eq!(known("gpt-5-2025-08-07").map(|m| m.name), Some("gpt-5"));
        assert_eq!(known("gpt-4.1-mini").map(|m| m.name), Some("gpt-4.1-mini"));
        assert_eq!(known("GPT-4o-mini").map(|m| m.name), Some("gpt-4o-mini"));
        assert_eq!(known("muse-spark-1.3").map(|m| m.reasons), Some(true));
        assert_eq!(known("gpt-50"), None, "not a dated gpt-5");
        assert_eq!(known("gpt-oss:20b"), None);
    }

    #[test]
    fn the_default_meta_model_has_the_default_rates() {
        let muse = known("muse-spark-1.3").unwrap();
        assert_eq!(muse.rates(Rates::default()), Rates::default());
        let mini = known("gpt-5-mini").unwrap().rates(Rates::default());
        assert_eq!((mini.input_per_mtok, mini.per_search), (MicroUsd(250_000), Rates::default().per_search));
    }
}
