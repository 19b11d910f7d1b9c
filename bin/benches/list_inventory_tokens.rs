//! Tokens of the `list_inventory` output (under the built-in catalogue) against the same items as plain
//! `serde_json` objects, counted with the o200k tokenizer (its vocabulary is compiled into `tiktoken-rs`: no
//! network). The output is resent at every step of the proposal loop, so its size is paid for again and again.
//! Target: at most 40% of the plain JSON. What a whole proposal costs, lever by lever, is `proposal_cost`'s.
//!
//! Run: `cargo bench -p trove --bench list_inventory_tokens`

mod generated_inventory;

use generated_inventory::{new_items, plain_json, stored};
use trove_application::tools::inventory_output;
use trove_domain::TemplateId;
use trove_domain::item::ItemLine;
use trove_domain::template::Template;

/// The inventory sizes measured.
const SIZES: [usize; 3] = [100, 1_000, 10_000];
/// The share of the plain JSON's tokens the compact output may use.
const TARGET: f64 = 0.40;

fn main() {
    let bpe = tiktoken_rs::o200k_base().expect("the o200k vocabulary is embedded in tiktoken-rs");
    let templates: Vec<Template> =
        trove_domain::catalogue::builtin().into_iter().zip(1..).map(|(t, id)| t.with_id(TemplateId(id))).collect();
    println!("list_inventory tokens (o200k) vs plain JSON; target at most {:.0}%", TARGET * 100.0);
    println!(
        "| items | compact tokens | plain JSON tokens | ratio | compact bytes | plain JSON bytes | tokens per item |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for n in SIZES {
        let items: Vec<_> = new_items(n).into_iter().zip(1..).map(|(item, id)| stored(item, id)).collect();
        let lines: Vec<ItemLine> = items.iter().map(ItemLine::from).collect();
        let compact = inventory_output(&lines, &templates);
        let plain = plain_json(&items);
        let compact_tokens = bpe.encode_ordinary(&compact).len();
        let plain_tokens = bpe.encode_ordinary(&plain).len();
        let ratio = compact_tokens as f64 / plain_tokens as f64;
        println!(
            "| {n} | {compact_tokens} | {plain_tokens} | {:.1}% {} | {} | {} | {:.1} |",
            ratio * 100.0,
            if ratio <= TARGET { "(met)" } else { "(missed)" },
            compact.len(),
            plain.len(),
            compact_tokens as f64 / n as f64,
        );
    }
    let sample: Vec<_> = new_items(6).into_iter().zip(1..).map(|(item, id)| stored(item, id)).collect();
    let sample_lines: Vec<ItemLine> = sample.iter().map(ItemLine::from).collect();
    println!("\nsample of the compact output:\n{}", inventory_output(&sample_lines, &templates));
    println!("\nsample of the plain JSON:\n{}", plain_json(&sample[..2]));
}
