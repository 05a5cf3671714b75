//! grep over a lock file (`grep -n '"resolved"' package-lock.json`, `grep -A2 '^name = '
//! Cargo.lock`): the matches are entries of one shape — a key and a value per line, a few lines
//! per entry between grep's `--` separators. They become one row per entry that keeps what
//! identifies it (the line number, each value that varies), with the parts every entry shares
//! said once above the rows: a key that has one value in every entry, and the text every
//! value of a key begins or ends with (`https://registry.npmjs.org/…` and `….tgz`). The
//! original lines fold under one marker. Output of any other shape is left alone.

use crate::doc::facts::reports_failure;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

/// Fewer entries than this stay as grep printed them: the header would not pay.
const MIN_ENTRIES: usize = 8;
/// Shared heads and tails shorter than this are not worth saying apart.
const MIN_AFFIX: usize = 4;

/// Lock files by name, as the last part of a path.
const LOCK_FILES: [&str; 16] = [
    "Cargo.lock",
    "Gemfile.lock",
    "Package.resolved",
    "Pipfile.lock",
    "bun.lock",
    "composer.lock",
    "flake.lock",
    "go.sum",
    "mix.lock",
    "npm-shrinkwrap.json",
    "package-lock.json",
    "packages.lock.json",
    "pnpm-lock.yaml",
    "poetry.lock",
    "uv.lock",
    "yarn.lock",
];

pub fn matches(label: &Label) -> bool {
    matches!(label.program, "grep" | "egrep" | "fgrep" | "rg")
        && !label.piped
        && label.args.iter().any(|a| {
            let name = a.rsplit('/').next().unwrap_or(a);
            LOCK_FILES.contains(&name)
        })
}

/// One matched or context line: its line number (grep -n) and its key and value.
struct Field<'a> {
    number: Option<&'a str>,
    key: &'a str,
    value: &'a str,
}

/// `22:      "resolved": "https://…",` · `5-version = "5.4.2"` · `  integrity sha512-…` ·
/// `    version: 1.2.3`: the line number grep put first, then one key and its value. The value
/// loses its quotes and a JSON comma.
fn field(line: &str, numbered: bool) -> Option<Field<'_>> {
    let (number, rest) = if numbered {
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        let sep = line.as_bytes().get(digits)?;
        if digits == 0 || !matches!(sep, b':' | b'-') {
            return None;
        }
        (Some(&line[..digits]), &line[digits + 1..])
    } else {
        (None, line)
    };
    let t = rest.trim();
    let (key, value) = if let Some(quoted) = t.strip_prefix('"') {
        // JSON: `"key": value`
        let (key, after) = quoted.split_once('"')?;
        (key, after.strip_prefix(':')?)
    } else if let Some((key, value)) = t.split_once(" = ") {
        (key, value)
    } else if let Some((key, value)) = t.split_once(": ") {
        (key, value)
    } else {
        t.split_once(' ')?
    };
    let key = key.trim();
    let value = value.trim().trim_end_matches(',');
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    let plain_key = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'@' | b'/'));
    (plain_key && !value.is_empty()).then_some(Field { number, key, value })
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let lines = &doc.lines;
    let content = |l: &&&str| **l != "--" && !l.is_empty();
    if lines.iter().any(|l| reports_failure(l)) {
        return None;
    }
    let numbered = lines.iter().filter(content).all(|l| {
        let digits = l.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && matches!(l.as_bytes().get(digits), Some(b':' | b'-'))
    });
    // Entries: the lines between `--` separators, or each line alone when there are none.
    let separated = lines.contains(&"--");
    let mut entries: Vec<Entry> = Vec::new();
    let mut current = Entry::default();
    for (n, line) in lines.iter().enumerate() {
        if *line == "--" || line.is_empty() {
            if !current.fields.is_empty() {
                entries.push(std::mem::take(&mut current));
            }
            continue;
        }
        current.fields.push(field(line, numbered)?);
        current.lines.push(n);
        if !separated {
            entries.push(std::mem::take(&mut current));
        }
    }
    if !current.fields.is_empty() {
        entries.push(current);
    }
    // The shape most entries share (the same keys in the same order) becomes the rows; an
    // entry of another shape (the project's own crate, with its dependencies) stays as it is.
    fn key_list<'a>(e: &Entry<'a>) -> Vec<&'a str> {
        e.fields.iter().map(|f| f.key).collect()
    }
    let mut shapes: Vec<(Vec<&str>, usize)> = Vec::new();
    for entry in &entries {
        let keys = key_list(entry);
        match shapes.iter_mut().find(|(k, _)| *k == keys) {
            Some((_, count)) => *count += 1,
            None => shapes.push((keys, 1)),
        }
    }
    let (keys, count) = shapes.into_iter().max_by_key(|(_, c)| *c)?;
    if count < MIN_ENTRIES || count * 10 < entries.len() * 9 {
        return None;
    }
    // Whether each entry has that shape, decided once.
    let fits: Vec<bool> = entries.iter().map(|e| key_list(e) == keys).collect();
    let rows: Vec<&Entry> = entries
        .iter()
        .zip(&fits)
        .filter_map(|(e, &fit)| fit.then_some(e))
        .collect();
    let columns: Vec<Column> = (0..keys.len())
        .map(|c| Column::of(keys[c], rows.iter().map(|e| e.fields[c].value).collect()))
        .collect();
    let mut shared = Vec::new();
    let mut shown = Vec::new();
    for column in &columns {
        match column {
            Column::Same { key, value } => shared.push(format!("{key} = \"{value}\"")),
            Column::Varies {
                key,
                head,
                tail,
                shape,
                ..
            } => shown.push(if head.is_empty() && tail.is_empty() && *shape == "…" {
                key.to_string()
            } else {
                format!("{key} = \"{head}{shape}{tail}\"")
            }),
        }
    }
    if shown.is_empty() {
        return None;
    }
    let what = if numbered { "line number, " } else { "" };
    let mut head = format!(
        "{} entries, one per row below: {what}{}",
        rows.len(),
        shown.join(", ")
    );
    if !shared.is_empty() {
        head.push_str(&format!("; in every entry: {}", shared.join(", ")));
    }
    // Separators and the row entries' lines fold; the other entries' lines stay in place.
    let mut odd = vec![false; lines.len()];
    for (entry, _) in entries.iter().zip(&fits).filter(|(_, &fit)| !fit) {
        for &n in &entry.lines {
            odd[n] = true;
        }
    }
    let mut pieces = vec![
        Piece::Fold {
            lines: (0..lines.len()).filter(|&n| !odd[n]).collect(),
            what: "lock file match".to_string(),
        },
        Piece::Summary(head),
    ];
    let mut row = 0;
    for (entry, &fit) in entries.iter().zip(&fits) {
        if !fit {
            pieces.extend(entry.lines.iter().map(|&n| Piece::Keep(n)));
            continue;
        }
        let mut cells: Vec<&str> = Vec::new();
        if let Some(number) = entry.fields[0].number {
            cells.push(number);
        }
        for column in &columns {
            if let Column::Varies { middles, .. } = column {
                cells.push(&middles[row]);
            }
        }
        pieces.push(Piece::Summary(cells.join(" ")));
        row += 1;
    }
    Some(pieces)
}

