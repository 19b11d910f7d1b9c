//! The full-text search of items: what is indexed, how a search's words become a query of each backend's index,
//! and the one typo a word may carry.
//!
//! The index covers an item's name, type, profile, place (the names of its place's path) and notes (the gone
//! note, the faults' texts, the tests' names and notes). The name, type and profile are the item's own columns;
//! the place and the notes are kept beside them by the store (`search_place`, `search_notes`), written with every
//! write of the item and, for the place, with every rename or move of a place above it. Each backend keeps its
//! index in step with those columns by itself (`m0008_search`, `m0010_search_words`): SQLite an FTS5 table fed
//! by triggers, PostgreSQL a `tsvector` column under a GIN index, filled by a row trigger or, for an import, made
//! here ([`pg_tsvector`]) and copied in with the row.
//!
//! Words are letters and digits: every other character separates words, on both sides (the index's text and the
//! search's words), so both backends cut "USB-C 3.3V red_white" into `usb c 3 3v red white`. A search word
//! matches the start of an indexed word ("rasp" finds Raspberry); a word of several parts ("usb-c") matches them
//! in a row. When a search finds nothing, a word (of 4 to 24 characters; three of a search at most) that starts
//! no word of the household's items may carry one typo: it is replaced by every word one edit away (a letter
//! left out, added, changed, or two neighbours swapped), so "raspbery" finds Raspberry and "kestrl" Kestrel.
//!
//! A search lists its items best first (SQLite's `bm25`, PostgreSQL's `ts_rank`, each weighing the name most and
//! the notes least), level ones by id. A cursor (`after`, the last item of a page) continues after that item's
//! place in this order: the items ranked below it, or level with it and a greater id; when that item no longer
//! matches the search, the walk ends with an empty page. An offset counts positions in the same order.

use anyhow::Context as _;
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement, TransactionTrait};
use std::collections::BTreeSet;
use trove_domain::HouseholdId;
use trove_domain::item::{Fault, ItemDetails, Tags, TestDone};

/// The shortest word that may carry a typo: shorter ones have too many neighbours one edit away to mean one.
const TYPO_FROM_CHARS: usize = 4;
/// The longest word that may carry a typo, and the most words of a search that may: each word corrected is
/// about 73 words per character in the query, so a search stays a few thousand terms at most.
const TYPO_TO_CHARS: usize = 24;
const TYPO_WORDS_MAX: usize = 3;

/// The weights of the indexed columns in SQLite's `bm25`, in the FTS5 table's column order: name, item type,
/// profile, place, notes. PostgreSQL weighs them A, B, C, C, D (`ts_rank`'s 1.0, 0.4, 0.2, 0.2, 0.1).
const BM25: &str = "bm25(items_search, 10.0, 4.0, 2.0, 2.0, 1.0)";

/// The words of a text as the index cuts them: runs of letters and digits, lower-cased ("USB-C 3.3V" is
/// `usb`, `c`, `3`, `3v`).
pub(crate) fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
}

/// The weights of the indexed texts on PostgreSQL, in the order the index joins them: name, item type, profile,
/// place, notes (as `m0010_search_words` writes the trigger's expression).
const PG_WEIGHTS: [char; 5] = ['A', 'B', 'C', 'C', 'D'];
/// Items with more words than this, or a word more often than [`PG_POSITIONS_MAX`], are left to PostgreSQL's
/// own expression, whose limits (positions up to 16,383, 256 positions a word) then apply as they always do.
const PG_WORDS_MAX: usize = 1000;
const PG_POSITIONS_MAX: usize = 255;

