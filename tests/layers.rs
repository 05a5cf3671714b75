//! The layers of `src/` call only downward (DESIGN.md). This reads every `crate::…` path and
//! `super::…` path in the source and fails on an import from a layer to one above it, on an
//! import circle between the files of one layer, and on the clock or the process's streams
//! being touched outside the front ends.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules from the top down; a module may use only those after it. The last
/// group are leaves and use no other module.
const LAYERS: &[&[&str]] = &[
    &["cmd"],
    &["discover"],
    &["report"],
    &["cli"],
    &["setup"],
    &["hook"],
    &["mcp", "proxy"],
    &["serve"],
    &["env"],
    &["engine"],
    &["fmt"],
    &["doc"],
    &["store"],
    &["json", "tokens", "text", "error", "fault", "clock", "http"],
];

/// Modules that may read the clock and the process's stdin and stdout: the commands, and the
/// MCP transports that serve one request after another for the life of the process.
const FRONT_ENDS: &[&str] = &["cmd", "mcp", "proxy"];

fn rank(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|group| group.contains(&module))
        .unwrap_or_else(|| panic!("src/{module} is in no layer: add it to LAYERS and DESIGN.md"))
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/` (but `main.rs` and `lib.rs`) with its module path, e.g.
/// `["mcp", "tools"]`; a `mod.rs` is its directory's module.
fn files() -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src()).unwrap();
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if parts == ["main"] || parts == ["lib"] {
                continue;
            }
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            out.push((parts, std::fs::read_to_string(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// Code without comments and string literals, so prose that names a module is not an import.
fn code_only(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let code = match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        let mut in_string = false;
        let mut prev = ' ';
        for c in code.chars() {
            if c == '"' && prev != '\\' {
                in_string = !in_string;
            } else if !in_string {
                out.push(c);
            }
            prev = if prev == '\\' && c == '\\' { ' ' } else { c };
        }
        out.push('\n');
    }
    out
}

/// The paths a file names after `prefix` (`crate::` or `super::`), as identifier lists:
/// `crate::engine::dedup::probe` gives `["engine", "dedup", "probe"]`; a group
/// `crate::{json, text}` gives one list per member.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(ident) {
            continue;
        }
        let mut path = Vec::new();
        let mut s = rest;
        loop {
            let word: String = s.chars().take_while(|c| ident(*c)).collect();
            if word.is_empty() {
                if let Some(group) = s.strip_prefix('{') {
                    let end = group.find('}').unwrap_or(group.len());
                    for member in group[..end].split(',') {
                        let name: String =
                            member.trim().chars().take_while(|c| ident(*c)).collect();
                        if !name.is_empty() {
                            let mut p = path.clone();
                            p.push(name);
                            out.push(p);
                        }
                    }
                }
                break;
            }
            s = &s[word.len()..];
            path.push(word);
            match s.strip_prefix("::") {
                Some(next) => s = next,
                None => break,
            }
        }
        if !path.is_empty() {
            out.push(path);
        }
    }
    out
}

#[test]
fn every_layer_calls_only_downward() {
    let mut upward = Vec::new();
    for (module, text) in files() {
        let code = code_only(&text);
        let own = &module[0];
        for path in paths_after(&code, "crate::") {
            let target = &path[0];
            if target == own {
                continue;
            }
            let (from, to) = (rank(own), rank(target));
            if to <= from {
                upward.push(format!(
                    "src/{}: crate::{}",
                    module.join("/"),
                    path.join("::")
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that do not go down a layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_files_of_a_layer_import_each_other_without_a_circle() {
    let all = files();
    let known: BTreeSet<Vec<String>> = all.iter().map(|(m, _)| m.clone()).collect();
    // Edges between files of the same top-level module.
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, text) in &all {
        // A file's own test module uses `super::` for the file itself: it is left out.
        let code = code_only(text.split("#[cfg(test)]\nmod tests").next().unwrap_or(""));
        let mut targets = Vec::new();
        for path in paths_after(&code, "crate::") {
            if path[0] == module[0] {
                targets.push(path);
            }
        }
        // `super::x` from a file names a sibling (or the parent's item) of its module.
        let parent = module[..module.len() - 1].to_vec();
        for path in paths_after(&code, "super::") {
            let mut full = parent.clone();
            full.extend(path);
            targets.push(full);
        }
        // `mod x;` declares a child but does not use it: the uses below do.
        for path in paths_after(&code, "self::") {
            let mut full = module.clone();
            full.extend(path);
            targets.push(full);
        }
        let mut name_uses = |target: &[String]| {
            // The longest prefix that is a file is the file used.
            let file = (1..=target.len())
                .rev()
                .map(|n| target[..n].to_vec())
                .find(|p| known.contains(p));
            if let Some(file) = file.filter(|f| f != module) {
                edges.entry(module.clone()).or_default().insert(file);
            }
        };
        for target in &targets {
            name_uses(target);
        }
        // A parent calling `child::f` names its child without a prefix.
        for child in known
            .iter()
            .filter(|k| k.len() == module.len() + 1 && k.starts_with(module))
        {
            let name = child.last().unwrap();
            if code.contains(&format!("{name}::")) {
                edges
                    .entry(module.clone())
                    .or_default()
                    .insert(child.clone());
            }
        }
    }
    // Depth-first search for a circle.
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        path: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        match state.get(node) {
            Some(2) => return None,
            Some(1) => {
                let start = path.iter().position(|p| p == node).unwrap();
                let mut circle = path[start..].to_vec();
                circle.push(node.clone());
                return Some(circle);
            }
            _ => {}
        }
        state.insert(node.clone(), 1);
        path.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, state, path) {
                return Some(circle);
            }
        }
        path.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in known.iter() {
        if let Some(circle) = visit(node, &edges, &mut state, &mut Vec::new()) {
            let shown: Vec<String> = circle.iter().map(|m| m.join("/")).collect();
            panic!("import circle: {}", shown.join(" → "));
        }
    }
}

#[test]
fn only_the_front_ends_touch_the_clock_and_the_streams() {
    let mut found = Vec::new();
    for (module, text) in files() {
        if FRONT_ENDS.contains(&module[0].as_str()) || module == ["clock"] {
            continue;
        }
        // Tests inside a module may do as they like.
        let body = text.split("#[cfg(test)]").next().unwrap_or("");
        let code = code_only(body);
        for needle in [
            "clock::",
            "std::io::stdin",
            "std::io::stdout",
            "SystemTime::now",
            "println!",
        ] {
            if code.contains(needle) {
                found.push(format!("src/{}: {needle}", module.join("/")));
            }
        }
    }
    assert!(
        found.is_empty(),
        "only cmd/ and mcp/ may do this:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_reads_imports() {
    let code = code_only("use crate::{json, text};\nlet x = crate::engine::dedup::probe(); // crate::cmd\nlet s = \"crate::cli\";\n");
    assert_eq!(
        paths_after(&code, "crate::"),
        vec![
            vec!["json".to_string()],
            vec!["text".to_string()],
            vec![
                "engine".to_string(),
                "dedup".to_string(),
                "probe".to_string()
            ],
        ]
    );
}