/// The fields of one entry and the lines they came from.
#[derive(Default)]
struct Entry<'a> {
    fields: Vec<Field<'a>>,
    lines: Vec<usize>,
}

/// `@babel/core/-/core-7.29.16` as `@babel/core 7.29.16`, when it is an npm tarball path.
fn npm_tarball(middle: &str) -> Option<String> {
    let (name, file) = middle.split_once("/-/")?;
    let base = name.rsplit('/').next()?;
    let version = file.strip_prefix(base)?.strip_prefix('-')?;
    let plain = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace);
    (plain(name) && plain(version)).then(|| format!("{name} {version}"))
}

/// What the entries hold under one key.
enum Column<'a> {
    /// One value in every entry.
    Same { key: &'a str, value: &'a str },
    /// Values that differ: what every one begins and ends with, and what is left of each.
    Varies {
        key: &'a str,
        head: &'a str,
        tail: &'a str,
        /// How the rows show the middle of each value: `…` as it is, or the parts it is made of.
        shape: &'static str,
        middles: Vec<String>,
    },
}

impl<'a> Column<'a> {
    fn of(key: &'a str, values: Vec<&'a str>) -> Column<'a> {
        if values.iter().all(|v| *v == values[0]) {
            return Column::Same {
                key,
                value: values[0],
            };
        }
        let shortest = values.iter().map(|v| v.len()).min().unwrap_or(0);
        let first = values[0].as_bytes();
        let mut head = (0..shortest)
            .take_while(|&i| values.iter().all(|v| v.as_bytes()[i] == first[i]))
            .count();
        // A value's middle must not be empty, and must not break a character or a word apart
        // from a separator: the head ends after `/`, `-`, `.` or `:` so names read whole.
        while head > 0 && !matches!(first[head - 1], b'/' | b'-' | b'.' | b':' | b'+' | b'@') {
            head -= 1;
        }
        let room = shortest - head;
        let mut tail = (0..room.saturating_sub(1))
            .take_while(|&i| {
                let at = |v: &str| v.as_bytes()[v.len() - 1 - i];
                values.iter().all(|v| at(v) == at(values[0]))
            })
            .count();
        while tail > 0 && !matches!(first[first.len() - tail], b'.' | b'/' | b'#' | b'"') {
            tail -= 1;
        }
        if head < MIN_AFFIX {
            head = 0;
        }
        if tail < MIN_AFFIX {
            tail = 0;
        }
        let whole = |v: &&str| v.is_char_boundary(head) && v.is_char_boundary(v.len() - tail);
        if !values.iter().all(whole) {
            head = 0;
            tail = 0;
        }
        let v0 = values[0];
        let middles: Vec<&str> = values.iter().map(|v| &v[head..v.len() - tail]).collect();
        // An npm tarball names its package twice (`@babel/core/-/core-7.29.16`): the rows
        // give the name and the version once each.
        let tarballs: Option<Vec<String>> = middles.iter().map(|m| npm_tarball(m)).collect();
        let (shape, middles) = match tarballs {
            Some(rows) => ("NAME/-/NAME-VERSION", rows),
            None => ("…", middles.iter().map(|m| m.to_string()).collect()),
        };
        Column::Varies {
            key,
            head: &v0[..head],
            tail: &v0[v0.len() - tail..],
            shape,
            middles,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    fn run(label: &str, text: &str) -> Option<String> {
        assert!(matches(&Label::parse(label)), "{label}");
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    #[test]
    fn labels() {
        for label in [
            "grep -n '\"resolved\"' package-lock.json",
            "grep -A2 '^name = ' Cargo.lock",
            "rg version app/poetry.lock",
        ] {
            assert!(matches(&Label::parse(label)), "{label}");
        }
        for label in [
            "grep -n resolved notes.txt",
            "grep x Cargo.lock | head",
            "cat Cargo.lock",
        ] {
            assert!(!matches(&Label::parse(label)), "{label}");
        }
    }

    #[test]
    fn npm_resolved_lines_keep_each_package_and_say_the_registry_once() {
        let mut text = String::new();
        for (n, (name, v)) in [
            ("accepts", "1.3.8"),
            ("array-flatten", "1.1.1"),
            ("body-parser", "1.20.3"),
            ("bytes", "3.1.2"),
            ("call-bind", "1.0.8"),
            ("content-type", "1.0.5"),
            ("cookie", "0.7.1"),
            ("debug", "2.6.9"),
        ]
        .iter()
        .enumerate()
        {
            text.push_str(&format!(
                "{}:      \"resolved\": \"https://registry.npmjs.org/{name}/-/{name}-{v}.tgz\",\n",
                10 * n + 7
            ));
        }
        let out = run("grep -n '\"resolved\"' package-lock.json", &text).unwrap();
        assert!(out.starts_with("[… 8 lock file match lines · sqz expand h:L1-8]\n8 entries, one per row below: line number, resolved = \"https://registry.npmjs.org/NAME/-/NAME-VERSION.tgz\"\n7 accepts 1.3.8\n17 array-flatten 1.1.1\n"), "{out}");
        assert!(out.ends_with("77 debug 2.6.9\n"), "{out}");
    }

    #[test]
    fn cargo_entries_become_rows_and_the_shared_source_is_said_once() {
        let mut text = String::new();
        for (name, v) in [
            ("anstream", "1.0.0"),
            ("anstyle", "1.0.14"),
            ("anyhow", "1.0.102"),
            ("bytes", "1.11.1"),
            ("clap", "4.6.1"),
            ("libc", "0.2.186"),
            ("serde", "1.0.228"),
            ("tokio", "1.52.3"),
        ] {
            if !text.is_empty() {
                text.push_str("--\n");
            }
            text.push_str(&format!("name = \"{name}\"\nversion = \"{v}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"));
        }
        let out = run("grep -A2 '^name = ' Cargo.lock", &text).unwrap();
        assert!(out.contains("\n8 entries, one per row below: name, version; in every entry: source = \"registry+https://github.com/rust-lang/crates.io-index\"\nanstream 1.0.0\nanstyle 1.0.14\n"), "{out}");
        assert!(out.ends_with("tokio 1.52.3\n"), "{out}");
    }

    #[test]
    fn other_shapes_are_left_alone() {
        // Entries of two shapes in equal numbers, too few entries, an error line.
        let mixed =
            "name = \"a\"\nversion = \"1\"\n--\nname = \"b\"\nchecksum = \"x\"\n--\n".repeat(5);
        assert_eq!(run("grep -A1 name Cargo.lock", &mixed), None);
        assert_eq!(
            run("grep -n x package-lock.json", "3:  \"a\": \"1\",\n"),
            None
        );
        let failing = "grep: package-lock.json: No such file or directory\n";
        assert_eq!(run("grep -n x package-lock.json", failing), None);
    }
}
