//! pip and uv installs: folds `Collecting` / `Downloading` / `Using cached` lines, progress
//! bars, wheel-building steps and the `Requirement already satisfied` lines of transitive
//! dependencies into counted markers. `Successfully installed …`, the requirements the user
//! named, every ERROR / WARNING and the conflict explanations stay. `pip list` and `pip freeze`
//! are the listing the agent asked for and are not claimed.

use super::fold::{fold_kinds, folds_any, Folding, DEFAULT};
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    let installs = |sub: Option<&str>| matches!(sub, Some("install" | "download" | "wheel"));
    match label.program {
        "pip" | "pip3" => installs(label.subcommand()),
        "python" | "python3" => {
            let rest: Vec<&str> = label
                .args
                .iter()
                .copied()
                .skip_while(|a| *a != "-m")
                .skip(1)
                .collect();
            rest.first().is_some_and(|m| matches!(*m, "pip" | "pip3"))
                && installs(rest.iter().copied().skip(1).find(|a| !a.starts_with('-')))
        }
        "uv" => {
            let words: Vec<&str> = label
                .args
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect();
            matches!(
                words.as_slice(),
                ["pip", "install" | "sync", ..] | ["add" | "sync" | "lock", ..]
            )
        }
        _ => false,
    }
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let recognised = doc.lines.iter().any(|l| {
        l.starts_with("Collecting ")
            || l.starts_with("Requirement already satisfied: ")
            || l.starts_with("Successfully installed ")
            || l.starts_with("Resolved ") && l.contains(" package")
    });
    if !recognised {
        return None;
    }
    let kinds: Vec<_> = doc.lines.iter().map(|l| line_kind(l)).collect();
    let how = Folding {
        absorb_blanks: true,
        ..DEFAULT
    };
    let pieces = fold_kinds(doc, &kinds, &how);
    folds_any(&pieces).then_some(pieces)
}

fn line_kind(line: &str) -> Option<&'static str> {
    const DOWNLOAD: [&str; 6] = [
        "Collecting ",
        "  Downloading ",
        "  Using cached ",
        "  Obtaining ",
        "Downloading ",
        " Downloaded ",
    ];
    const BUILD: [&str; 10] = [
        "  Installing build dependencies",
        "  Getting requirements to build",
        "  Preparing metadata",
        "  Building wheel for ",
        "  Created wheel for ",
        "  Stored in directory: ",
        "Building wheels for collected packages",
        "Building wheel for ",
        "Created wheel for ",
        "Stored in directory: ",
    ];
    if DOWNLOAD.iter().any(|p| line.starts_with(p)) || is_progress_bar(line) {
        return Some("download");
    }
    if BUILD.iter().any(|p| line.starts_with(p)) {
        return Some("build step");
    }
    // The requirements the user named stay; those pulled in by them (`(from …)`) fold.
    if line.starts_with("Requirement already satisfied: ") && line.contains(" (from ") {
        return Some("already satisfied dependency");
    }
    None
}

