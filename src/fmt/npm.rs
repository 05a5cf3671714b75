//! npm, pnpm, yarn and bun package commands. `install` / `add` / `ci`: folds progress lines
//! (pnpm's `Progress:`, yarn's `[1/4] Resolving packages...`, npm's `http fetch` / `timing` /
//! `verb` log lines); `npm warn` lines, `added N packages` and every error stay. `ls` / `list`
//! (a listing): keeps the root, every top-level dependency and every anomaly (UNMET, invalid,
//! extraneous, missing) and folds the deeper levels per top-level dependency. `test` is left
//! to the jest/vitest formatter and `run build` to the bundler formatter.

use super::fold::{fold_kinds, folds_any, Folding, DEFAULT};
use crate::doc::facts::Floor;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

fn is_package_manager(program: &str) -> bool {
    matches!(program, "npm" | "pnpm" | "yarn" | "bun")
}

pub fn matches(label: &Label) -> bool {
    is_package_manager(label.program)
        && (is_install(label) || matches!(label.subcommand(), Some("ci" | "add" | "update" | "up")))
}

fn is_install(label: &Label) -> bool {
    match label.subcommand() {
        Some("install" | "i" | "isntall" | "add") => true,
        // A bare `yarn` installs.
        None => label.program == "yarn",
        _ => false,
    }
}

pub fn matches_ls(label: &Label) -> bool {
    is_package_manager(label.program)
        && matches!(label.subcommand(), Some("ls" | "list" | "la" | "ll"))
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let recognised = doc.lines.iter().any(|l| {
        let t = l.trim();
        (t.starts_with("added ") && t.contains(" package"))
            || t.starts_with("up to date")
            || t.starts_with("Progress: resolved ")
            || t.starts_with("Packages: ")
            || t.starts_with("Done in ")
            || t.starts_with("success ")
            || t.contains(" packages installed")
            || t.starts_with("npm error")
            || t.starts_with("npm ERR!")
    });
    if !recognised {
        return None;
    }
    let kinds: Vec<_> = doc.lines.iter().map(|l| install_kind(l)).collect();
    let pieces = fold_kinds(doc, &kinds, &DEFAULT);
    folds_any(&pieces).then_some(pieces)
}

fn install_kind(line: &str) -> Option<&'static str> {
    let t = line.trim();
    // pnpm's last progress line (`…, done`) carries the totals: it stays.
    if t.starts_with("Progress: resolved ") && !t.ends_with("done") {
        return Some("progress");
    }
    if t.len() > 2 && t.bytes().all(|b| b == b'+' || b == b'-') {
        return Some("progress");
    }
    if t.starts_with('[') && t.contains("] ") && t.ends_with("...") {
        let step = &t[1..t.find(']').unwrap_or(1)];
        if step.split('/').all(|n| n.parse::<u32>().is_ok()) {
            return Some("progress");
        }
    }
    const LOG: [&str; 6] = [
        "npm http fetch ",
        "npm timing ",
        "npm verb ",
        "npm sill ",
        "npm info ",
        "npm notice ",
    ];
    if LOG.iter().any(|p| t.starts_with(p)) {
        return Some("npm log");
    }
    None
}

/// `npm ls --all`, `yarn list`, `pnpm ls --depth Infinity`: a dependency tree.
/// `npm ls` is a listing: only failure lines (UNMET, invalid, …) must stay.
pub const LS_FLOOR: Floor = Floor::Failures;

pub fn format_ls(doc: &Doc) -> Option<Vec<Piece>> {
    let first = doc
        .lines
        .iter()
        .find(|l| !l.trim().is_empty())?
        .trim_start();
    // The root: `name@version /path`, pnpm's `Legend:` or yarn's `yarn list v1.22.22`.
    let root =
        first.contains('@') || first.starts_with("Legend:") || first.starts_with("yarn list v");
    if tree_offset(first).is_some() || !root {
        return None;
    }
    let offsets: Vec<Option<usize>> = doc.lines.iter().map(|l| tree_offset(l)).collect();
    let top = offsets.iter().flatten().min().copied()?;
    let kinds: Vec<Option<&'static str>> = doc
        .lines
        .iter()
        .zip(&offsets)
        .map(|(line, offset)| {
            let nested = offset.is_some_and(|o| o > top);
            (nested && !is_anomaly(line)).then_some("nested dependency")
        })
        .collect();
    let how = Folding {
        floor: LS_FLOOR,
        ..DEFAULT
    };
    let pieces = fold_kinds(doc, &kinds, &how);
    folds_any(&pieces).then_some(pieces)
}

/// Where the branch glyph (`├`, `└`, `+-`, `` `- ``) of a tree line starts, in characters.
fn tree_offset(line: &str) -> Option<usize> {
    let mut col = 0;
    for c in line.chars() {
        match c {
            '├' | '└' => return Some(col),
            '│' | ' ' | '|' => col += 1,
            _ => return None,
        }
    }
    None
}

