//! The reversible change plan: what applying or undoing one change would make of its file,
//! and carrying that out (or, for a dry run, describing it).

use super::clients::{changes, marker_dirs, Scope, CLIENTS};
use super::edit::{find_block, pretty, with_block, without_block, Change};
use crate::error::{Error, Result};
use crate::json::{self, Value};
use std::path::{Path, PathBuf};

/// After a removal: drops the directories left empty, up to the scope's root and never a
/// client's own config directory (its presence is how clients are found).
fn remove_empty_parents(path: &Path, scope: &Scope) {
    let markers: Vec<PathBuf> = CLIENTS
        .iter()
        .flat_map(|c| marker_dirs(c).iter().map(|d| scope.home.join(d)))
        .collect();
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == scope.base || d == scope.home || markers.iter().any(|m| m == d) {
            break;
        }
        if !(d.starts_with(&scope.base) || d.starts_with(&scope.home)) {
            break;
        }
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// What applying one change would make of its file.
pub enum Outcome {
    Same,
    Write(String),
    Delete,
    /// Left alone; the reason and a snippet to paste.
    Manual(String),
}

/// The file's text, `None` when it does not exist.
pub fn read(path: &Path) -> std::result::Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// What installing (or with `install` false, undoing) `change` would make of its file.
pub fn plan(change: &Change, install: bool) -> std::result::Result<Outcome, String> {
    let current = read(change.path())?;
    match change {
        Change::Json { add, remove, .. } => {
            let text = current.unwrap_or_default();
            let mut doc = if text.trim().is_empty() {
                Value::object()
            } else {
                match json::parse(&text) {
                    Ok(doc) if doc.as_object().is_some() => doc,
                    Ok(_) => {
                        return Ok(manual(
                            change,
                            install,
                            "the top level is not a JSON object",
                        ))
                    }
                    Err(e) => return Ok(manual(change, install, &format!("not plain JSON ({e})"))),
                }
            };
            if install {
                if let Err(why) = add(&mut doc) {
                    return Ok(manual(change, install, &why));
                }
                let out = pretty(&doc);
                if text.trim().is_empty() || json::parse(&text).ok().as_ref() != Some(&doc) {
                    return Ok(Outcome::Write(out));
                }
                Ok(Outcome::Same)
            } else if remove(&mut doc) {
                if doc.as_object().is_some_and(|o| o.is_empty()) {
                    Ok(Outcome::Delete)
                } else {
                    Ok(Outcome::Write(pretty(&doc)))
                }
            } else {
                Ok(Outcome::Same)
            }
        }
        Change::Block {
            begin, end, body, ..
        } => {
            let text = current.unwrap_or_default();
            if install {
                let first = body.lines().next().unwrap_or("");
                // TOML forbids a table defined twice: one already there outside the markers
                // (the user's own, or Codex's trust written by Codex) is left alone.
                if change.path().extension().is_some_and(|e| e == "toml")
                    && find_block(&text, begin, end).is_none()
                    && text.lines().any(|l| l.trim() == first)
                {
                    return Ok(Outcome::Manual(format!(
                        "{} already has {first} outside sqz's markers; left alone",
                        change.path().display()
                    )));
                }
                let out = with_block(&text, begin, end, body);
                Ok(if out == text {
                    Outcome::Same
                } else {
                    Outcome::Write(out)
                })
            } else {
                match without_block(&text, begin, end) {
                    Some(out) if out.trim().is_empty() => Ok(Outcome::Delete),
                    Some(out) => Ok(Outcome::Write(out)),
                    None => Ok(Outcome::Same),
                }
            }
        }
        Change::Owned { text, marker, .. } => match (install, current) {
            (true, Some(cur)) if cur == *text => Ok(Outcome::Same),
            (true, Some(cur)) if !cur.contains(marker) => Ok(Outcome::Manual(format!(
                "{} exists and was not written by sqz; left alone",
                change.path().display()
            ))),
            (true, _) => Ok(Outcome::Write(text.clone())),
            (false, Some(cur)) if cur.contains(marker) => Ok(Outcome::Delete),
            (false, _) => Ok(Outcome::Same),
        },
    }
}

fn manual(change: &Change, install: bool, why: &str) -> Outcome {
    let Change::Json { add, .. } = change else {
        return Outcome::Manual(why.to_string());
    };
    let path = change.path().display();
    if !install {
        return Outcome::Manual(format!(
            "{path}: {why}; left alone: remove the sqz entries by hand"
        ));
    }
    let mut snippet = Value::object();
    let _ = add(&mut snippet);
    Outcome::Manual(format!(
        "{path}: {why}; left alone. Merge this into it:\n{}",
        pretty(&snippet)
    ))
}

/// Writes through a temporary file in the same directory, then renames over the target.
/// A symlinked config (dotfile managers) is written through to its target, and an existing
/// file keeps its permissions: `~/.claude.json` holds credentials.
fn write_atomic(path: &Path, text: &str) -> std::result::Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let tmp = target.with_file_name(format!(".{name}.sqz-{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, text).and_then(|()| match std::fs::metadata(&target) {
        Ok(meta) => std::fs::set_permissions(&tmp, meta.permissions()),
        Err(_) => Ok(()),
    });
    written
        .and_then(|()| std::fs::rename(&tmp, &target))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            fail(e)
        })
}