/// `     ━━━━━━━━━━━━━━━━ 1.3/1.3 MB 621.3 MB/s  0:00:00`
fn is_progress_bar(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with('━') || t.starts_with('╸') || t.starts_with("|█")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::label::Label;
    use crate::doc::render;

    const INSTALL: &str = "Collecting requests
  Downloading requests-2.34.2-py3-none-any.whl (73 kB)
Collecting pygments<3.0.0,>=2.13.0 (from rich)
  Downloading pygments-2.21.0-py3-none-any.whl (1.3 MB)
     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 1.3/1.3 MB 621.3 MB/s  0:00:00

Collecting idna<4,>=2.5 (from requests)
  Downloading idna-3.20-py3-none-any.whl (69 kB)
Requirement already satisfied: rich in ./.venv/lib/python3.11/site-packages (15.0.0)
Requirement already satisfied: mdurl~=0.1 in ./.venv/lib/python3.11/site-packages (from markdown-it-py>=2.2.0->rich) (0.1.2)
Requirement already satisfied: markdown-it-py>=2.2.0 in ./.venv/lib/python3.11/site-packages (from rich) (4.3.0)
Requirement already satisfied: certifi>=2023.5.7 in ./.venv/lib/python3.11/site-packages (from requests) (2026.10.19.post1)
Installing collected packages: idna, pygments, requests
Successfully installed idna-3.20 pygments-2.21.0 requests-2.34.2
";

    fn run(label: &str, text: &str) -> Option<String> {
        assert!(matches(&Label::parse(label)), "{label}");
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    #[test]
    fn folds_downloads_and_transitive_requirements() {
        let out = run("pip install requests rich", INSTALL).unwrap();
        assert!(out.starts_with("[… 8 download lines · sqz expand h:L1-8]\n"));
        assert!(out.contains(
            "Requirement already satisfied: rich in ./.venv/lib/python3.11/site-packages (15.0.0)\n"
        ));
        assert!(out.contains("[… 3 already satisfied dependency lines · sqz expand h:L10-12]"));
        assert!(out.ends_with(
            "Installing collected packages: idna, pygments, requests\nSuccessfully installed idna-3.20 pygments-2.21.0 requests-2.34.2\n"
        ));
    }

    #[test]
    fn errors_and_conflicts_stay() {
        let text = "Collecting requests==2.31.0 (from -r requirements.txt (line 1))
  Downloading requests-2.31.0-py3-none-any.whl (62 kB)
Collecting urllib3==1.21 (from -r requirements.txt (line 2))
  Downloading urllib3-1.21-py2.py3-none-any.whl (131 kB)
ERROR: Cannot install -r requirements.txt (line 1) and urllib3==1.21 because these package versions have conflicting dependencies.

The conflict is caused by:
    The user requested urllib3==1.21
    requests 2.31.0 depends on urllib3<3 and >=1.21.1
";
        let out = run("python -m pip install -r requirements.txt", text).unwrap();
        assert!(out.contains("[… 4 download lines · sqz expand h:L1-4]"));
        assert!(out.contains("ERROR: Cannot install -r requirements.txt (line 1)"));
        assert!(out.contains("    requests 2.31.0 depends on urllib3<3 and >=1.21.1\n"));
    }

    #[test]
    fn listings_and_unknown_output_are_not_claimed() {
        assert!(!matches(&Label::parse("pip list")));
        assert!(!matches(&Label::parse("pip freeze")));
        assert!(matches(&Label::parse("uv pip install fastapi")));
        assert!(run("pip install x", "Looking in indexes: https://example.org\n").is_none());
    }

    #[test]
    fn truncated_output_keeps_the_cut_line() {
        let cut = &INSTALL[..INSTALL.find("(from requests) (2026").unwrap()];
        let out = run("pip install requests rich", cut).unwrap();
        assert!(out.contains("[… 8 download lines"));
        // The cut line lost its `(from …)`: it is no longer a known shape and stays verbatim.
        assert!(out.ends_with("in ./.venv/lib/python3.11/site-packages "));
    }

    #[test]
    fn another_locale_and_unknown_lines_stay() {
        // A translated or newer pip: lines it does not know are kept verbatim.
        let text = INSTALL.replace(
            "Collecting idna<4,>=2.5 (from requests)\n",
            "Sammle idna<4,>=2.5 (von requests)\n",
        );
        let out = run("pip install requests rich", &text).unwrap();
        assert!(out.contains("Sammle idna<4,>=2.5 (von requests)\n"));
        let text = INSTALL.replace(
            "Installing collected packages",
            "Verifying attestations for 3 packages\nInstalling collected packages",
        );
        let out = run("pip install requests rich", &text).unwrap();
        assert!(out.contains("Verifying attestations for 3 packages\n"));
    }
}
