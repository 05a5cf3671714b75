//! The workspace tools: `sqz_read_file`, `sqz_grep` and `sqz_list_dir`. They never drop content:
//! a read is lossless apart from colour codes, and their saving comes only from references,
//! slice references and deltas on repeats. A size cap always says in the header what it cut.

use super::context::{bool_arg, count_arg, serve_whole, string_arg, Context, ToolOutput};
use super::pattern::Pattern;
use crate::clock;
use crate::engine::ansi;
use crate::fmt::bulk::skipped_in_walks;
use crate::json::Value;
use crate::serve::read::{self, Lossless, Notes, Shown};
use crate::text;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bytes a read returns unless `max_bytes` says otherwise.
const READ_CAP: u64 = 256 * 1024;
/// Files larger than this are not searched.
const GREP_MAX_FILE: u64 = 16 << 20;
const GREP_DEFAULT_MATCHES: u64 = 200;
/// A matched line longer than this is cut, with the count of characters not shown.
const GREP_LINE_CHARS: usize = 400;
const LIST_MAX_ENTRIES: usize = 2000;

pub fn read_file(ctx: &mut Context, args: &Value) -> Result<ToolOutput, String> {
    let path = string_arg(args, "path", true)?.unwrap_or_default();
    let offset = count_arg(args, "offset", u32::MAX as u64)?;
    let limit = count_arg(args, "limit", u32::MAX as u64)?;
    let max_bytes = count_arg(args, "max_bytes", u64::MAX)?.unwrap_or(READ_CAP) as usize;
    let real = ctx.workspace.resolve(&path)?;
    if real.is_dir() {
        return Err(format!("{path} is a directory; use sqz_list_dir"));
    }
    let ranged = offset.is_some() || limit.is_some();
    let first = offset.unwrap_or(1) as usize;
    let on_disk = std::fs::metadata(&real).map(|m| m.len()).unwrap_or(0);
    // A range of a large file is read line by line, holding only the lines asked for: a
    // `limit: 5` of a 300 MB log must not cost 300 MB. `base` lines come before those held.
    let streamed = ranged && on_disk > STREAM_FROM;
    let read = if streamed {
        let want = limit.map_or(usize::MAX, |n| n as usize);
        read_lines(&real, first, want, max_bytes)
    } else {
        read_regular(&real).map(|b| b.map(|bytes| (bytes, 0, None, false)))
    };
    let (bytes, base, counted, nul) = match read {
        Ok(Some(read)) => read,
        Ok(None) => {
            return Err(format!(
                "{path} is not a regular file (a FIFO, socket or device); not read"
            ))
        }
        Err(e) => return Err(format!("{path}: cannot read: {e}")),
    };
    let file_size = if streamed {
        on_disk as usize
    } else {
        bytes.len()
    };
    if nul || memchr::memchr(0, &bytes).is_some() {
        return Err(format!(
            "{path} is a binary file ({file_size} bytes); not shown"
        ));
    }
    let whole = std::str::from_utf8(&bytes).map_err(|_| {
        format!(
            "{path} is not UTF-8 text ({} bytes); not shown",
            bytes.len()
        )
    })?;
    let lines: Vec<&str> = whole.split_inclusive('\n').collect();
    let total = counted.unwrap_or(lines.len());
    if first > total.max(1) {
        return Err(format!(
            "offset {first} is past the end: {path} has {total} lines"
        ));
    }
    let wanted_last = match limit {
        Some(n) => (first - 1).saturating_add(n as usize).min(total),
        None => total,
    };
    // The cap cuts at a line break, unless one line alone is larger.
    let mut last = first.saturating_sub(1);
    let mut size = 0usize;
    while last < wanted_last
        && last - base < lines.len()
        && size + lines[last - base].len() <= max_bytes
    {
        size += lines[last - base].len();
        last += 1;
    }
    let selection_start: usize = lines[..first - 1 - base].iter().map(|l| l.len()).sum();
    let mut selection = &whole[selection_start..selection_start + size];
    let mut cut_note = String::new();
    if last < wanted_last {
        if last < first {
            selection = text::cut_at_char(&whole[selection_start..], max_bytes);
            cut_note = format!(
                " · cut at max_bytes={max_bytes}: line {first} is longer, only its first {} bytes shown",
                selection.len()
            );
        } else {
            cut_note = format!(
                " · cut at max_bytes={max_bytes}: lines {}-{wanted_last} not shown, read on with offset={}",
                last + 1,
                last + 1
            );
        }
    }
    let shown_last = last.max(first);
    let shown = ctx.workspace.display(&real);
    let mut header = if total == 0 {
        format!("[sqz_read_file path={shown} size={file_size} lines=0 of 0")
    } else {
        format!(
            "[sqz_read_file path={shown} size={file_size} lines={first}-{shown_last} of {total}"
        )
    };
    header.push_str(&cut_note);
    let body = ansi::strip(selection);
    let label = format!("sqz_read_file {shown}");
    let partial = ranged || !cut_note.is_empty();
    let path_key = real.to_string_lossy();
    let hash = text::hash16(selection.as_bytes());
    let notes = Notes {
        repeat: REPEAT_NOTE.into(),
        slice: SLICE_NOTE.into(),
        delta: delta_note(&hash),
    };
    let item = Lossless {
        label: &label,
        original: selection,
        body: &body,
        path_key: Some(&path_key),
        partial,
        // Only whole-file reads can be a delta's base, or get one.
        deltas: !partial,
        notes: &notes,
    };
    let (note, text_out) = match read::serve(ctx.store.as_mut(), &ctx.env, clock::now_ms(), &item) {
        Shown::Whole => (String::new(), body.into_owned()),
        Shown::Unstored => (String::new(), selection.to_string()),
        Shown::Repeat(token) => (notes.repeat, format!("{token}\n")),
        Shown::Slice(token) => (notes.slice, format!("{token}\n")),
        Shown::Delta(text) => (notes.delta, text),
    };
    Ok(ToolOutput::text(format!("{header}{note}]\n{text_out}")))
}