/// What `apply` did: the lines to show, the files it could not read, write or remove (one
/// line each), and the exit status of what it did write.
pub struct Report {
    pub text: String,
    pub errors: Vec<String>,
    /// 0, or 1 when a file was left alone for the user to edit.
    pub status: u8,
}

impl Report {
    /// The command's result once `text` is shown: a failed file is an error (exit 1).
    pub fn result(&self) -> Result<u8> {
        if self.errors.is_empty() {
            Ok(self.status)
        } else {
            Err(Error::failed(self.errors.join("; ")))
        }
    }
}

/// Applies (or with `dry_run` only describes) every change for `clients`: installs them, or
/// with `install` false undoes them.
pub fn apply(clients: &[&str], scope: &Scope, install: bool, dry_run: bool) -> Report {
    let mut status = 0;
    let mut errors = Vec::new();
    let mut out = String::new();
    for client in clients {
        let list = changes(client, scope);
        if list.is_empty() {
            out.push_str(&format!("{client:<9} nothing to write in this scope\n"));
        }
        if install && *client == "codex" && !scope.global {
            if let Some(note) = super::codex::untrusted_project(&scope.codex_home, &scope.base) {
                out.push_str(&format!("{client:<9} {note}\n"));
            }
        }
        for change in &list {
            let path = change.path();
            let shown = path.display();
            match plan(change, install) {
                Err(e) => errors.push(format!("{client}: {e}")),
                Ok(Outcome::Same) if install || path.exists() => {
                    out.push_str(&format!("{client:<9} unchanged {shown}\n"))
                }
                Ok(Outcome::Same) => {}
                Ok(Outcome::Manual(msg)) => {
                    out.push_str(&format!("{client:<9} {msg}\n"));
                    status = status.max(1);
                }
                Ok(Outcome::Write(text)) if dry_run => {
                    out.push_str(&format!("{client:<9} would write {shown}:\n{text}"));
                    if !text.ends_with('\n') {
                        out.push('\n');
                    }
                }
                Ok(Outcome::Delete) if dry_run => {
                    out.push_str(&format!("{client:<9} would remove {shown}\n"))
                }
                Ok(Outcome::Write(text)) => match write_atomic(path, &text) {
                    Ok(()) => out.push_str(&format!("{client:<9} wrote {shown}\n")),
                    Err(e) => errors.push(format!("{client}: {e}")),
                },
                Ok(Outcome::Delete) => match std::fs::remove_file(path) {
                    Ok(()) => {
                        remove_empty_parents(path, scope);
                        out.push_str(&format!("{client:<9} removed {shown}\n"))
                    }
                    Err(e) => errors.push(format!("{client}: cannot remove {shown}: {e}")),
                },
            }
        }
    }
    if clients.is_empty() {
        out.push_str("no agent found under HOME (name one with --only CLIENT)\n");
    }
    Report {
        text: out,
        errors,
        status,
    }
}
