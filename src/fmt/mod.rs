//! Per-command formatters: one file per command family, each with `matches(label)` and
//! `format(doc)`. A formatter keeps what an agent acts on and folds the rest into counted
//! markers; when it is unsure of the output's shape it returns `None` (refuse to guess).

use crate::doc::facts::Floor;
pub use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub mod bulk;
mod bundler;
mod cargo;
mod docker;
mod docker_list;
mod du;
mod files;
mod fold;
mod git_branch;
mod git_log;
mod git_remote;
mod git_status;
mod go_test;
mod gradle;
mod grep;
mod js_test;
mod kubectl;
mod lockgrep;
mod ls;
mod make;
mod maven;
mod mix;
mod npm;
mod pip;
mod procs;
mod pytest;
mod terraform;

pub struct Formatter {
    pub name: &'static str,
    /// What its result must keep (`Floor::Failures` for listings, `Floor::Facts` otherwise).
    pub floor: Floor,
    pub matches: fn(&Label) -> bool,
    pub format: fn(&Doc) -> Option<Vec<Piece>>,
}

const ALL: &[Formatter] = &[
    Formatter {
        name: "cargo",
        floor: Floor::Facts,
        matches: cargo::matches,
        format: cargo::format,
    },
    Formatter {
        name: "git status",
        floor: Floor::Facts,
        matches: git_status::matches,
        format: git_status::format,
    },
    Formatter {
        name: "git log",
        floor: Floor::Facts,
        matches: git_log::matches,
        format: git_log::format,
    },
    Formatter {
        name: "git branch -a",
        floor: Floor::Failures,
        matches: git_branch::matches,
        format: git_branch::format,
    },
    Formatter {
        name: "git remote",
        floor: Floor::Facts,
        matches: git_remote::matches,
        format: git_remote::format,
    },
    Formatter {
        name: "go test",
        floor: Floor::Facts,
        matches: go_test::matches,
        format: go_test::format,
    },
    Formatter {
        name: "jest/vitest",
        floor: Floor::Facts,
        matches: js_test::matches,
        format: js_test::format,
    },
    // After jest/vitest, which claims `npm test` and `bun test`.
    Formatter {
        name: "vite/webpack",
        floor: Floor::Facts,
        matches: bundler::matches,
        format: bundler::format,
    },
    Formatter {
        name: "npm ls",
        floor: npm::LS_FLOOR,
        matches: npm::matches_ls,
        format: npm::format_ls,
    },
    Formatter {
        name: "npm install",
        floor: Floor::Facts,
        matches: npm::matches,
        format: npm::format,
    },
    Formatter {
        name: "pytest",
        floor: Floor::Facts,
        matches: pytest::matches,
        format: pytest::format,
    },
    Formatter {
        name: "pip",
        floor: Floor::Facts,
        matches: pip::matches,
        format: pip::format,
    },
    Formatter {
        name: "make",
        floor: Floor::Facts,
        matches: make::matches,
        format: make::format,
    },
    Formatter {
        name: "gradle",
        floor: Floor::Facts,
        matches: gradle::matches,
        format: gradle::format,
    },
    Formatter {
        name: "mix",
        floor: Floor::Facts,
        matches: mix::matches,
        format: mix::format,
    },
    Formatter {
        name: "maven",
        floor: Floor::Facts,
        matches: maven::matches,
        format: maven::format,
    },
    // Before grep/rg: a search of a lock file is a list of entries of one shape.
    Formatter {
        name: "grep lock file",
        floor: Floor::Failures,
        matches: lockgrep::matches,
        format: lockgrep::format,
    },
    Formatter {
        name: "grep/rg",
        floor: Floor::Failures,
        matches: grep::matches,
        format: grep::format,
    },
    Formatter {
        name: "find/tree",
        floor: Floor::Failures,
        matches: files::matches,
        format: files::format,
    },
    Formatter {
        name: "docker ps/images",
        floor: Floor::Failures,
        matches: docker_list::matches,
        format: docker_list::format,
    },
    Formatter {
        name: "ps aux",
        floor: Floor::Failures,
        matches: procs::matches,
        format: procs::format,
    },
    Formatter {
        name: "du",
        floor: Floor::Failures,
        matches: du::matches,
        format: du::format,
    },
    Formatter {
        name: "ls -l",
        floor: Floor::Failures,
        matches: ls::matches,
        format: ls::format,
    },
    Formatter {
        name: "docker build",
        floor: Floor::Facts,
        matches: docker::matches,
        format: docker::format,
    },
    Formatter {
        name: "kubectl get",
        floor: Floor::Failures,
        matches: kubectl::matches_get,
        format: kubectl::format_get,
    },
    Formatter {
        name: "kubectl describe/apply",
        floor: Floor::Facts,
        matches: kubectl::matches,
        format: kubectl::format,
    },
    Formatter {
        name: "terraform",
        floor: Floor::Facts,
        matches: terraform::matches,
        format: terraform::format,
    },
];

