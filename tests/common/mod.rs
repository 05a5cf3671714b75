//! Shared by the integration tests and `cargo xtask quality`: runs fixtures and commands
//! through the real `sqz` binary exactly as the hook does (trailer appended, isolated store).
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The output of one run of the binary.
pub struct Run {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub code: i32,
}

impl Run {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// A scratch store directory, removed on drop.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "sqz-test-{tag}-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch { dir }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.join("store").join("sessions.db")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `sqz ARGS` with `stdin`, the store at `db`, and extra environment.
pub fn sqz(bin: &Path, db: &Path, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env_remove("SQZ_QUIET")
        .env_remove("SQZ_NO_DEDUP")
        .env_remove("SQZ_REF_TTL_SECS")
        .env_remove("SQZ_CMD")
        .env("SQZ_DB_PATH", db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn sqz");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait sqz");
    let _ = writer.join();
    Run {
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// What the hook's rewritten command pipes into sqz: the output, then the exit trailer.
pub fn with_trailer(output: &[u8], code: i32) -> Vec<u8> {
    let mut v = output.to_vec();
    v.extend_from_slice(format!("\n__SQZ_EXIT_{code}__\n").as_bytes());
    v
}

/// `sqz compress --cmd LABEL` as the hook runs it.
pub fn compress(bin: &Path, db: &Path, label: &str, output: &[u8]) -> Run {
    sqz(
        bin,
        db,
        &["compress", "--cmd", label],
        &with_trailer(output, 0),
        &[],
    )
}

/// `sqz expand REFERENCE` against the store at `db`.
pub fn expand(bin: &Path, db: &Path, reference: &str) -> Run {
    sqz(bin, db, &["expand", reference], b"", &[])
}

/// A `find .` over a project with a big node_modules tree, 500 000 lines.
pub fn huge_find() -> String {
    let mut out =
        String::from(".\n./package.json\n./src\n./src/index.js\n./src/server.js\n./node_modules\n");
    let mut n = 0;
    'outer: for package in 0.. {
        out.push_str(&format!("./node_modules/pkg-{package}\n"));
        for file in 0..40 {
            out.push_str(&format!(
                "./node_modules/pkg-{package}/lib/file-{file}.js\n"
            ));
            n += 1;
            if n >= 499_990 {
                break 'outer;
            }
        }
    }
    out
}

/// The 16-hex hash sqz gives an original.
pub fn hash16(bytes: &[u8]) -> String {
    sqz::text::hash16(bytes)
}

/// The whole SHA-256 of `bytes` in lower-case hex, as `sha256sum` prints it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One captured output with the facts an agent needs from it (SPEC §11).
pub struct Fixture {
    pub name: String,
    pub cmd: String,
    pub input: Vec<u8>,
    pub facts: Vec<String>,
    pub identical: bool,
    pub nocache: bool,
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

pub fn load_fixtures(dir: &Path) -> Vec<Fixture> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.join("input.txt").exists())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .map(|path| {
            let read = |f: &str| std::fs::read_to_string(path.join(f)).unwrap_or_default();
            let expect = read("expect");
            let mut words = expect.split_whitespace();
            let identical = words.next() == Some("identical");
            let nocache = expect.split_whitespace().any(|w| w == "nocache");
            Fixture {
                name: path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                cmd: read("cmd").trim_end_matches('\n').to_string(),
                input: std::fs::read(path.join("input.txt")).unwrap_or_default(),
                facts: read("facts.txt")
                    .lines()
                    .filter(|l| !l.is_empty())
                    .map(String::from)
                    .collect(),
                identical,
                nocache,
            }
        })
        .collect()
}

/// The verdict on one fixture.
pub struct Verdict {
    pub name: String,
    pub cmd: String,
    pub formatter: &'static str,
    pub tokens_in: usize,
    /// stdout plus stderr, as the agent pays for it.
    pub tokens_out: usize,
    pub facts_total: usize,
    pub facts_missing: Vec<String>,
    pub identical: bool,
    pub identical_ok: bool,
    pub nocache: bool,
    pub stored: bool,
    pub expand_ok: bool,
    pub second_is_ref: bool,
    pub code_ok: bool,
    /// Where the output's tokens went: fact lines, markers and summaries, other kept lines.
    pub spent: Spent,
}

/// The tokens of one output by what they were spent on; `whole` when it went out unchanged.
#[derive(Clone, Copy, Default)]
pub struct Spent {
    pub facts: usize,
    pub markers: usize,
    pub other: usize,
    pub whole: usize,
}

impl Spent {
    fn of(output: &str, unchanged: bool) -> Spent {
        let mut spent = Spent::default();
        for line in output.lines() {
            let t = sqz::tokens::count(line) + 1;
            if unchanged {
                spent.whole += t;
            } else if line.starts_with("[… ") || line.starts_with("[same ") {
                spent.markers += t;
            } else if sqz::doc::facts::is_fact(line) {
                spent.facts += t;
            } else {
                spent.other += t;
            }
        }
        spent
    }