const REPEAT_NOTE: &str = " · unchanged since it was last read";
const SLICE_NOTE: &str = " · these lines were in an earlier read";

/// The header's note beside a delta.
fn delta_note(new_hash: &str) -> String {
    format!(
        " · changed since an earlier read; apply the delta to it (full text: expand {})",
        text::shown_hash(new_hash)
    )
}

/// What a walk left out, by reason, for the header.
#[derive(Default)]
struct Skipped {
    dirs: BTreeMap<&'static str, usize>,
    binary: usize,
    large: usize,
    outside: usize,
    unreadable: usize,
    /// FIFOs, sockets and devices: never opened for reading, which could block forever.
    special: usize,
}

impl Skipped {
    fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .dirs
            .iter()
            .map(|(name, n)| format!("{name} ({n} {})", if *n == 1 { "dir" } else { "dirs" }))
            .collect();
        let mut count = |n: usize, what: &str| {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        };
        count(self.binary, "binary or non-UTF-8 files");
        count(self.large, "files over 16 MiB");
        count(self.outside, "links leading outside the workspace");
        count(self.unreadable, "unreadable entries");
        count(self.special, "FIFOs, sockets or devices");
        if parts.is_empty() {
            String::new()
        } else {
            format!(" · skipped: {}", parts.join(", "))
        }
    }
}

/// A read as held: the bytes, the lines before them, the file's line count if counted, and
/// whether a NUL byte stood anywhere.
type Held = (Vec<u8>, usize, Option<usize>, bool);

/// Files larger than this are read line by line when a range of them is asked for.
const STREAM_FROM: u64 = 16 << 20;

/// Lines `first..first + want` of `path`, without holding the rest: their bytes (stopping
/// once past `max_bytes`, with the line that crossed it), how many lines come before them, the
/// file's line count, and whether a NUL byte stood anywhere. `None` if not a regular file.
fn read_lines(
    path: &Path,
    first: usize,
    want: usize,
    max_bytes: usize,
) -> std::io::Result<Option<Held>> {
    use std::io::BufRead;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, O_NONBLOCK);
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Ok(None);
    }
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let (mut kept, mut line, mut count, mut nul) = (Vec::new(), Vec::new(), 0usize, false);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        count += 1;
        nul |= memchr::memchr(0, &line).is_some();
        let wanted = count >= first && count - first < want;
        if wanted && kept.len() <= max_bytes {
            kept.extend_from_slice(&line);
        }
    }
    Ok(Some((
        kept,
        first.saturating_sub(1).min(count),
        Some(count),
        nul,
    )))
}