/// The `tsvector` of an item's indexed texts (name, item type, profile, place, notes) as PostgreSQL's text
/// literal, equal to what the row trigger's expression makes of them (`to_tsvector('simple', ...)` of each text
/// with every run of non-alphanumeric characters a space, weighted A, B, C, C, D, joined): each word with its
/// positions, counted across the texts, and weights, such as `'usb':1A 'c':2A,7C`. Each distinct word is also
/// handed to `word`, for the vocabulary.
///
/// `None` when the texts hold what only PostgreSQL's parser can say how it cuts: any character beyond ASCII
/// (its letters and their lower case follow the database's locale), a word that starts with a digit and holds an
/// `e` (read as a number: `12E5e` is `12e5` and `e`), or more words than [`PG_WORDS_MAX`]; the caller then
/// leaves the column to the trigger.
pub(crate) fn pg_tsvector(texts: [&str; 5], mut word: impl FnMut(&str)) -> Option<String> {
    if texts.iter().any(|t| !t.is_ascii()) {
        return None;
    }
    // Each word with its positions as the literal writes them ("1A,7C"), in the order first seen.
    let mut seen: Vec<(String, String, usize)> = Vec::new();
    let mut position = 0usize;
    for (text, weight) in texts.iter().zip(PG_WEIGHTS) {
        for token in text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()) {
            if token.as_bytes()[0].is_ascii_digit() && token.bytes().any(|b| b == b'e' || b == b'E') {
                return None;
            }
            position += 1;
            if position > PG_WORDS_MAX {
                return None;
            }
            let at = match seen.iter().position(|(w, _, _)| w.eq_ignore_ascii_case(token)) {
                Some(at) => {
                    seen[at].1.push(',');
                    at
                }
                None => {
                    seen.push((token.to_ascii_lowercase(), String::new(), 0));
                    seen.len() - 1
                }
            };
            let entry = &mut seen[at];
            entry.2 += 1;
            if entry.2 > PG_POSITIONS_MAX {
                return None;
            }
            entry.1.push_str(&position.to_string());
            entry.1.push(weight);
        }
    }
    let mut out = String::with_capacity(seen.iter().map(|(w, p, _)| w.len() + p.len() + 4).sum());
    for (w, positions, _) in &seen {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push('\'');
        out.push_str(w);
        out.push_str("':");
        out.push_str(positions);
        word(w);
    }
    Some(out)
}

/// The notes of an item as indexed: the gone note, the faults' texts, the tests' names and notes, the item's own
/// notes, tags and serial, one a line.
pub(crate) fn notes_text(
    gone_note: Option<&str>,
    faults: &[Fault],
    tests: &[TestDone],
    details: &ItemDetails,
    tags: &Tags,
) -> String {
    let mut parts: Vec<&str> = Vec::new();
    parts.extend(gone_note);
    parts.push(&details.notes);
    parts.extend(details.serial.as_deref());
    parts.extend(tags.as_slice().iter().map(String::as_str));
    parts.extend(faults.iter().map(|f| f.text.as_str()));
    for t in tests {
        parts.push(&t.name);
        parts.extend(t.note.as_deref());
    }
    parts.retain(|p| !p.trim().is_empty());
    parts.join("\n")
}

/// One word of a search, as its index query is written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Term {
    /// The word's parts in a row, the last one a prefix.
    Prefix(Vec<String>),
    /// Any of these whole words: the words one edit away from a word that starts nothing.
    AnyOf(Vec<String>),
}

/// A search: every word must match (in any indexed column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Search {
    terms: Vec<Term>,
}

impl Search {
    /// The search of `q` (already checked by the use case: at most 32 words, no control character); `None`
    /// when it has no word at all. Repeated words are one.
    pub(crate) fn parse(q: &str) -> Option<Search> {
        let mut seen = BTreeSet::new();
        let terms: Vec<Term> = q
            .split_whitespace()
            .map(tokens)
            .filter(|t| !t.is_empty() && seen.insert(t.clone()))
            .map(Term::Prefix)
            .collect();
        (!terms.is_empty()).then_some(Search { terms })
    }

