//! `docker ps` / `docker ps -a` and `docker images` tables: the header and every anomalous row
//! stay verbatim (containers that exited, restart, are unhealthy, paused, created or dead;
//! dangling `<none>` images); runs of at least [`MIN_RUN`] ordinary rows (containers `Up` and
//! healthy, tagged images) become one summary line that names each of them, counted from the
//! input, with a marker that restores the rows. Columns are cut at the header's offsets; a table
//! without the expected header, or a row that does not fit it, is kept or refused.

use crate::doc::facts::reports_failure;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

/// A run folds only when it has at least this many rows.
const MIN_RUN: usize = 8;

pub fn matches(label: &Label) -> bool {
    match (label.program, label.subcommand()) {
        ("docker" | "podman", Some("ps" | "images")) => true,
        ("docker" | "podman", Some("container" | "image")) => label
            .args
            .iter()
            .any(|a| matches!(*a, "ls" | "list" | "ps")),
        _ => false,
    }
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let header_at = doc
        .lines
        .iter()
        .position(|l| l.starts_with("CONTAINER ID") || l.starts_with("REPOSITORY "))?;
    let header = doc.lines[header_at];
    let containers = header.starts_with("CONTAINER ID");
    let columns: &[&str] = if containers {
        &["STATUS", "PORTS", "NAMES"]
    } else {
        &["REPOSITORY", "TAG", "IMAGE ID"]
    };
    let offsets: Vec<usize> = columns
        .iter()
        .map(|c| header.find(&format!("{c} ")).or_else(|| header.find(c)))
        .collect::<Option<_>>()?;
    let last = doc.lines.len() - 1;
    // What each line is: Some(name) for an ordinary row, None to keep it.
    let ordinary: Vec<Option<String>> = doc
        .lines
        .iter()
        .enumerate()
        .map(|(n, line)| {
            // A last line cut mid-way stays as it is.
            if n <= header_at || (n == last && !doc.ends_with_newline) || reports_failure(line) {
                return None;
            }
            if containers {
                ordinary_container(line, offsets[0], offsets[1], offsets[2])
            } else {
                ordinary_image(line, offsets[1], offsets[2])
            }
        })
        .collect();

    let (noun, what) = if containers {
        ("running containers", "running container")
    } else {
        ("tagged images", "tagged image")
    };
    let mut pieces = Vec::new();
    let mut n = 0;
    let mut folded_any = false;
    while n < doc.lines.len() {
        let run_end = (n..doc.lines.len())
            .find(|&m| ordinary[m].is_none())
            .unwrap_or(doc.lines.len());
        if run_end - n >= MIN_RUN {
            let names: Vec<&str> = ordinary[n..run_end]
                .iter()
                .flatten()
                .map(|s| s.as_str())
                .collect();
            pieces.push(Piece::Summary(format!(
                "{} {noun}: {}",
                names.len(),
                names.join(", ")
            )));
            pieces.push(Piece::fold_range(n, run_end - 1, what));
            folded_any = true;
            n = run_end;
        } else if run_end > n {
            pieces.extend((n..run_end).map(Piece::Keep));
            n = run_end;
        } else {
            pieces.push(Piece::Keep(n));
            n += 1;
        }
    }
    folded_any.then_some(pieces)
}

/// The cell of `line` from byte `from` to byte `to` (or the end), trimmed; `None` when the
/// line does not fit the header's columns.
fn cell(line: &str, from: usize, to: Option<usize>) -> Option<&str> {
    let end = to.unwrap_or(line.len()).min(line.len());
    let cell = line.get(from..end)?;
    // A column must start right after padding: the byte before it is a space.
    if from > 0 && line.as_bytes().get(from - 1) != Some(&b' ') {
        return None;
    }
    Some(cell.trim())
}

/// A running, healthy container: `Up 13 seconds` or `Up 2 hours (healthy)`. Its name.
fn ordinary_container(
    line: &str,
    status_at: usize,
    ports_at: usize,
    names_at: usize,
) -> Option<String> {
    let status = cell(line, status_at, Some(ports_at))?;
    let name = cell(line, names_at, None)?;
    let plain = status.starts_with("Up ")
        && (!status.contains('(') || status.ends_with("(healthy)"))
        && !status.contains("Paused");
    (plain && !name.is_empty() && !name.contains(' ')).then(|| name.to_string())
}