    pub fn add(&mut self, other: Spent) {
        self.facts += other.facts;
        self.markers += other.markers;
        self.other += other.other;
        self.whole += other.whole;
    }
}

impl Verdict {
    /// Every gate of SPEC §11 that applies to this fixture.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        for f in &self.facts_missing {
            p.push(format!("missing fact: {f}"));
        }
        if self.identical && !self.identical_ok {
            p.push("not identical".into());
        }
        if self.nocache && self.stored {
            p.push("nocache fixture was stored".into());
        }
        if !self.nocache && !self.expand_ok {
            p.push("expand did not return the original byte for byte".into());
        }
        if !self.nocache && self.tokens_in > 40 && !self.second_is_ref {
            p.push("second run was not a §ref".into());
        }
        if self.tokens_out > self.tokens_in {
            p.push(format!(
                "worse than the input: {} → {} tokens",
                self.tokens_in, self.tokens_out
            ));
        }
        if !self.code_ok {
            p.push("exit status not preserved".into());
        }
        p
    }
}

/// Runs one fixture through the binary in its own store, twice, then expands it.
pub fn evaluate(bin: &Path, fixture: &Fixture) -> Verdict {
    let scratch = Scratch::new("fixture");
    let db = scratch.db();
    let first = sqz(
        bin,
        &db,
        &["compress", "--cmd", &fixture.cmd],
        &with_trailer(&fixture.input, 3),
        &[],
    );
    let stdout = first.stdout_text();
    let tokens_in = sqz::tokens::count_bytes(&fixture.input);
    // Counted on the bytes, as the input is: a lossy decoding would price a stray byte higher.
    let tokens_out = sqz::tokens::count_bytes(&first.stdout) + sqz::tokens::count(&first.stderr);
    let facts_missing = fixture
        .facts
        .iter()
        .filter(|f| !stdout.contains(f.as_str()))
        .cloned()
        .collect();
    let hash = hash16(&fixture.input);
    let expand = expand(bin, &db, &hash);
    let stored = expand.code == 0 || store_contains(&db, &fixture.input);
    let expand_ok = expand.code == 0 && expand.stdout == fixture.input;
    let second = sqz(
        bin,
        &db,
        &["compress", "--cmd", &fixture.cmd],
        &with_trailer(&fixture.input, 0),
        &[],
    );
    let second_is_ref = second.stdout_text().trim_end() == format!("§ref:{hash}§");
    Verdict {
        name: fixture.name.clone(),
        cmd: fixture.cmd.clone(),
        formatter: sqz::fmt::find(&fixture.cmd).map_or("generic", |f| f.name),
        tokens_in,
        tokens_out,
        facts_total: fixture.facts.len(),
        facts_missing,
        identical: fixture.identical,
        identical_ok: first.stdout == fixture.input,
        nocache: fixture.nocache,
        stored,
        expand_ok,
        second_is_ref,
        code_ok: first.code == 3 && second.code == 0,
        spent: Spent::of(&stdout, first.stdout == fixture.input),
    }
}

/// Whether any store file holds a distinctive line of `input` (the longest one).
pub fn store_contains(db: &Path, input: &[u8]) -> bool {
    let Some(needle) = input
        .split(|&b| b == b'\n')
        .max_by_key(|l| l.len())
        .filter(|l| l.len() >= 8)
    else {
        return false;
    };
    let dir = db.parent().unwrap_or(Path::new("."));
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| {
            std::fs::read(entry.path())
                .is_ok_and(|bytes| memchr::memmem::find(&bytes, needle).is_some())
        })
}