    /// The single-part words long enough to carry a typo, by their position.
    fn correctable(&self) -> impl Iterator<Item = (usize, &str)> {
        self.terms.iter().enumerate().filter_map(|(n, t)| match t {
            Term::Prefix(parts)
                if parts.len() == 1 && (TYPO_FROM_CHARS..=TYPO_TO_CHARS).contains(&parts[0].chars().count()) =>
            {
                Some((n, parts[0].as_str()))
            }
            _ => None,
        })
    }

    /// The search with each word that starts no word of the household's items replaced by its neighbours one
    /// edit away; `None` when no word was replaced (the search stands as it is).
    pub(crate) async fn corrected(
        &self,
        db: &DatabaseConnection,
        household: HouseholdId,
    ) -> anyhow::Result<Option<Search>> {
        let mut out = self.clone();
        let mut changed = 0;
        for (n, word) in self.correctable() {
            let alone = Search { terms: vec![self.terms[n].clone()] };
            if changed < TYPO_WORDS_MAX && !alone.finds_any(db, household).await? {
                let near = indexed(db, household, &one_edit_away(word)).await?;
                if !near.is_empty() {
                    out.terms[n] = Term::AnyOf(near);
                    changed += 1;
                }
            }
        }
        Ok((changed > 0).then_some(out))
    }

    /// Whether any item of the household, gone or not, matches.
    async fn finds_any(&self, db: &DatabaseConnection, household: HouseholdId) -> anyhow::Result<bool> {
        let backend = db.get_database_backend();
        if backend == DbBackend::Postgres {
            // PostgreSQL cannot tell how rare a word or prefix is that its statistics do not hold, guesses a few
            // hundred items, and for `LIMIT 1` then walks the household's rows until one matches: all 100,000
            // when none does (100 ms). The index is the only way it may take here (under 3 ms), for this one
            // statement's transaction.
            let txn = db.begin().await.context("begin a search word's look-up")?;
            txn.execute_unprepared(
                "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true)",
            )
            .await
            .context("ask the search index")?;
            let stmt = Statement::from_sql_and_values(
                backend,
                format!(
                    "SELECT 1 AS found FROM items WHERE household_id = {h} \
                     AND search @@ to_tsquery('simple', $1) LIMIT 1",
                    h = household.0
                ),
                [self.query(backend).into()],
            );
            let found = txn.query_one_raw(stmt).await.context("look a search word up")?.is_some();
            txn.commit().await.context("end a search word's look-up")?;
            return Ok(found);
        }
        let stmt = Statement::from_sql_and_values(
            backend,
            format!(
                "SELECT 1 AS found FROM items_search JOIN items ON items.id = items_search.rowid \
                 WHERE items_search MATCH ? AND items.household_id = {h} LIMIT 1",
                h = household.0
            ),
            [self.query(backend).into()],
        );
        Ok(db.query_one_raw(stmt).await.context("look a search word up")?.is_some())
    }

    /// The search as the backend's full-text query text: an FTS5 expression or a `to_tsquery` text. Only
    /// letters and digits come from the search, each quoted, so no word is read as an operator.
    pub(crate) fn query(&self, backend: DbBackend) -> String {
        let postgres = backend == DbBackend::Postgres;
        let terms = self.terms.iter().map(|term| match (term, postgres) {
            (Term::Prefix(parts), false) => format!("\"{}\"*", parts.join(" ")),
            (Term::Prefix(parts), true) => {
                let last = parts.len() - 1;
                let phrase = parts
                    .iter()
                    .enumerate()
                    .map(|(n, p)| if n == last { format!("'{p}':*") } else { format!("'{p}'") })
                    .collect::<Vec<_>>()
                    .join(" <-> ");
                format!("({phrase})")
            }
            (Term::AnyOf(words), false) => {
                format!("({})", words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" OR "))
            }
            (Term::AnyOf(words), true) => {
                format!("({})", words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" | "))
            }
        });
        terms.collect::<Vec<_>>().join(if postgres { " & " } else { " AND " })
    }
}

