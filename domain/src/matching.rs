//! Matching: is a candidate read at intake an item the household already has? So the owner updates that item
//! instead of creating a duplicate.
//!
//! The rules, strongest first:
//! - the same serial (the item's profile says "serial X", "S/N: X", "SN X") is certain: score 1.0;
//! - the same brand and model (every word of both found in the item's name or profile) is strong: 0.9 and up;
//! - otherwise the name, profile and type are compared word by word (a cosine of words weighted by how rare they
//!   are in the household, the name counting double): at most 0.8.
//!
//! [`MatchIndex`] is built once from the inventory (an inverted index of words and a map of serials), so a query
//! touches only the items that share a word with the candidate, never every item.

use crate::ItemId;
use crate::item::Item;
use std::collections::HashMap;

/// How many matches a candidate gets at most, by default.
pub const DEFAULT_LIMIT: usize = 5;
/// The lowest score of a match by similarity that is still shown.
pub const MIN_SCORE: f64 = 0.25;
/// The score of the same serial.
pub const SERIAL_SCORE: f64 = 1.0;
/// The lowest score of the same brand and model.
pub const BRAND_MODEL_SCORE: f64 = 0.9;
/// The highest score similarity alone gives.
pub const SIMILARITY_MAX: f64 = 0.8;

/// Weight of a word of the name; words only in the profile or of the type weigh [`SIDE_WEIGHT`].
const NAME_WEIGHT: f32 = 1.0;
const SIDE_WEIGHT: f32 = 0.5;
/// Words found in more items than this share of the household are not followed in the index (they are still
/// counted in the vectors' lengths): they cost the most and tell the least.
const COMMON_SHARE: usize = 5;
/// ... but only once the household is this large; below it every word is followed.
const COMMON_FLOOR: usize = 2_000;

const STOPWORDS: [&str; 14] =
    ["a", "an", "and", "the", "of", "for", "with", "in", "on", "to", "by", "or", "from", "serial"];

/// What a candidate offers to matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Probe<'a> {
    pub name: &'a str,
    pub profile: &'a str,
    pub item_type: Option<&'a str>,
    pub brand: Option<&'a str>,
    pub model: Option<&'a str>,
    pub serial: Option<&'a str>,
}

/// One item the candidate may be, with how sure and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub item_id: ItemId,
    /// 0 to 1; 1.0 is certain.
    pub score: f64,
    /// In words: "same serial AK12345678", "same brand and model (Anker A1263)", "similar name and profile
    /// (anker, powercore, 10000)".
    pub why: String,
}

/// The words of a text: lower-case runs of letters and digits, without stop words and single letters.
///
/// ```
/// use trove_domain::matching::words;
/// assert_eq!(words("Raspberry Pi 4, Model-B (4GB)"), vec!["raspberry", "pi", "4", "model", "4gb"]);
/// ```
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| {
            (w.chars().count() >= 2 || w.chars().all(|c| c.is_ascii_digit())) && !STOPWORDS.contains(&w.as_str())
        })
        .collect()
}

/// A serial as compared: upper-case letters and digits only; `None` unless at least 4 of them with a digit.
///
/// ```
/// use trove_domain::matching::normalise_serial;
/// assert_eq!(normalise_serial(" sn-1234-ab ").as_deref(), Some("SN1234AB"));
/// assert_eq!(normalise_serial("n/a"), None);
/// ```
pub fn normalise_serial(raw: &str) -> Option<String> {
    let s: String = raw.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_uppercase()).collect();
    (s.len() >= 4 && s.chars().any(|c| c.is_ascii_digit())).then_some(s)
}

