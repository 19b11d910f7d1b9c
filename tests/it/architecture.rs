//! The dependency rule: nothing under `domain/` or `application/` depends on, or names, the edge libraries, nor
//! sees an adapter crate (not even as a dev-dependency). And no two modules of a crate import each other, directly
//! or around a circle. And the two documents at the root stay short enough to be read whole.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

const FORBIDDEN: [&str; 7] = ["poem", "poem-openapi", "sea-orm", "sqlx", "reqwest", "webauthn-rs", "openssl"];

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// Every package `root` depends on through normal (non-dev, non-build) dependencies, by name.
fn normal_closure(metadata: &Value, root: &str) -> BTreeSet<String> {
    let packages: HashMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes: HashMap<&str, &Value> =
        metadata["resolve"]["nodes"].as_array().unwrap().iter().map(|n| (n["id"].as_str().unwrap(), n)).collect();
    let root_id = packages.iter().find(|(_, name)| **name == root).map(|(id, _)| *id).unwrap();
    let mut seen = BTreeSet::new();
    let mut stack = vec![root_id];
    while let Some(id) = stack.pop() {
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let normal = dep["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].is_null());
            let dep_id = dep["pkg"].as_str().unwrap();
            if normal && seen.insert(packages[dep_id].to_owned()) {
                stack.push(dep_id);
            }
        }
    }
    seen
}

/// The workspace's resolved dependency graph for this host.
fn metadata() -> Value {
    let rustc = std::process::Command::new("rustc").arg("-vV").output().expect("rustc runs");
    let host = String::from_utf8_lossy(&rustc.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .expect("rustc names its host");
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline", "--filter-platform", &host])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn domain_and_application_never_depend_on_edge_libraries() {
    let metadata = metadata();
    for crate_name in ["trove-domain", "trove-application"] {
        let deps = normal_closure(&metadata, crate_name);
        assert!(deps.contains("chrono"), "the closure of {crate_name} was computed: {deps:?}");
        for forbidden in FORBIDDEN {
            assert!(!deps.contains(forbidden), "{crate_name} depends on {forbidden} (through {deps:?})");
        }
    }
}

/// The code of a source file that ships: line comments left out, and everything from the first `#[cfg(test)]`
/// line on (the test module) too.
fn shipped_code(text: &str) -> String {
    text.lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `code` names `serde_json::Value`: by its path, or as `Value` in a `use serde_json...;` import
/// (`use serde_json::{Value, json};` over one or more lines).
fn names_json_value(code: &str) -> bool {
    code.contains("serde_json::Value")
        || code.match_indices("use serde_json").any(|(at, _)| {
            let import = &code[at..];
            let import = &import[..import.find(';').unwrap_or(import.len())];
            import.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|word| word == "Value")
        })
}

#[test]
fn domain_and_application_sources_never_name_edge_libraries() {
    for dir in ["domain/src", "application/src"] {
        let root = workspace_root().join(dir);
        let mut stack = vec![root.clone()];
        let mut files = 0;
        while let Some(path) = stack.pop() {
            for entry in std::fs::read_dir(&path).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files += 1;
                    let text = std::fs::read_to_string(&path).unwrap();
                    for name in ["poem", "sea_orm", "sqlx", "reqwest", "webauthn_rs"] {
                        let hit = text.lines().any(|l| {
                            let code = l.split("//").next().unwrap_or("");
                            code.contains(&format!("{name}::")) || code.contains(&format!("use {name}"))
                        });
                        assert!(!hit, "{} names {name}", path.display());
                    }
                    // Only shipped code counts: tests may build JSON values to check what goes over the wire.
                    let test_file = path.file_name().is_some_and(|f| f == "tests.rs")
                        || path.strip_prefix(&root).unwrap().components().any(|c| c.as_os_str() == "tests");
                    if !test_file {
                        assert!(!names_json_value(&shipped_code(&text)), "{} names serde_json::Value", path.display());
                    }
                }
            }
        }
        assert!(files > 3, "{dir} was read");
    }
}