/// The condition that an item matches the full-text query bound as the one value, and the relevance of an
/// item as an expression that orders best first when ascending; on SQLite both need the join
/// [`sqlite_join`].
pub(crate) fn match_condition(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Postgres => "items.search @@ to_tsquery('simple', ?)",
        _ => "items_search MATCH ?",
    }
}

/// The relevance of the row as an expression (lower is better), the full-text query bound as its one value on
/// PostgreSQL and none on SQLite (FTS5 ranks by the query of the `MATCH`).
pub(crate) fn relevance(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Postgres => "(-ts_rank(items.search, to_tsquery('simple', ?)))",
        _ => BM25,
    }
}

/// The relevance of the item whose id is bound second, under the full-text query bound first; NULL when it does
/// not match.
pub(crate) fn relevance_of(backend: DbBackend) -> String {
    match backend {
        DbBackend::Postgres => "(SELECT -ts_rank(i.search, to_tsquery('simple', ?)) FROM items i \
                                WHERE i.id = ? AND i.search @@ to_tsquery('simple', ?))"
            .to_owned(),
        _ => format!("(SELECT {BM25} FROM items_search WHERE items_search MATCH ? AND items_search.rowid = ?)"),
    }
}

/// An expression written with `?` for each value, as `Expr::cust_with_values` takes it: numbered `$1`, `$2`,
/// ... for PostgreSQL, whose builder reads only those.
pub(crate) fn values_expr<I>(backend: DbBackend, sql: &str, values: I) -> sea_orm::sea_query::Expr
where
    I: IntoIterator<Item = sea_orm::Value>,
{
    if backend != DbBackend::Postgres {
        return sea_orm::sea_query::Expr::cust_with_values(sql.to_owned(), values);
    }
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    sea_orm::sea_query::Expr::cust_with_values(out, values)
}

/// The FTS5 table joined to `items` on SQLite; nothing on PostgreSQL, whose index is a column of `items`.
pub(crate) const SQLITE_JOIN: &str = "items_search.rowid = items.id";

/// Those of `words` that are words of the index: on SQLite, of its vocabulary (`items_search_vocab`, every
/// household's); on PostgreSQL, of the household's (`search_words`, every word its items' index has held, kept
/// by `m0010_search_words`'s trigger and by the import). So the query of a corrected word holds the one or
/// two words it may mean, not the hundreds it could. The words are letters and digits only, written into the
/// text quoted.
async fn indexed<C: ConnectionTrait>(db: &C, household: HouseholdId, words: &[String]) -> anyhow::Result<Vec<String>> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DbBackend::Postgres => {
            // One lookup of the vocabulary's key; the words are letters and digits, quoted.
            let list = words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(",");
            format!(
                "SELECT word FROM search_words WHERE household_id = {h} AND word IN ({list}) ORDER BY word",
                h = household.0
            )
        }
        _ => {
            let list = words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(",");
            format!("SELECT term AS word FROM items_search_vocab WHERE term IN ({list})")
        }
    };
    let rows = db.query_all_raw(Statement::from_string(backend, sql)).await.context("look up words near a typo")?;
    rows.iter().map(|r| r.try_get::<String>("", "word").context("read a word near a typo")).collect()
}