/// The serials a text states: the word after "serial", "serial number", "serial no", "S/N" or "SN", normalised.
///
/// ```
/// use trove_domain::matching::serials_in;
/// assert_eq!(serials_in("Anker A1263, serial AK-1234; S/N: 99XY77"), vec!["AK1234", "99XY77"]);
/// ```
pub fn serials_in(text: &str) -> Vec<String> {
    let parts: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '#' | '(' | ')' | '=' | '[' | ']'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let w = p.trim_end_matches('.').to_lowercase();
        if !matches!(w.as_str(), "serial" | "s/n" | "sn" | "ser" | "serialnumber" | "serial_number") {
            continue;
        }
        let mut j = i + 1;
        while parts.get(j).is_some_and(|n| {
            matches!(n.trim_end_matches('.').to_lowercase().as_str(), "no" | "number" | "nr" | "num" | "is")
        }) {
            j += 1;
        }
        if let Some(s) = parts.get(j).and_then(|s| normalise_serial(s))
            && !out.contains(&s)
        {
            out.push(s);
        }
    }
    out
}

/// The type of an item as a word of its vector, apart from the words of its text.
fn type_word(item_type: &str) -> String {
    format!("type:{item_type}")
}

/// The inventory, indexed for matching. Built once per household and query run against it.
#[derive(Debug, Clone, Default)]
pub struct MatchIndex {
    ids: Vec<ItemId>,
    /// The word ids of each item, sorted, with their weight.
    words: Vec<Vec<(u32, f32)>>,
    /// Each item's vector length (words weighted by rarity and field).
    norms: Vec<f32>,
    vocabulary: HashMap<String, u32>,
    /// Rarity weight of each word: ln(1 + n / items with the word).
    idf: Vec<f32>,
    /// Items with each word, in index order.
    postings: Vec<Vec<u32>>,
    serials: HashMap<String, Vec<u32>>,
    /// The names of words, for the reasons given.
    spelled: Vec<String>,
}

/// The weighted words of a text, in order of first use: name words weigh [`NAME_WEIGHT`], the others
/// [`SIDE_WEIGHT`]; a word given twice keeps its highest weight.
fn weighted(name: &str, side: &[&str], item_type: Option<&str>) -> Vec<(String, f32)> {
    let mut out: Vec<(String, f32)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut add = |w: String, weight: f32| match at.get(&w) {
        Some(&i) => out[i].1 = out[i].1.max(weight),
        None => {
            at.insert(w.clone(), out.len());
            out.push((w, weight));
        }
    };
    for w in words(name) {
        add(w, NAME_WEIGHT);
    }
    for text in side {
        for w in words(text) {
            add(w, SIDE_WEIGHT);
        }
    }
    if let Some(t) = item_type.filter(|t| !t.is_empty()) {
        add(type_word(t), SIDE_WEIGHT);
    }
    out
}

impl MatchIndex {
    /// Indexes the items (normally every item of the household that is not gone).
    pub fn build(items: &[Item]) -> Self {
        let mut index = Self::default();
        for (n, item) in items.iter().enumerate() {
            let entry = n as u32;
            index.ids.push(item.id);
            let mut ws: Vec<(u32, f32)> = weighted(item.name.as_str(), &[&item.profile], Some(item.item_type.as_str()))
                .into_iter()
                .map(|(w, weight)| {
                    let next = index.vocabulary.len() as u32;
                    let id = *index.vocabulary.entry(w.clone()).or_insert_with(|| {
                        index.postings.push(Vec::new());
                        index.spelled.push(w);
                        next
                    });
                    index.postings[id as usize].push(entry);
                    (id, weight)
                })
                .collect();
            ws.sort_unstable_by_key(|(id, _)| *id);
            index.words.push(ws);
            for s in serials_in(&item.profile).into_iter().chain(serials_in(item.name.as_str())) {
                let holders = index.serials.entry(s).or_default();
                if holders.last() != Some(&entry) {
                    holders.push(entry);
                }
            }
        }
        let total = items.len() as f32;
        index.idf = index.postings.iter().map(|p| (1.0 + total / p.len() as f32).ln()).collect();
        index.norms = index
            .words
            .iter()
            .map(|ws| ws.iter().map(|(id, w)| (index.idf[*id as usize] * w).powi(2)).sum::<f32>().sqrt())
            .collect();
        index
    }