/// `O_NONBLOCK`, so that opening a FIFO with no writer returns at once.
#[cfg(any(target_os = "linux", target_os = "android"))]
const O_NONBLOCK: i32 = 0o4000;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const O_NONBLOCK: i32 = 0x0004;

/// The bytes of `path` if it is a regular file, `None` if it is a FIFO, socket or device. The
/// file is opened without blocking and its type checked on the open handle, so a FIFO put in
/// its place after a check cannot hang the server.
fn read_regular(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, O_NONBLOCK);
    let mut file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// One entry met by a walk.
struct Entry {
    path: PathBuf,
    depth: usize,
    is_dir: bool,
    link_target: Option<PathBuf>,
}

/// Walks `root` depth first in name order to `max_depth` levels, calling `visit` for each entry
/// before the entries inside it. Ignored directories are counted, not entered; symbolic links
/// are never followed into directories. `visit` returns false to stop the walk.
fn walk(
    ctx: &Context,
    root: &Path,
    max_depth: usize,
    skipped: &mut Skipped,
    visit: &mut dyn FnMut(&Entry, &mut Skipped) -> bool,
) {
    walk_dir(ctx, root, 1, max_depth, skipped, visit);
}

/// One directory of `walk`; false once `visit` asked to stop.
fn walk_dir(
    ctx: &Context,
    dir: &Path,
    depth: usize,
    max_depth: usize,
    skipped: &mut Skipped,
    visit: &mut dyn FnMut(&Entry, &mut Skipped) -> bool,
) -> bool {
    let Ok(read) = std::fs::read_dir(dir) else {
        skipped.unreadable += 1;
        return true;
    };
    let mut children: Vec<(std::ffi::OsString, std::fs::FileType)> = read
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name(), e.file_type().ok()?)))
        .collect();
    children.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in children {
        let path = dir.join(&name);
        if let (Some(ignored), true) = (skipped_in_walks(&name), kind.is_dir()) {
            *skipped.dirs.entry(ignored).or_default() += 1;
            continue;
        }
        let entry = Entry {
            link_target: kind
                .is_symlink()
                .then(|| std::fs::read_link(&path).unwrap_or_default()),
            path,
            depth,
            is_dir: kind.is_dir(),
        };
        if !visit(&entry, skipped) {
            return false;
        }
        if entry.is_dir
            && depth < max_depth
            && ctx.workspace.contains(&entry.path)
            && !walk_dir(ctx, &entry.path, depth + 1, max_depth, skipped, visit)
        {
            return false;
        }
    }
    true
}