/// Every word one edit away from `word`: a character left out, two neighbours swapped, a character changed or
/// added (letters a to z, digits, and the word's own characters). Without `word` itself, sorted.
fn one_edit_away(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut alphabet: BTreeSet<char> = ('a'..='z').chain('0'..='9').collect();
    alphabet.extend(chars.iter().copied());
    let mut out = BTreeSet::new();
    let word_of = |cs: &[char]| cs.iter().collect::<String>();
    for i in 0..chars.len() {
        let mut left_out = chars.clone();
        left_out.remove(i);
        out.insert(word_of(&left_out));
        if i + 1 < chars.len() {
            let mut swapped = chars.clone();
            swapped.swap(i, i + 1);
            out.insert(word_of(&swapped));
        }
        for &c in &alphabet {
            let mut changed = chars.clone();
            changed[i] = c;
            out.insert(word_of(&changed));
        }
    }
    for i in 0..=chars.len() {
        for &c in &alphabet {
            let mut added = chars.clone();
            added.insert(i, c);
            out.insert(word_of(&added));
        }
    }
    out.remove(word);
    out.remove("");
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_letters_and_digits_lower_cased() {
        assert_eq!(tokens("USB-C 3.3V red_white Über"), ["usb", "c", "3", "3v", "red", "white", "über"]);
        assert_eq!(tokens("%  _ -"), Vec::<String>::new());
    }

    #[test]
    fn the_postgres_index_of_plain_texts_is_made_here() {
        let mut words = Vec::new();
        let v = pg_tsvector(["USB-C hub", "usb_hub", "3.3V hub, usb", "Room 1 / Shelf 2", ""], |w| {
            words.push(w.to_owned())
        });
        assert_eq!(
            v.as_deref(),
            Some("'usb':1A,4B,9C 'c':2A 'hub':3A,5B,8C '3':6C '3v':7C 'room':10C '1':11C 'shelf':12C '2':13C")
        );
        assert_eq!(words, ["usb", "c", "hub", "3", "3v", "room", "1", "shelf", "2"]);
        assert_eq!(pg_tsvector(["", "", "", "", ""], |_| {}).as_deref(), Some(""));
        assert_eq!(pg_tsvector(["a", "", "", "", "burn-in"], |_| {}).as_deref(), Some("'a':1A 'burn':2D 'in':3D"));
    }

    #[test]
    fn what_only_postgres_can_cut_is_left_to_it() {
        assert_eq!(pg_tsvector(["Über-Kabel", "", "", "", ""], |_| {}), None);
        assert_eq!(pg_tsvector(["cap", "", "10µF", "", ""], |_| {}), None);
        assert_eq!(pg_tsvector(["resistor 1e5", "", "", "", ""], |_| {}), None);
        assert_eq!(pg_tsvector(["", "", "", "", "12E5e"], |_| {}), None);
        // A word that starts with a letter is a word, whatever follows.
        assert!(pg_tsvector(["e12 E5", "", "", "", ""], |_| {}).is_some());
        let long = vec!["word"; PG_WORDS_MAX + 1].join(" ");
        assert_eq!(pg_tsvector([&long, "", "", "", ""], |_| {}), None);
        let repeated = vec!["a"; PG_POSITIONS_MAX + 1].join(" ");
        assert_eq!(pg_tsvector([&repeated, "", "", "", ""], |_| {}), None);
    }

    #[test]
    fn a_search_is_one_query_per_backend_with_words_quoted() {
        let s = Search::parse("Rasp usb-c rasp 100% %").unwrap();
        assert_eq!(s.query(DbBackend::Sqlite), "\"rasp\"* AND \"usb c\"* AND \"100\"*");
        assert_eq!(s.query(DbBackend::Postgres), "('rasp':*) & ('usb' <-> 'c':*) & ('100':*)");
        assert_eq!(Search::parse("  % - "), None);
    }

    #[test]
    fn one_edit_away_covers_each_kind_of_typo() {
        let near = one_edit_away("kestrl");
        for w in ["kestrel", "kestr", "kestrk", "ekstrl", "kkestrl"] {
            assert!(near.contains(&w.to_owned()), "{w}");
        }
        assert!(!near.contains(&"kestrl".to_owned()));
        assert!(one_edit_away("raspbery").contains(&"raspberry".to_owned()));
        // 8 left out, 7 swapped, 8 x 36 changed, 9 x 36 added, less the repeats: a few hundred words.
        assert!((500..700).contains(&one_edit_away("raspbery").len()));
    }
}