/// The formatter that claims this command label, if any.
pub fn find(label: &str) -> Option<&'static Formatter> {
    let label = Label::parse(label);
    ALL.iter().find(|f| (f.matches)(&label))
}

/// Whether the label runs a test suite: its output may hold stack traces that a formatter
/// keeps whole while it folds the passing tests around them.
pub fn runs_tests(label: &str) -> bool {
    let l = Label::parse(label);
    let sub = l.subcommand();
    let has = |word: &str| l.args.iter().any(|a| a.contains(word));
    match l.program {
        "cargo" => matches!(sub, Some("test" | "t" | "nextest")),
        "pytest" | "py.test" | "jest" | "vitest" | "mocha" | "ctest" | "rspec" | "phpunit" => true,
        "python" | "python3" => l.args.windows(2).any(|w| w[0] == "-m" && w[1] == "pytest"),
        "go" | "dotnet" | "mix" | "deno" | "swift" => sub == Some("test"),
        "bundle" | "rails" | "rake" => has("rspec") || has("test") || has("spec"),
        "npm" | "pnpm" | "yarn" | "bun" => {
            matches!(sub, Some("test" | "t")) || (sub == Some("run") && has("test"))
        }
        "npx" | "bunx" | "pnpx" => matches!(sub, Some("jest" | "vitest" | "mocha")),
        "mvn" | "gradle" | "gradlew" | "make" => has("test") || has("check"),
        _ => false,
    }
}

/// Test helper for every formatter: checks `pieces` against the floor the engine holds the
/// formatter that claims `doc.label` to, and renders them.
#[cfg(test)]
pub(crate) fn render_checked(doc: &Doc, pieces: &[Piece], hash: &str) -> String {
    let floor = find(doc.label)
        .expect("a formatter claims the test's label")
        .floor;
    assert!(
        crate::doc::keeps_all_said(doc, pieces, |n| floor.keeps(doc.lines[n])),
        "a formatter hid a line the engine must show"
    );
    crate::doc::render(doc, pieces, hash)
}

/// Test helper: whether every input line is shown, rewritten or inside a fold.
#[cfg(test)]
pub(crate) fn accounts_for_every_line(line_count: usize, pieces: &[Piece]) -> bool {
    let mut seen = vec![false; line_count];
    for piece in pieces {
        match piece {
            Piece::Keep(n) | Piece::Rewrite(n, _) => seen[*n] = true,
            Piece::Fold { lines, .. } | Piece::Like { lines, .. } => {
                lines.iter().for_each(|&n| seen[n] = true)
            }
            Piece::KeepRange(lines) | Piece::Same { lines, .. } | Piece::Table { lines, .. } => {
                lines.clone().for_each(|n| seen[n] = true)
            }
            Piece::Summary(_) => {}
        }
    }
    seen.iter().all(|s| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_find_formatters() {
        assert!(find("git status").is_some());
        assert!(find("git -C repo status --short").is_some());
        assert!(find("echo hi").is_none());
        assert!(runs_tests("cargo test --lib"));
        assert!(runs_tests("npx jest src"));
        assert!(runs_tests("python -m pytest -x"));
        assert!(!runs_tests("cargo run"));
    }
}