/// The workspace crates `package` depends on directly, of any kind (normal, dev or build), by name.
fn direct_workspace_deps(metadata: &Value, package: &str) -> BTreeSet<String> {
    let members: HashMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["source"].is_null())
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let id = members.iter().find(|(_, name)| **name == package).map(|(id, _)| *id).unwrap();
    let node = metadata["resolve"]["nodes"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap();
    node["deps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| members.get(d["pkg"].as_str().unwrap()).map(|n| (*n).to_owned()))
        .collect()
}

#[test]
fn domain_and_application_never_see_an_adapter() {
    let metadata = metadata();
    let allowed = |name: &str| matches!(name, "trove-domain" | "trove-application");
    for crate_name in ["trove-domain", "trove-application"] {
        let deps = direct_workspace_deps(&metadata, crate_name);
        let adapters: Vec<&String> = deps.iter().filter(|d| !allowed(d)).collect();
        assert!(
            adapters.is_empty(),
            "{crate_name} depends on {adapters:?}: benchmarks and tests that need an adapter belong in bin/"
        );
    }
    assert!(direct_workspace_deps(&metadata, "trove-application").contains("trove-domain"), "the deps were read");
}

/// Circles the modules of `adapters/http` still have, as (crate folder, module, module): they are being taken
/// apart (issue 9). Each must still be there, so this list only shrinks; remove an entry when its circle goes.
const KNOWN_CIRCLES: [(&str, &str, &str); 0] = [];

/// The `src/` folder of every crate of the workspace.
fn crate_sources() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut dirs: Vec<PathBuf> = ["domain/src", "application/src", "bin/src"].iter().map(|d| root.join(d)).collect();
    for entry in std::fs::read_dir(root.join("adapters")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            dirs.push(src);
        }
    }
    dirs
}

/// The module a source file holds, as its path from the crate root (`item/mod.rs` and `item.rs` are `item`,
/// `lib.rs` and `main.rs` the root, `[]`).
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative.with_extension("").iter().map(|c| c.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|l| matches!(l.as_str(), "lib" | "main" | "mod")) {
        parts.pop();
    }
    parts
}

/// Reads one path of a `use` tree (or of an expression) starting at `at`, pushing every full path it names onto
/// `out` (`a::{b::C, d}` gives `a::b::C` and `a::d`); answers where it stopped.
fn use_tree(code: &[u8], mut at: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut segments = prefix.to_vec();
    loop {
        while code.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        if code.get(at) == Some(&b'{') {
            at += 1;
            loop {
                while code.get(at).is_some_and(|c| c.is_ascii_whitespace() || *c == b',') {
                    at += 1;
                }
                if code.get(at).is_none_or(|c| *c == b'}') {
                    return at + 1;
                }
                let next = use_tree(code, at, &segments, out);
                // Something that is not a path (`self as x`, a stray character): step over it.
                at = next.max(at + 1);
            }
        }
        let start = at;
        while code.get(at).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'*') {
            at += 1;
        }
        if at == start {
            out.push(segments);
            return at;
        }
        segments.push(String::from_utf8_lossy(&code[start..at]).into_owned());
        if code[at..].starts_with(b"::") {
            at += 2;
        } else {
            out.push(segments);
            return at;
        }
    }
}

/// The paths the shipped code of module `module` names through `crate::` or `super::`, made absolute.
fn crate_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut paths = Vec::new();
    for anchor in ["crate::", "super::"] {
        for (at, _) in code.match_indices(anchor) {
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || matches!(bytes[at - 1], b'_' | b'$' | b':')) {
                continue;
            }
            let mut named = Vec::new();
            use_tree(bytes, at + anchor.len(), &[], &mut named);
            for mut path in named {
                let mut base: Vec<String> =
                    if anchor == "crate::" { Vec::new() } else { module[..module.len().saturating_sub(1)].to_vec() };
                while path.first().is_some_and(|s| s == "super") {
                    base.pop();
                    path.remove(0);
                }
                base.extend(path);
                paths.push(base);
            }
        }
    }
    paths
}

/// The imports between modules of one crate, each lifted to the two children of the modules' nearest common
/// ancestor: `item::rules` naming `item::values` is an edge `rules -> values` under `item`, `pack` naming
/// `item::Item` an edge `pack -> item` under the root. A module naming its own ancestor (a facade's re-export)
/// or descendant is no edge. Keys are the parent; values the edges among its children.
fn module_edges(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<(String, String)>> {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(src).unwrap().to_path_buf();
            let test_file =
                relative.iter().any(|c| c == "tests") || relative.file_name().is_some_and(|f| f == "tests.rs");
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !test_file {
                files.push(relative);
            }
        }
    }
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
    for file in &files {
        let from = module_of(file);
        let code = shipped_code(&std::fs::read_to_string(src.join(file)).unwrap());
        for path in crate_paths(&code, &from) {
            let to =
                (0..=path.len()).rev().map(|k| path[..k].to_vec()).find(|p| modules.contains(p)).unwrap_or_default();
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue;
            }
            edges.entry(from[..common].to_vec()).or_default().insert((from[common].clone(), to[common].clone()));
        }
    }
    edges
}

