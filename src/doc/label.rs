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

#[cfg(test)]
mod tests {
    use super::Label;

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
