//! The one list of bulk directories: trees that hold installed dependencies, build output,
//! caches or history rather than the project's own files. Listing formatters (find, du, grep,
//! git status) fold their contents into counted, recoverable markers; the MCP workspace walks
//! skip the few marked `skip_in_walks`, which are never where an agent's own files live.

pub struct Bulk {
    pub name: &'static str,
    /// Why its contents are noise to an agent.
    pub why: &'static str,
    /// Workspace walks (`sqz_grep`, `sqz_list_dir`) do not enter it at all. Only for trees that
    /// are never the project's own: skipping loses content, folding does not.
    pub skip_in_walks: bool,
}

const fn bulk(name: &'static str, why: &'static str, skip_in_walks: bool) -> Bulk {
    Bulk {
        name,
        why,
        skip_in_walks,
    }
}

pub const BULK: &[Bulk] = &[
    bulk(".git", "version control history", true),
    bulk("node_modules", "installed npm packages", true),
    bulk("target", "Cargo and Maven build output", true),
    bulk(".venv", "a Python virtual environment", true),
    bulk(
        "venv",
        "a Python virtual environment, by another common name",
        false,
    ),
    bulk("site-packages", "installed Python packages", false),
    bulk("vendor", "vendored dependencies (Go, PHP, Ruby)", false),
    bulk("bower_components", "installed Bower packages", false),
    bulk("build", "build output (many toolchains)", false),
    bulk("dist", "bundles and packages built for release", false),
    bulk("out", "build output (tsc, Next.js export, Gradle)", false),
    bulk(".next", "Next.js build output and cache", false),
    bulk(".nuxt", "Nuxt build output", false),
    bulk("coverage", "generated coverage reports", false),
    bulk("__pycache__", "compiled Python bytecode", false),
    bulk(".cache", "tool caches", false),
    bulk(".mypy_cache", "mypy's cache", false),
    bulk(".pytest_cache", "pytest's cache", false),
    bulk(".tox", "tox's virtual environments", false),
    bulk(".gradle", "Gradle's cache and build state", false),
];

/// Whether a path component names a bulk directory.
pub fn is_bulk(component: &str) -> bool {
    BULK.iter().any(|b| b.name == component)
}

/// The bulk directory a workspace walk skips, by its name.
pub fn skipped_in_walks(name: &std::ffi::OsStr) -> Option<&'static str> {
    BULK.iter()
        .find(|b| b.skip_in_walks && name == b.name)
        .map(|b| b.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_named_once_and_explained() {
        for (i, b) in BULK.iter().enumerate() {
            assert!(!b.why.is_empty(), "{}", b.name);
            assert!(BULK[i + 1..].iter().all(|o| o.name != b.name), "{}", b.name);
        }
        assert!(is_bulk("node_modules") && !is_bulk("src"));
        assert_eq!(skipped_in_walks("target".as_ref()), Some("target"));
        assert_eq!(skipped_in_walks("dist".as_ref()), None);
    }
}