fn is_anomaly(line: &str) -> bool {
    const MARKS: [&str; 8] = [
        "UNMET",
        "invalid",
        "extraneous",
        "missing",
        "ERR",
        "error",
        "overridden",
        "peer dep",
    ];
    MARKS.iter().any(|m| line.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::label::Label;
    use crate::doc::render;

    const TREE: &str = "orders-service@3.2.0 /home/dev/orders-service
├─┬ axios@0.21.1
│ └── follow-redirects@1.16.3
├─┬ body-parser@1.19.0
│ ├── bytes@3.1.0
│ ├─┬ debug@2.6.9
│ │ └── ms@2.0.0
│ ├── depd@1.1.2
│ └── qs@6.7.0
├── lodash@4.17.15
├─┬ mocha@8.1.3
│ ├─┬ chokidar@3.4.2
│ │ ├── anymatch@3.1.3
│ │ ├── UNMET OPTIONAL DEPENDENCY fsevents@~2.1.2
│ │ ├── glob-parent@5.1.2
│ │ ├── is-glob@4.0.3 deduped
│ │ └── readdirp@3.4.0
│ └── ms@2.1.2
└── uuid@3.4.0 extraneous
";

    fn run_ls(label: &str, text: &str) -> Option<String> {
        assert!(matches_ls(&Label::parse(label)), "{label}");
        let doc = Doc::new(label, text);
        format_ls(&doc).map(|p| render(&doc, &p, "h"))
    }

    #[test]
    fn ls_keeps_top_level_and_anomalies() {
        let out = run_ls("npm ls --all", TREE).unwrap();
        assert_eq!(
            out,
            "orders-service@3.2.0 /home/dev/orders-service
├─┬ axios@0.21.1
│ └── follow-redirects@1.16.3
├─┬ body-parser@1.19.0
[… 5 nested dependency lines · sqz expand h:L5-9]
├── lodash@4.17.15
├─┬ mocha@8.1.3
│ ├─┬ chokidar@3.4.2
│ │ ├── anymatch@3.1.3
│ │ ├── UNMET OPTIONAL DEPENDENCY fsevents@~2.1.2
[… 4 nested dependency lines · sqz expand h:L15-18]
└── uuid@3.4.0 extraneous
"
        );
    }

    #[test]
    fn ls_without_depth_has_nothing_to_fold() {
        let flat =
            "app@1.0.0 /home/dev/app\n├── axios@0.21.1\n├── express@4.17.1\n└── uuid@3.4.0\n";
        assert!(run_ls("npm ls", flat).is_none());
        assert!(run_ls("npm ls", "npm error code ELSPROBLEMS\n").is_none());
    }

    #[test]
    fn ls_truncated_and_unknown_lines_stay() {
        // Cut in the middle of a line, and a line of a newer npm inserted at the top level.
        let cut = &TREE[..TREE.find("readdirp").unwrap() + 4];
        let out = run_ls("npm ls --all", cut).unwrap();
        assert!(out.contains("[… 3 nested dependency lines"));
        let odd = TREE.replace(
            "├── lodash@4.17.15\n",
            "├── lodash@4.17.15\nworkspace: packages/api\n",
        );
        let out = run_ls("npm ls --all", &odd).unwrap();
        assert!(out.contains("\nworkspace: packages/api\n"));
    }

    #[test]
    fn yarn_list_folds_by_its_own_indent() {
        let text = "yarn list v1.22.22
├─ accepts@1.3.8
│  ├─ mime-types@~2.1.34
│  ├─ negotiator@0.6.3
│  └─ mime-db@1.52.0
└─ ms@2.1.3
Done in 0.12s.
";
        let out = run_ls("yarn list", text).unwrap();
        assert!(out.contains(
            "├─ accepts@1.3.8\n[… 3 nested dependency lines · sqz expand h:L3-5]\n└─ ms@2.1.3\n"
        ));
    }

    fn run(label: &str, text: &str) -> Option<String> {
        assert!(matches(&Label::parse(label)), "{label}");
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    #[test]
    fn install_folds_progress_and_keeps_warnings() {
        let text = "Progress: resolved 1, reused 0, downloaded 0, added 0
Progress: resolved 86, reused 25, downloaded 0, added 0
Progress: resolved 285, reused 88, downloaded 0, added 0
Packages: +285
Progress: resolved 316, reused 285, downloaded 0, added 285, done
 WARN  deprecated request@2.88.2: request has been deprecated
Done in 3.7s using pnpm v10.34.9
";
        let out = run("pnpm install", text).unwrap();
        assert!(out.starts_with("[… 3 progress lines · sqz expand h:L1-3]\nPackages: +285\n"));
        assert!(out.contains("added 285, done\n"));
        assert!(out.contains(" WARN  deprecated request@2.88.2"));
        let yarn = "yarn install v1.22.22\n[1/4] Resolving packages...\n[2/4] Fetching packages...\n[3/4] Linking dependencies...\nwarning Workspaces can only be enabled in private projects.\n[4/4] Building fresh packages...\nsuccess Saved lockfile.\nDone in 7.62s.\n";
        let out = run("yarn", yarn).unwrap();
        assert!(out.contains("[… 3 progress lines · sqz expand h:L2-4]\nwarning Workspaces"));
    }

    #[test]
    fn install_keeps_npm_warnings_and_declines_when_nothing_folds() {
        let text = "npm warn deprecated request@2.88.2: request has been deprecated, see https://github.com/request/request/issues/3142\nnpm warn deprecated uuid@3.4.0: Please upgrade\n\nadded 409 packages in 15s\n";
        assert!(run("npm install", text).is_none());
        assert!(run("npm i", "Unbekannter Befehl: \"instal\"\n").is_none());
        assert!(!matches(&Label::parse("npm test")));
        assert!(!matches(&Label::parse("npm run build")));
    }
}
