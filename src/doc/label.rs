//! The command label: the one parser every stage uses to read what command printed an output.
//! A label is split into the program (basename) and its arguments, with leading `VAR=value`
//! assignments and wrappers such as `sudo`, `time` and `env` skipped. Only the first command
//! of a pipeline or list is looked at.

/// Wrappers that run the next word as the command.
const WRAPPERS: &[&str] = &["sudo", "time", "env", "command", "exec", "nice"];

/// Programs that print a file the agent may edit next (`cat FILE`, `sed -n '41,80p' FILE`, …).
const FILE_READERS: &[&str] = &[
    "cat", "head", "tail", "bat", "batcat", "less", "more", "nl", "sed", "awk",
];

pub struct Label<'a> {
    pub program: &'a str,
    pub args: Vec<&'a str>,
    /// The label pipes one command into another: its output is not the first command's.
    pub piped: bool,
}

impl<'a> Label<'a> {
    pub fn parse(label: &'a str) -> Label<'a> {
        let first = label.split(['|', ';', '&']).next().unwrap_or("");
        let mut words = first.split_ascii_whitespace().peekable();
        while let Some(w) = words.peek() {
            let assignment = w.contains('=') && !w.starts_with('-') && !w.starts_with('=');
            if assignment || WRAPPERS.contains(w) {
                words.next();
            } else {
                break;
            }
        }
        let program = words
            .next()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .unwrap_or("");
        Label {
            program,
            args: words.collect(),
            piped: label.contains('|'),
        }
    }

    /// The first argument that is not a flag nor a global flag's value: the subcommand for
    /// git, cargo, npm, … (`git -C repo status` → `status`).
    pub fn subcommand(&self) -> Option<&'a str> {
        const TAKES_VALUE: [&str; 5] = ["-C", "-c", "--git-dir", "--work-tree", "--prefix"];
        let mut args = self.args.iter().copied();
        while let Some(arg) = args.next() {
            if TAKES_VALUE.contains(&arg) {
                args.next();
            } else if !arg.starts_with('-') {
                return Some(arg);
            }
        }
        None
    }

    /// The file a `cat FILE`-like command reads, unpiped, as written (quotes trimmed): its
    /// output is that file's text, which the agent may edit and read again.
    pub fn file_read(&self) -> Option<&'a str> {
        if self.piped || !FILE_READERS.contains(&self.program) {
            return None;
        }
        self.args
            .iter()
            .rfind(|w| !w.starts_with('-') && w.contains('.'))
            .map(|w| w.trim_matches(|c| c == '\'' || c == '"'))
    }

    /// Whether the command prints a file (see `file_read`).
    pub fn reads_file(&self) -> bool {
        self.file_read().is_some()
    }
}

/// Programs whose first argument names what they do (`git status`, `cargo test`): their family
/// is the program and that subcommand.
const SUBCOMMAND_TOOLS: &[&str] = &[
    "apt",
    "apt-get",
    "brew",
    "bun",
    "bundle",
    "cargo",
    "composer",
    "deno",
    "docker",
    "dotnet",
    "gh",
    "git",
    "go",
    "gradle",
    "gradlew",
    "helm",
    "kubectl",
    "mix",
    "mvn",
    "mvnw",
    "npm",
    "pip",
    "pip3",
    "pnpm",
    "podman",
    "poetry",
    "rails",
    "rustup",
    "terraform",
    "uv",
    "yarn",
];

/// Runners whose argument is the program that really runs (`npx vitest`, `uv run pytest`,
/// `python -m pytest`), with the words that come before it.
const RUNNERS: &[(&str, &[&str])] = &[
    ("npx", &[]),
    ("bunx", &[]),
    ("pnpx", &[]),
    ("uvx", &[]),
    ("pnpm", &["exec", "dlx"]),
    ("uv", &["run"]),
    ("poetry", &["run"]),
    ("bundle", &["exec"]),
    ("python", &["-m"]),
    ("python3", &["-m"]),
];

