//! docker build (BuildKit and the legacy builder): folds the build's bookkeeping — step
//! digests, `DONE`/`CACHED` status, context transfers, `[internal]` steps, intermediate
//! container and layer ids — into one counted marker. Step headers, every line a step printed,
//! every `ERROR` and the whole of a failing step, and the image id and tag lines stay verbatim.

use crate::doc::facts::is_fact;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    if !matches!(label.program, "docker" | "podman" | "buildah") {
        return false;
    }
    let words: Vec<&str> = label
        .args
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .take(2)
        .collect();
    matches!(
        words.as_slice(),
        ["build", ..] | ["buildx" | "image" | "builder", "build", ..] | ["bud", ..]
    )
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let buildkit = doc.lines.iter().any(|l| {
        step_of(l).is_some_and(|(_, rest)| {
            rest.starts_with("DONE ") || rest == "CACHED" || rest.starts_with("ERROR")
        })
    });
    let legacy = doc
        .lines
        .iter()
        .any(|l| l.starts_with("Step ") && l.contains(" : "));
    let noise: Vec<usize> = if buildkit {
        buildkit_noise(doc)
    } else if legacy {
        (0..doc.lines.len())
            .filter(|&n| legacy_noise(doc.lines[n]))
            .collect()
    } else {
        return None; // refuse to guess
    };
    // Lines the engine counts as facts (`busybox:1.35` reads as a location) stay.
    let noise: Vec<usize> = noise
        .into_iter()
        .filter(|&n| !is_fact(doc.lines[n]))
        .collect();
    if noise.len() < 2 {
        return None;
    }
    let mut pieces: Vec<Piece> = (0..doc.lines.len())
        .filter(|n| noise.binary_search(n).is_err())
        .map(Piece::Keep)
        .collect();
    // One marker at the end: the steps then read as header and output, in order.
    pieces.push(Piece::Fold {
        lines: noise,
        what: "build bookkeeping".to_string(),
    });
    Some(pieces)
}

/// `#12 rest` → (12, rest).
fn step_of(line: &str) -> Option<(u32, &str)> {
    let rest = line.strip_prefix('#')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let id = rest[..digits].parse().ok()?;
    Some((id, rest[digits..].strip_prefix(' ')?))
}

fn buildkit_noise(doc: &Doc) -> Vec<usize> {
    // A failing step is kept whole: its header and output explain the error.
    let failed: Vec<u32> = doc
        .lines
        .iter()
        .filter_map(|l| step_of(l))
        .filter(|(_, rest)| rest.starts_with("ERROR"))
        .map(|(id, _)| id)
        .collect();
    let mut internal: Vec<u32> = Vec::new();
    let mut noise = Vec::new();
    for (n, line) in doc.lines.iter().enumerate() {
        if line.is_empty() {
            noise.push(n);
            continue;
        }
        let Some((id, rest)) = step_of(line) else {
            continue;
        };
        if rest.starts_with("[internal] ") && !failed.contains(&id) {
            internal.push(id);
        }
        let bookkeeping = is_digest(rest)
            || rest.starts_with("DONE ")
            || rest == "CACHED"
            || rest.starts_with("transferring ")
            || rest.starts_with("exporting layers")
            || rest.starts_with("resolve ")
            || rest.starts_with("extracting sha256:")
            || rest.starts_with("sha256:") && rest.contains(" done")
            || internal.contains(&id);
        // A failing step keeps everything but its digest.
        let failing = failed.contains(&id) && !is_digest(rest);
        if bookkeeping && !failing {
            noise.push(n);
        }
    }
    noise
}

fn is_digest(rest: &str) -> bool {
    rest.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn legacy_noise(line: &str) -> bool {
    let id = |s: &str| s.len() >= 12 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if let Some(rest) = line.strip_prefix(" ---> ") {
        return id(rest)
            || rest.strip_prefix("Running in ").is_some_and(id)
            || rest == "Using cache";
    }
    line.strip_prefix("Removing intermediate container ")
        .is_some_and(id)
        || line.starts_with("Sending build context to Docker daemon")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILD: &str = include_str!("../../fixtures/docker-build/input.txt");
    const FAILS: &str = include_str!("../../fixtures/docker-build-run-fails/input.txt");
    const MISSING: &str = include_str!("../../fixtures/docker-build-copy-missing/input.txt");
    const LEGACY: &str = include_str!("../../fixtures/docker-build-legacy/input.txt");

    fn run(text: &str) -> Option<String> {
        let doc = Doc::new("docker build .", text);
        let pieces = format(&doc)?;
        Some(crate::fmt::render_checked(&doc, &pieces, "h"))
    }

    #[test]
    fn buildkit_keeps_steps_output_and_tag() {
        let out = run(BUILD).unwrap();
        assert!(out.contains("#8 0.211 checking config/production.env\n"));
        assert!(out.contains("#14 naming to docker.io/library/orders-api:1.4.0 done\n"));
        assert!(out.contains("#14 writing image sha256:34d20b"));
        assert!(!out.contains("#1 sha256:"));
        assert!(!out.contains("[internal] load .dockerignore"));
        assert!(out.ends_with(" build bookkeeping lines · sqz expand h]\n"));
    }

    #[test]
    fn failing_steps_stay_whole() {
        let out = run(MISSING).unwrap();
        assert!(out.contains("#12 [stage-1 4/5] COPY bin/orders-api /usr/local/bin/orders-api\n"));
        assert!(out.contains("#12 ERROR: \"/bin/orders-api\" not found: not found\n"));
        let out = run(FAILS).unwrap();
        assert!(out.contains("#8 0.241 checking config/canary.env\n#8 ERROR: executor failed"));
        assert!(out.contains(" > [config 4/5] RUN set -eu;"));
    }

    #[test]
    fn legacy_builder_folds_container_and_layer_ids() {
        let out = run(LEGACY).unwrap();
        assert!(out.contains("Step 4/15 : RUN set -eu;"));
        assert!(!out.contains("checking config/staging.env\nRemoving"));
        assert!(
            out.contains("Successfully built 6305f5485935\nSuccessfully tagged orders-api:1.3.2\n")
        );
        assert!(!out.contains(" ---> Running in"));
    }

    #[test]
    fn refuses_other_output_and_keeps_unknown_lines() {
        assert!(run(
            "Error response from daemon: dial unix docker.sock: connect: permission denied\n"
        )
        .is_none());
        // German locale of the CLI's own messages does not exist; an unknown progress line
        // from a newer BuildKit stays verbatim.
        let mut lines: Vec<&str> = BUILD.lines().collect();
        lines.insert(20, "#4 unpacking layer with the new snapshotter 0.3s");
        let text = lines.join("\n") + "\n";
        assert!(run(&text)
            .unwrap()
            .contains("#4 unpacking layer with the new snapshotter 0.3s\n"));
        // Truncated mid-line: the cut line is kept, and so is everything it cannot classify.
        let cut = &BUILD[..BUILD.find("#9 0.392").unwrap() + 12];
        assert!(run(cut)
            .unwrap()
            .ends_with("build bookkeeping lines · sqz expand h]"));
        assert!(run(cut).unwrap().contains("\n#9 0.392 app\n"));
        // Interleaved steps (BuildKit runs stages in parallel) keep each line's own step.
        assert!(!run(BUILD)
            .unwrap()
            .contains("#6 [internal] load build context"));
    }
}