/// The pairs of modules `(a, b)` (`a < b`) on a circle: `a` imports `b`, and `b` reaches `a` back.
fn circles(edges: &BTreeSet<(String, String)>) -> BTreeSet<(String, String)> {
    let reaches = |from: &str, to: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(m) = stack.pop() {
            if m == to {
                return true;
            }
            for (_, next) in edges.iter().filter(|(a, _)| *a == m) {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        false
    };
    edges
        .iter()
        .filter(|(a, b)| reaches(b, a))
        .map(|(a, b)| if a < b { (a.clone(), b.clone()) } else { (b.clone(), a.clone()) })
        .collect()
}

#[test]
fn no_module_imports_another_that_imports_it_back() {
    let mut found = BTreeSet::new();
    let mut crates = 0;
    for src in crate_sources() {
        let folder = src.strip_prefix(workspace_root()).unwrap().to_string_lossy().replace('\\', "/");
        let edges = module_edges(&src);
        crates += usize::from(!edges.is_empty());
        for (parent, among) in &edges {
            for (a, b) in circles(among) {
                let at = |m: &str| parent.iter().map(String::as_str).chain([m]).collect::<Vec<_>>().join("::");
                found.insert((folder.clone(), at(&a), at(&b)));
            }
        }
    }
    assert!(crates >= 5, "the crates' imports were read");
    let known: BTreeSet<(String, String, String)> =
        KNOWN_CIRCLES.iter().map(|(c, a, b)| ((*c).to_owned(), (*a).to_owned(), (*b).to_owned())).collect();
    let new: Vec<_> = found.difference(&known).collect();
    assert!(new.is_empty(), "modules importing each other (crate folder, module, module): {new:?}");
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(gone.is_empty(), "these circles are gone: remove them from KNOWN_CIRCLES: {gone:?}");
}

/// The circle check itself, on a made-up crate: a sibling circle is found, a facade's re-export is not one.
#[test]
fn the_circle_check_finds_a_circle() {
    let dir = std::env::temp_dir().join(format!("trove-circles-{}", std::process::id()));
    let write = |file: &str, text: &str| {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod a;\nmod b;\nmod item;\npub use item::*;\n");
    write("a.rs", "use crate::{item::Thing, b::{self, B}};\n");
    write("b.rs", "use crate::a::A;\n#[cfg(test)]\nmod tests { use crate::item::Thing; }\n");
    write("item/mod.rs", "mod rules;\nmod values;\npub use rules::*;\npub use values::*;\n");
    write("item/rules.rs", "use super::values::Word;\nuse crate::Thing;\n");
    write("item/values.rs", "pub struct Word;\n");
    let edges = module_edges(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(edges[&Vec::new()], BTreeSet::from([pair("a", "b"), pair("a", "item"), pair("b", "a")]));
    assert_eq!(edges[&vec!["item".to_owned()]], BTreeSet::from([pair("rules", "values")]));
    assert_eq!(circles(&edges[&Vec::new()]), BTreeSet::from([pair("a", "b")]));
    assert!(circles(&edges[&vec!["item".to_owned()]]).is_empty());
}

/// The most each document at the root may hold, in bytes: `README.md` is the first screen a newcomer reads (what
/// Trove is, its two commands, links to the guide) and `ARCHITECTURE.md` holds only what rarely changes (the
/// bird's-eye view, the code map, the invariants). What grows goes to `docs/guide/`, `docs/decisions/` or
/// `BENCHMARKS.md` instead.
const ROOT_DOCUMENT_LIMITS: [(&str, u64); 2] = [("README.md", 10_240), ("ARCHITECTURE.md", 14_336)];

#[test]
fn root_documents_stay_short() {
    for (name, limit) in ROOT_DOCUMENT_LIMITS {
        let size =
            std::fs::metadata(workspace_root().join(name)).unwrap_or_else(|e| panic!("reading {name}: {e}")).len();
        assert!(
            size <= limit,
            "{name} is {size} bytes, over its {limit}: move the detail to a page under docs/guide/ or docs/decisions/"
        );
    }
}
