//! The dependency rule: nothing under `domain/` or `application/` depends on, or names, the edge libraries.

use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

const FORBIDDEN: [&str; 5] = ["poem", "poem-openapi", "sea-orm", "sqlx", "reqwest"];

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

#[test]
fn domain_and_application_never_depend_on_edge_libraries() {
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
    let metadata: Value = serde_json::from_slice(&out.stdout).unwrap();
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
                    for name in ["poem", "sea_orm", "sqlx", "reqwest"] {
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