    /// How many items are indexed.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The rarity weight of a word; a word no item has weighs as if one had it.
    fn idf_of(&self, word: &str) -> (Option<u32>, f32) {
        match self.vocabulary.get(word) {
            Some(id) => (Some(*id), self.idf[*id as usize]),
            None => (None, (1.0 + self.len() as f32).ln()),
        }
    }

    fn has_word(&self, entry: u32, word: u32) -> bool {
        self.words[entry as usize].binary_search_by_key(&word, |(id, _)| *id).is_ok()
    }

    /// The entries whose words hold every word of `text`; `None` when `text` has no word.
    fn holding_all(&self, text: &str) -> Option<Vec<u32>> {
        let mut ids: Vec<u32> = Vec::new();
        for w in words(text) {
            ids.push(*self.vocabulary.get(&w)?);
        }
        if ids.is_empty() {
            return None;
        }
        ids.sort_by_key(|id| self.postings[*id as usize].len());
        let (rarest, rest) = ids.split_first()?;
        Some(
            self.postings[*rarest as usize]
                .iter()
                .copied()
                .filter(|e| rest.iter().all(|w| self.has_word(*e, *w)))
                .collect(),
        )
    }

    /// The best `limit` matches of a candidate, highest score first (ties by item id).
    ///
    /// ```
    /// use trove_domain::matching::{MatchIndex, Probe};
    /// let index = MatchIndex::build(&[]);
    /// assert!(index.best(&Probe { name: "Anker PowerCore", ..Probe::default() }, 5).is_empty());
    /// ```
    pub fn best(&self, probe: &Probe<'_>, limit: usize) -> Vec<Match> {
        if self.is_empty() || limit == 0 {
            return Vec::new();
        }
        let mut found: HashMap<u32, (f64, String)> = HashMap::new();
        let mut offer = |entry: u32, score: f64, why: String| {
            let slot = found.entry(entry).or_insert((0.0, String::new()));
            if score > slot.0 {
                *slot = (score, why);
            }
        };

        // Similarity: a cosine over weighted words, following only the items that share a word.
        let side: Vec<&str> = [Some(probe.profile), probe.brand, probe.model].into_iter().flatten().collect();
        let query = weighted(probe.name, &side, probe.item_type);
        let mut query_norm = 0.0f32;
        let mut known: Vec<(u32, f32)> = Vec::new();
        for (w, weight) in &query {
            let (id, idf) = self.idf_of(w);
            query_norm += (idf * weight).powi(2);
            if let Some(id) = id {
                known.push((id, idf * weight));
            }
        }
        let query_norm = query_norm.sqrt();
        let common = (self.len() / COMMON_SHARE).max(COMMON_FLOOR);
        let mut dot = vec![0.0f32; self.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (id, q) in &known {
            let posting = &self.postings[*id as usize];
            if posting.len() > common {
                continue;
            }
            let idf = self.idf[*id as usize];
            for &entry in posting {
                let e = entry as usize;
                if dot[e] == 0.0 {
                    touched.push(entry);
                }
                let weight = self.words[e].binary_search_by_key(id, |(w, _)| *w).map_or(0.0, |i| self.words[e][i].1);
                dot[e] += q * idf * weight;
            }
        }
        let mut similar: Vec<(u32, f64)> = touched
            .iter()
            .map(|&e| {
                let norm = query_norm * self.norms[e as usize];
                let cos = if norm > 0.0 { f64::from(dot[e as usize] / norm).min(1.0) } else { 0.0 };
                (e, cos)
            })
            .filter(|(_, cos)| cos * SIMILARITY_MAX >= MIN_SCORE)
            .collect();
        similar.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let cos_of = |e: u32| -> f64 {
            let norm = query_norm * self.norms[e as usize];
            if norm > 0.0 { f64::from(dot[e as usize] / norm).min(1.0) } else { 0.0 }
        };
        for &(e, cos) in similar.iter().take(limit) {
            let shared: Vec<&str> = known
                .iter()
                .filter(|(id, _)| self.has_word(e, *id) && !self.spelled[*id as usize].starts_with("type:"))
                .map(|(id, _)| self.spelled[*id as usize].as_str())
                .take(6)
                .collect();
            offer(e, cos * SIMILARITY_MAX, format!("similar name and profile ({})", shared.join(", ")));
        }

        // The same brand and model.
        if let (Some(brand), Some(model)) = (probe.brand, probe.model)
            && let Some(entries) = self.holding_all(&format!("{brand} {model}"))
            && !words(model).is_empty()
        {
            for e in entries {
                let score = BRAND_MODEL_SCORE + 0.09 * cos_of(e);
                offer(e, score, format!("same brand and model ({} {})", brand.trim(), model.trim()));
            }
        }

        // The same serial.
        if let Some(serial) = probe.serial.and_then(normalise_serial) {
            for &e in self.serials.get(&serial).into_iter().flatten() {
                offer(e, SERIAL_SCORE, format!("same serial {serial}"));
            }
        }

        let mut out: Vec<Match> = found
            .into_iter()
            .map(|(e, (score, why))| Match { item_id: self.ids[e as usize], score: round3(score), why })
            .collect();
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.item_id.0.cmp(&b.item_id.0)));
        out.truncate(limit);
        out
    }
}

