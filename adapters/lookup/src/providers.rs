//! The providers: each builds its request URL from its base (a setting, so tests run against local fakes) and
//! reads its answer into candidates.

use crate::{Gate, Polite};
use async_trait::async_trait;
use serde_json::Value;
use trove_application::ports::{ProductCandidate, ProductSource, ProviderFailed};
use trove_domain::code::Code;

/// Open Food Facts' stated limit of product reads a minute, applied to its siblings too.
const OPEN_FACTS_PER_MINUTE: usize = 15;
/// UPCitemdb's trial allows bursts of 6 requests a minute (and 100 a day).
const UPCITEMDB_PER_MINUTE: usize = 6;

/// A text field of `v`, trimmed, if it is a non-empty string.
fn text(v: &Value, field: &str) -> Option<String> {
    v.get(field).and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned)
}

fn base(url: &str) -> String {
    url.trim_end_matches('/').to_owned()
}

/// One of the Open Facts databases (Open Food Facts, Open Products Facts, Open Beauty Facts): the same v2 product
/// API, `GET {base}/api/v2/product/{code}.json`. Their data is under the ODbL and their pictures under CC BY-SA,
/// which every candidate's attribution says.
#[derive(Debug)]
pub struct OpenFacts {
    /// `open_food_facts`, `open_products_facts`, `open_beauty_facts`.
    name: &'static str,
    /// The database's name as people know it, for the attribution.
    title: &'static str,
    base: String,
    /// The language whose product name is preferred (`product_name_{lang}`).
    language: String,
    http: Polite,
    /// Its rate limit and waits (visible to the tests).
    pub(crate) gate: Gate,
}

impl OpenFacts {
    /// Open Food Facts at `base` (`https://world.openfoodfacts.org`).
    pub fn food(base_url: &str, language: &str, http: Polite) -> Self {
        Self::new("open_food_facts", "Open Food Facts", base_url, language, http)
    }

    /// Open Products Facts at `base` (`https://world.openproductsfacts.org`).
    pub fn products(base_url: &str, language: &str, http: Polite) -> Self {
        Self::new("open_products_facts", "Open Products Facts", base_url, language, http)
    }

    /// Open Beauty Facts at `base` (`https://world.openbeautyfacts.org`).
    pub fn beauty(base_url: &str, language: &str, http: Polite) -> Self {
        Self::new("open_beauty_facts", "Open Beauty Facts", base_url, language, http)
    }

    fn new(name: &'static str, title: &'static str, base_url: &str, language: &str, http: Polite) -> Self {
        Self {
            name,
            title,
            base: base(base_url),
            language: language.trim().to_ascii_lowercase(),
            http,
            gate: Gate::new(Some(OPEN_FACTS_PER_MINUTE)),
        }
    }

    /// The candidate in a v2 product answer, if it names a product.
    fn read(&self, answer: &Value, code: &str) -> Option<ProductCandidate> {
        if answer.get("status").and_then(Value::as_i64) == Some(0) {
            return None;
        }
        let product = answer.get("product")?;
        let name = text(product, &format!("product_name_{}", self.language))
            .or_else(|| text(product, "product_name"))
            .or_else(|| text(product, "generic_name"))?;
        // The categories run from the widest to the narrowest; the narrowest is the best guess at a type.
        let item_type = text(product, "categories").and_then(|c| {
            let last = c.rsplit(',').next()?.trim();
            let last = last.split_once(':').map_or(last, |(_, t)| t).trim();
            (!last.is_empty()).then(|| last.to_owned())
        });
        Some(ProductCandidate {
            name,
            brand: text(product, "brands").map(|b| b.split(',').next().unwrap_or(&b).trim().to_owned()),
            item_type,
            image_url: text(product, "image_front_url"),
            attribution: Some(format!(
                "From {} ({}): data under the Open Database License (ODbL), images under CC BY-SA 3.0",
                self.title, self.base
            )),
            source_url: format!("{}/product/{code}", self.base),
        })
    }
}

#[async_trait]
impl ProductSource for OpenFacts {
    fn name(&self) -> String {
        self.name.to_owned()
    }

    fn knows(&self, code: &Code) -> bool {
        code.gtin13().is_some() && !code.is_book()
    }

