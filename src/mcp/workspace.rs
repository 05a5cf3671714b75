//! The workspace roots the file tools may read: the server's working directory, the client's MCP
//! roots and any `--allow PATH`. Paths are resolved (symlinks included) before the check, so a
//! link that points outside is refused like the path it points to.

use std::path::{Component, Path, PathBuf};

pub struct Workspace {
    /// The server's working directory: relative paths start here.
    cwd: PathBuf,
    /// Canonical roots from the working directory and `--allow`.
    fixed: Vec<PathBuf>,
    /// Canonical roots the client announced with `roots/list`.
    client: Vec<PathBuf>,
}

impl Workspace {
    pub fn new(cwd: PathBuf, allow: &[PathBuf]) -> Workspace {
        let fixed = std::iter::once(&cwd)
            .chain(allow)
            .filter_map(|p| std::fs::canonicalize(cwd.join(p)).ok())
            .collect();
        Workspace {
            cwd,
            fixed,
            client: Vec::new(),
        }
    }

    /// Replaces the client's roots with the `file://` URIs of a `roots/list` answer; other
    /// schemes and roots that do not exist here are ignored.
    pub fn set_client_roots<'a>(&mut self, uris: impl IntoIterator<Item = &'a str>) {
        self.client = uris
            .into_iter()
            .filter_map(file_uri_path)
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
    }

    pub fn client_roots(&self) -> usize {
        self.client.len()
    }

    /// The canonical path for `path` (relative to the working directory), if it exists and lies
    /// inside a root; otherwise a one-line reason for the agent.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        if path.is_empty() {
            return Err("empty path".into());
        }
        let joined = self.cwd.join(path);
        let real = std::fs::canonicalize(&joined).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("{path}: no such file or directory"),
            std::io::ErrorKind::PermissionDenied => format!("{path}: permission denied"),
            _ => format!("{path}: {e}"),
        })?;
        if self.contains(&real) {
            Ok(real)
        } else {
            Err(format!(
                "{path} resolves to {}, outside the workspace roots ({}); start the server with --allow PATH to permit it",
                real.display(),
                self.describe()
            ))
        }
    }

    /// Whether a canonical path lies inside a root.
    pub fn contains(&self, real: &Path) -> bool {
        self.fixed
            .iter()
            .chain(&self.client)
            .any(|root| real.starts_with(root))
    }

    /// How a path under the working directory is shown: relative when inside it.
    pub fn display(&self, real: &Path) -> String {
        let cwd = std::fs::canonicalize(&self.cwd).unwrap_or_else(|_| self.cwd.clone());
        match real.strip_prefix(&cwd) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => real.display().to_string(),
        }
    }

    fn describe(&self) -> String {
        let all: Vec<String> = self
            .fixed
            .iter()
            .chain(&self.client)
            .map(|p| p.display().to_string())
            .collect();
        all.join(", ")
    }
}

/// The local path of a `file://` URI, percent-decoded; `None` for other schemes or hosts.
pub fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let mut bytes = Vec::with_capacity(rest.len());
    let raw = rest.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            let hex = std::str::from_utf8(raw.get(i + 1..i + 3)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            bytes.push(raw[i]);
            i += 1;
        }
    }
    let text = String::from_utf8(bytes).ok()?;
    let path = PathBuf::from(text);
    // A root is a directory named plainly: no `..` tricks.
    path.components()
        .all(|c| !matches!(c, Component::ParentDir))
        .then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris() {
        assert_eq!(
            file_uri_path("file:///home/dev/my%20project"),
            Some(PathBuf::from("/home/dev/my project"))
        );
        assert_eq!(
            file_uri_path("file://localhost/srv"),
            Some(PathBuf::from("/srv"))
        );
        assert_eq!(file_uri_path("https://example.com/x"), None);
        assert_eq!(file_uri_path("file:///a/../etc"), None);
        assert_eq!(file_uri_path("file:///a%zz"), None);
    }

    #[test]
    fn refuses_paths_outside_and_links_that_lead_outside() {
        let dir = std::env::temp_dir().join(format!("sqz-ws-{}", std::process::id()));
        let inside = dir.join("project");
        std::fs::create_dir_all(inside.join("src")).unwrap();
        std::fs::write(inside.join("src/a.txt"), "a").unwrap();
        std::fs::write(dir.join("secret.txt"), "s").unwrap();
        let _ = std::fs::remove_file(inside.join("link"));
        std::os::unix::fs::symlink(dir.join("secret.txt"), inside.join("link")).unwrap();
        let ws = Workspace::new(inside.clone(), &[]);
        assert!(ws.resolve("src/a.txt").is_ok());
        assert!(ws.resolve("../secret.txt").unwrap_err().contains("outside"));
        assert!(ws.resolve("link").unwrap_err().contains("outside"));
        assert!(ws.resolve("missing").unwrap_err().contains("no such file"));
        let ws = Workspace::new(inside, &[dir.join("secret.txt")]);
        assert!(ws.resolve("link").is_ok());
        let _ = std::fs::remove_dir_all(dir);
    }
}