impl Label<'_> {
    /// The command family the reports group by: the program, and for tools with subcommands
    /// the subcommand (`cargo test`, `git status`, `docker compose`, `npm run build`), seen
    /// through runners (`npx vitest` is `vitest`). No argument but a subcommand is kept, and
    /// only when it is a short lower-case word, so file names and values stay out of reports.
    pub fn family(&self) -> String {
        let mut program = self.program;
        let mut args: &[&str] = &self.args;
        for (runner, before) in RUNNERS {
            if program != *runner {
                continue;
            }
            let skip = if before.is_empty() {
                usize::from(args.first().is_some_and(|a| a.starts_with('-')))
            } else if args.first().is_some_and(|a| before.contains(a)) {
                1
            } else {
                continue;
            };
            if let Some(next) = args.get(skip) {
                program = next.rsplit('/').next().unwrap_or(next);
                args = &args[skip + 1..];
            }
            break;
        }
        if program.is_empty() {
            return "stdin".to_string();
        }
        let program = program.trim_start_matches("./");
        if !SUBCOMMAND_TOOLS.contains(&program) {
            return program.to_string();
        }
        let sub = Label {
            program,
            args: args.to_vec(),
            piped: false,
        }
        .subcommand();
        // A subcommand is a short lower-case word; anything else (a flag's value, a token) is
        // left out.
        let plain = |w: &&str| {
            w.len() <= 24
                && w.bytes().filter(u8::is_ascii_digit).count() <= 2
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_:".contains(&b))
        };
        match sub.filter(plain) {
            // `npm run build`: the script names what runs.
            Some("run") if matches!(program, "npm" | "pnpm" | "yarn" | "bun") => {
                let script = args
                    .iter()
                    .copied()
                    .skip_while(|a| *a != "run")
                    .nth(1)
                    .filter(plain);
                match script {
                    Some(script) => format!("{program} run {script}"),
                    None => format!("{program} run"),
                }
            }
            Some(sub) => format!("{program} {sub}"),
            None => program.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Label;

    #[test]
    fn families_name_the_program_and_its_subcommand_and_nothing_else() {
        let family = |label: &str| Label::parse(label).family();
        assert_eq!(
            family("cargo test --workspace 2>&1 | tail -30"),
            "cargo test"
        );
        assert_eq!(family("git -C repo status --short"), "git status");
        assert_eq!(family("RUST_LOG=debug sudo cargo build"), "cargo build");
        assert_eq!(family("npx vitest run"), "vitest");
        assert_eq!(family("npx -y prettier --check ."), "prettier");
        assert_eq!(family("python -m pytest -q"), "pytest");
        assert_eq!(family("uv run pytest tests/"), "pytest");
        assert_eq!(family("npm run build -- --mode prod"), "npm run build");
        assert_eq!(family("docker compose logs api"), "docker compose");
        assert_eq!(family("./gradlew build"), "gradlew build");
        assert_eq!(family("mix test test/foo_test.exs:12"), "mix test");
        assert_eq!(family("cat -n /home/dev/app/lib/app.ex"), "cat");
        assert_eq!(family("Read /home/dev/app/lib/app.ex"), "Read");
        assert_eq!(family("/usr/bin/ls -la"), "ls");
        assert_eq!(family(""), "stdin");
        // A value never becomes part of the family.
        assert_eq!(
            family("curl -H 'Authorization: Bearer abc' https://x"),
            "curl"
        );
        assert_eq!(family("git push https://user:pw@host/repo"), "git push");
        assert_eq!(family("kubectl --token=abc get pods"), "kubectl get");
        assert_eq!(family("gh --token Zx81kQ2mPq7 pr view"), "gh");
    }

    #[test]
    fn wrappers_and_assignments_are_skipped() {
        let l = Label::parse("RUST_LOG=debug sudo /usr/bin/cargo test --workspace | tail");
        assert_eq!(l.program, "cargo");
        assert_eq!(l.subcommand(), Some("test"));
        assert!(l.piped);
    }

    #[test]
    fn file_reads_agree_for_every_caller() {
        let read = |label: &str| Label::parse(label).file_read().map(str::to_string);
        assert_eq!(
            read("sed -n '41,80p' src/lib.rs").as_deref(),
            Some("src/lib.rs")
        );
        assert_eq!(read("head -50 src/lib.rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(read("sudo cat a.rs").as_deref(), Some("a.rs"));
        assert_eq!(read("/bin/cat 'x.py'").as_deref(), Some("x.py"));
        assert_eq!(read("cat a.rs | grep fn"), None);
        assert_eq!(read("cat Makefile"), None);
        assert_eq!(read("cargo test"), None);
        assert!(Label::parse("sudo cat a.rs").reads_file());
    }
}