/// A tagged image (not `<none>`): `repo:tag`.
fn ordinary_image(line: &str, tag_at: usize, id_at: usize) -> Option<String> {
    let repo = cell(line, 0, Some(tag_at))?;
    let tag = cell(line, tag_at, Some(id_at))?;
    let id = cell(line, id_at, None)?.split(' ').next()?;
    let fits = !repo.is_empty()
        && !repo.contains(' ')
        && !tag.is_empty()
        && !tag.contains(' ')
        && id.len() >= 12
        && id.bytes().all(|c| c.is_ascii_hexdigit() || c == b':');
    (fits && repo != "<none>" && tag != "<none>").then(|| format!("{repo}:{tag}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PS: &str = include_str!("../../fixtures/docker-ps-a-many/input.txt");
    const IMAGES: &str = include_str!("../../fixtures/docker-images-many/input.txt");

    fn rendered(label: &str, text: &str) -> String {
        let doc = Doc::new(label, text);
        let pieces = format(&doc).expect("formats");
        crate::fmt::render_checked(&doc, &pieces, "abc")
    }

    #[test]
    fn claims_container_and_image_lists() {
        assert!(matches(&Label::parse("docker ps -a")));
        assert!(matches(&Label::parse("docker images")));
        assert!(matches(&Label::parse("docker container ls --all")));
        assert!(!matches(&Label::parse("docker logs web")));
        assert!(!matches(&Label::parse("docker build .")));
    }

    #[test]
    fn keeps_every_anomalous_container_and_names_the_running_ones() {
        let out = rendered("docker ps -a", PS);
        for line in PS.lines() {
            if !line.contains("   Up ") {
                assert!(out.contains(line), "lost: {line}");
            } else {
                let name = line.rsplit(' ').next().unwrap();
                assert!(out.contains(name), "lost name {name}");
            }
        }
        let running = PS.lines().filter(|l| l.contains("   Up ")).count();
        assert!(out.contains(&format!("{running} running containers: web-static, ")));
        assert!(out.len() * 2 < PS.len());
    }

    #[test]
    fn unhealthy_and_starting_containers_stay() {
        let mut text = String::from(PS);
        text = text.replacen(
            "Up 8 seconds                            ",
            "Up 8 seconds (unhealthy)                ",
            1,
        );
        let out = rendered("docker ps -a", &text);
        assert!(out.contains("Up 8 seconds (unhealthy)"));
        // The short existing fixture has no run long enough: it is left alone.
        let small = include_str!("../../fixtures/docker-ps-a/input.txt");
        assert!(format(&Doc::new("docker ps -a", small)).is_none());
    }

    #[test]
    fn dangling_images_stay_and_tags_are_named() {
        let out = rendered("docker images", IMAGES);
        for line in IMAGES.lines().filter(|l| l.starts_with("<none>")) {
            assert!(out.contains(line));
        }
        assert!(out.contains("acme/gateway:1.1.0, acme/gateway:1.2.0, acme/gateway:latest"));
        assert!(out.starts_with("REPOSITORY     TAG       IMAGE ID       CREATED          SIZE\n"));
    }

    #[test]
    fn truncated_output_keeps_the_cut_row() {
        let cut = &PS[..PS.find("auth-1").unwrap() + 3];
        let out = rendered("docker ps -a", cut);
        assert!(out.ends_with("   aut"), "{out}");
    }

    #[test]
    fn interleaved_and_unknown_lines_stay() {
        let mut text = String::new();
        for (i, line) in PS.lines().enumerate() {
            text.push_str(line);
            text.push('\n');
            if i == 15 {
                text.push_str(
                    "WARNING: Error loading config file: /home/dev/.docker/config.json\n",
                );
            }
            if i == 20 {
                text.push_str("deadbeef0000   acme/x   \"sleep\"   now   Frobnicated   x\n");
            }
        }
        let out = rendered("docker ps -a", &text);
        assert!(out.contains("WARNING: Error loading config file"));
        assert!(out.contains("Frobnicated"));
    }

    #[test]
    fn another_locale_or_format_is_refused() {
        // `--format` tables or a translated header: no known header, no guess.
        let other = PS.replace("CONTAINER ID", "ID CONTENEUR");
        assert!(format(&Doc::new("docker ps -a", &other)).is_none());
        let no_status = PS.replace("STATUS", "ESTADO");
        assert!(format(&Doc::new("docker ps -a", &no_status)).is_none());
    }
}