pub fn grep(ctx: &mut Context, args: &Value) -> Result<ToolOutput, String> {
    let pattern_text = string_arg(args, "pattern", true)?.unwrap_or_default();
    let path = string_arg(args, "path", false)?.unwrap_or_else(|| ".".into());
    let regex = bool_arg(args, "regex")?;
    let ignore_case = bool_arg(args, "ignore_case")?;
    let max_matches =
        count_arg(args, "max_matches", 100_000)?.unwrap_or(GREP_DEFAULT_MATCHES) as usize;
    let pattern = Pattern::new(&pattern_text, regex, ignore_case)?;
    let root = ctx.workspace.resolve(&path)?;
    let mut skipped = Skipped::default();
    let mut shown = String::new();
    let (mut matches, mut files, mut hidden_matches, mut hidden_files) =
        (0usize, 0usize, 0usize, 0usize);
    let mut search = |file: &Path, skipped: &mut Skipped, ctx: &Context| {
        let Ok(meta) = std::fs::metadata(file) else {
            skipped.unreadable += 1;
            return;
        };
        if meta.len() > GREP_MAX_FILE {
            skipped.large += 1;
            return;
        }
        let bytes = match read_regular(file) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                skipped.special += 1;
                return;
            }
            Err(_) => {
                skipped.unreadable += 1;
                return;
            }
        };
        let Some(text) = std::str::from_utf8(&bytes)
            .ok()
            .filter(|_| memchr::memchr(0, &bytes).is_none())
        else {
            skipped.binary += 1;
            return;
        };
        let name = ctx.workspace.display(file);
        let mut found_here = 0;
        let mut hidden_here = 0;
        for (n, line) in text.lines().enumerate() {
            if !pattern.is_match(line) {
                continue;
            }
            found_here += 1;
            if matches + found_here > max_matches {
                hidden_here += 1;
                continue;
            }
            let kept = text::cut_at_char(line, GREP_LINE_CHARS);
            shown.push_str(&format!("{name}:{}:{kept}", n + 1));
            if kept.len() < line.len() {
                shown.push_str(&format!(
                    " …[{} more chars]",
                    line[kept.len()..].chars().count()
                ));
            }
            shown.push('\n');
        }
        if found_here > 0 {
            files += 1;
            if hidden_here > 0 {
                hidden_matches += hidden_here;
                hidden_files += 1;
            }
        }
        matches += found_here;
    };
    if root.is_file() {
        search(&root, &mut skipped, ctx);
    } else {
        walk(
            ctx,
            &root,
            usize::MAX,
            &mut skipped,
            &mut |entry, skipped| {
                if entry.is_dir {
                    return true;
                }
                if entry.link_target.is_some() {
                    match std::fs::canonicalize(&entry.path) {
                        Ok(real) if real.is_file() && ctx.workspace.contains(&real) => {}
                        Ok(real) if real.is_dir() => return true,
                        _ => {
                            skipped.outside += 1;
                            return true;
                        }
                    }
                }
                search(&entry.path, skipped, ctx);
                true
            },
        );
    }
    let mut out = format!(
        "[sqz_grep pattern={pattern_text:?} path={} matches={matches} files={files}{}]\n",
        ctx.workspace.display(&root),
        skipped.describe()
    );
    out.push_str(&shown);
    if hidden_matches > 0 {
        out.push_str(&format!(
            "[… {hidden_matches} more matches in {hidden_files} files not shown (max_matches={max_matches}) · narrow the path or pattern, or raise max_matches]\n"
        ));
    }
    let label = format!("sqz_grep {pattern_text} {path}");
    Ok(ToolOutput::text(serve_whole(ctx, &label, &out)))
}

pub fn list_dir(ctx: &mut Context, args: &Value) -> Result<ToolOutput, String> {
    let path = string_arg(args, "path", false)?.unwrap_or_else(|| ".".into());
    let depth = match count_arg(args, "depth", 16)? {
        Some(d) => d,
        None => count_arg(args, "max_depth", 16)?.unwrap_or(1),
    } as usize;
    let root = ctx.workspace.resolve(&path)?;
    if !root.is_dir() {
        return Err(format!("{path} is not a directory; use sqz_read_file"));
    }
    let mut skipped = Skipped::default();
    let mut lines = String::new();
    let (mut entries, mut hidden) = (0usize, 0usize);
    walk(ctx, &root, depth, &mut skipped, &mut |entry, _| {
        entries += 1;
        if entries > LIST_MAX_ENTRIES {
            hidden += 1;
            return true;
        }
        let name = entry
            .path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        lines.push_str(&"  ".repeat(entry.depth - 1));
        lines.push_str(&name);
        match &entry.link_target {
            Some(target) => lines.push_str(&format!(" -> {}", target.display())),
            None if entry.is_dir => lines.push('/'),
            None => {}
        }
        lines.push('\n');
        true
    });
    let mut out = format!(
        "[sqz_list_dir path={} depth={depth} entries={entries}{}]\n",
        ctx.workspace.display(&root),
        skipped.describe()
    );
    out.push_str(&lines);
    if hidden > 0 {
        out.push_str(&format!(
            "[… {hidden} more entries not shown (cap {LIST_MAX_ENTRIES}) · list a subdirectory or a smaller depth]\n"
        ));
    }
    let label = format!("sqz_list_dir {path} {depth}");
    Ok(ToolOutput::text(serve_whole(ctx, &label, &out)))
}