/// A score to three decimals, as shown.
fn round3(score: f64) -> f64 {
    (score * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::{Condition, ItemName};
    use crate::testing::item;
    use proptest::prelude::*;

    fn thing(id: i64, name: &str, item_type: &str, profile: &str) -> Item {
        let mut i = item(id, item_type, Condition::Good);
        i.name = ItemName::new(name).unwrap();
        i.profile = profile.to_owned();
        i
    }

    fn household() -> Vec<Item> {
        vec![
            thing(1, "Anker PowerCore 10000", "power_bank", "Anker A1263, 10000 mAh, USB-C, serial AK12345678"),
            thing(2, "Raspberry Pi 4 Model B 4GB", "single_board_computer", "BCM2711, 4GB RAM, S/N: 1000ABCD"),
            thing(3, "Raspberry Pi 3 Model B", "single_board_computer", "BCM2837, 1GB RAM"),
            thing(4, "Dell 65W laptop charger", "power_supply", "Dell LA65NS2-01, 19.5 V 3.34 A"),
            thing(5, "Samsung 860 EVO 500GB", "hard_drive", "Samsung MZ-76E500, SATA SSD"),
            thing(6, "Lenovo ThinkPad X220", "laptop", "i5-2520M, 8GB, SN R9-ABC12"),
        ]
    }

    /// Checks the matches of a probe: `(item id, why starts with)` best first.
    fn check(probe: Probe<'_>, want: &[(i64, &str)]) {
        let index = MatchIndex::build(&household());
        let got = index.best(&probe, DEFAULT_LIMIT);
        let got: Vec<(i64, String)> = got.iter().map(|m| (m.item_id.0, m.why.clone())).collect();
        assert_eq!(got.len(), want.len(), "{probe:?}: {got:?}");
        for ((gid, gwhy), (wid, wwhy)) in got.iter().zip(want) {
            assert!(gid == wid && gwhy.starts_with(wwhy), "{probe:?}: {got:?}");
        }
    }

    #[test]
    fn the_rules_in_order() {
        // A serial is certain, however the name differs and however it is written.
        check(Probe { name: "Battery pack", serial: Some("ak-1234-5678"), ..Probe::default() }, &[(1, "same serial")]);
        check(Probe { name: "Board", serial: Some("1000abcd"), ..Probe::default() }, &[(2, "same serial")]);
        check(Probe { name: "Notebook", serial: Some("R9ABC12"), ..Probe::default() }, &[(6, "same serial")]);
        // Brand and model found in the profile.
        check(
            Probe { name: "Charger", brand: Some("Dell"), model: Some("LA65NS2-01"), ..Probe::default() },
            &[(4, "same brand and model")],
        );
        // Similar names: the Pi 4 before the Pi 3.
        check(
            Probe { name: "Raspberry Pi 4", item_type: Some("single_board_computer"), ..Probe::default() },
            &[(2, "similar name and profile (raspberry, pi, 4"), (3, "similar name and profile")],
        );
        // Nothing alike.
        check(Probe { name: "Garden hose", profile: "green, 25 m", ..Probe::default() }, &[]);
    }

    #[test]
    fn serial_beats_similarity_and_scores_one() {
        let index = MatchIndex::build(&household());
        let got = index.best(
            &Probe { name: "Raspberry Pi 3 Model B", serial: Some("1000ABCD"), ..Probe::default() },
            DEFAULT_LIMIT,
        );
        assert_eq!(got[0].item_id, ItemId(2));
        assert_eq!(got[0].score, 1.0);
        assert_eq!(got[1].item_id, ItemId(3));
        assert!(got[1].score < BRAND_MODEL_SCORE);
    }

    #[test]
    fn serials_in_profiles() {
        for (text, want) in [
            ("serial number: ABC1234", vec!["ABC1234"]),
            ("Serial No. 12-34-56", vec!["123456"]),
            ("SN#XY99", vec!["XY99"]),
            ("serial unknown", vec![]),
            ("sensor, 5V", vec![]),
        ] {
            assert_eq!(serials_in(text), want, "{text}");
        }
    }

    fn name_strategy() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            proptest::sample::select(vec!["pi", "anker", "dell", "usb", "cable", "4gb", "drive", "hub", "lamp", "x1"]),
            1..5,
        )
        .prop_map(|w| w.join(" "))
    }

    proptest! {
        /// Matches are few, distinct, scored in (0, 1] and ordered best first; a serial in a profile is always
        /// found with score 1.0.
        #[test]
        fn matches_are_well_formed(names in proptest::collection::vec(name_strategy(), 1..40),
                                   probe in name_strategy(), pick in 0usize..40) {
            let items: Vec<Item> = names
                .iter()
                .enumerate()
                .map(|(i, n)| thing(i as i64 + 1, n, "thing", &format!("serial SER{i:04}")))
                .collect();
            let index = MatchIndex::build(&items);
            let got = index.best(&Probe { name: &probe, ..Probe::default() }, 5);
            prop_assert!(got.len() <= 5);
            prop_assert!(got.windows(2).all(|w| w[0].score >= w[1].score));
            prop_assert!(got.iter().all(|m| m.score > 0.0 && m.score <= 1.0));
            let mut ids: Vec<i64> = got.iter().map(|m| m.item_id.0).collect();
            ids.dedup();
            prop_assert_eq!(ids.len(), got.len());

            let pick = pick % items.len();
            let serial = format!("ser{pick:04}");
            let got = index.best(&Probe { name: &probe, serial: Some(&serial), ..Probe::default() }, 5);
            prop_assert_eq!(got[0].item_id, ItemId(pick as i64 + 1));
            prop_assert_eq!(got[0].score, 1.0);
        }

        /// An item's own name finds it first (or tied first with an item of the same words).
        #[test]
        fn own_name_finds_the_item(names in proptest::collection::vec(name_strategy(), 1..40), pick in 0usize..40) {
            let items: Vec<Item> =
                names.iter().enumerate().map(|(i, n)| thing(i as i64 + 1, n, "thing", "")).collect();
            let index = MatchIndex::build(&items);
            let pick = pick % items.len();
            let got = index.best(&Probe { name: &names[pick], item_type: Some("thing"), ..Probe::default() }, 40);
            let own = got.iter().find(|m| m.item_id == ItemId(pick as i64 + 1));
            prop_assert!(own.is_some());
            prop_assert!((own.unwrap().score - got[0].score).abs() < 1e-9);
        }
    }
}