    async fn look_up(&self, code: &Code) -> Result<Vec<ProductCandidate>, ProviderFailed> {
        let Some(gtin13) = code.gtin13() else { return Ok(Vec::new()) };
        let url = format!("{}/api/v2/product/{gtin13}.json", self.base);
        let answer = self.http.json(self.name, &self.gate, &url).await?;
        Ok(answer.and_then(|a| self.read(&a, &gtin13)).into_iter().collect())
    }
}

/// Open Library, for books (978 and 979): `GET {base}/isbn/{isbn13}.json` (it redirects to the edition on the
/// same host). Its data is in the public domain (CC0).
#[derive(Debug)]
pub struct OpenLibrary {
    base: String,
    http: Polite,
    gate: Gate,
}

impl OpenLibrary {
    /// Open Library at `base` (`https://openlibrary.org`).
    pub fn new(base_url: &str, http: Polite) -> Self {
        Self { base: base(base_url), http, gate: Gate::new(None) }
    }
}

#[async_trait]
impl ProductSource for OpenLibrary {
    fn name(&self) -> String {
        "open_library".to_owned()
    }

    fn knows(&self, code: &Code) -> bool {
        code.is_book()
    }

    async fn look_up(&self, code: &Code) -> Result<Vec<ProductCandidate>, ProviderFailed> {
        let Some(isbn) = code.gtin13().filter(|_| code.is_book()) else { return Ok(Vec::new()) };
        let url = format!("{}/isbn/{isbn}.json", self.base);
        let Some(answer) = self.http.json("open_library", &self.gate, &url).await? else { return Ok(Vec::new()) };
        let Some(title) = text(&answer, "title") else { return Ok(Vec::new()) };
        let name = match text(&answer, "subtitle") {
            Some(sub) => format!("{title}: {sub}"),
            None => title,
        };
        let publisher = answer.get("publishers").and_then(Value::as_array).and_then(|p| p.first());
        Ok(vec![ProductCandidate {
            name,
            brand: publisher.and_then(Value::as_str).map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned),
            item_type: Some("Book".to_owned()),
            image_url: None,
            attribution: Some(format!("From Open Library ({})", self.base)),
            source_url: format!("{}/isbn/{isbn}", self.base),
        }])
    }
}

/// UPCitemdb's keyless trial endpoint (`GET {base}/prod/trial/lookup?upc={code}`): 100 lookups a day per
/// address, so it is asked only with `TROVE_LOOKUP=all`.
#[derive(Debug)]
pub struct UpcItemDb {
    base: String,
    http: Polite,
    gate: Gate,
}

impl UpcItemDb {
    /// UPCitemdb at `base` (`https://api.upcitemdb.com`).
    pub fn new(base_url: &str, http: Polite) -> Self {
        Self { base: base(base_url), http, gate: Gate::new(Some(UPCITEMDB_PER_MINUTE)) }
    }
}

#[async_trait]
impl ProductSource for UpcItemDb {
    fn name(&self) -> String {
        "upcitemdb".to_owned()
    }

    fn knows(&self, code: &Code) -> bool {
        code.gtin13().is_some()
    }

    async fn look_up(&self, code: &Code) -> Result<Vec<ProductCandidate>, ProviderFailed> {
        let Some(gtin13) = code.gtin13() else { return Ok(Vec::new()) };
        // A UPC-A is asked as its 12 digits.
        let asked = gtin13.strip_prefix('0').filter(|_| code.shown().len() == 12).unwrap_or(&gtin13).to_owned();
        let url = format!("{}/prod/trial/lookup?upc={asked}", self.base);
        let Some(answer) = self.http.json("upcitemdb", &self.gate, &url).await? else { return Ok(Vec::new()) };
        if text(&answer, "code").is_some_and(|c| c != "OK") {
            return Ok(Vec::new());
        }
        let items = answer.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        Ok(items
            .iter()
            .filter_map(|item| {
                Some(ProductCandidate {
                    name: text(item, "title")?,
                    brand: text(item, "brand"),
                    item_type: text(item, "category")
                        .and_then(|c| c.rsplit('>').next().map(str::trim).map(str::to_owned))
                        .filter(|c| !c.is_empty()),
                    image_url: item
                        .get("images")
                        .and_then(Value::as_array)
                        .and_then(|i| i.first())
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    attribution: Some("From UPCitemdb (upcitemdb.com)".to_owned()),
                    source_url: format!("https://www.upcitemdb.com/upc/{asked}"),
                })
            })
            .collect())
    }
}
