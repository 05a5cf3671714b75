//! `cargo xtask fuzz`: random and mutational fuzzing, in process and without coverage feedback,
//! of every parser that reads bytes sqz does not control. Each target first replays its
//! regression corpus, then mutates seeds for its share of the time. A panic (even one sqz
//! catches itself), a broken invariant or a hang saves the input under `xtask/fuzz-corpus/`
//! and fails the run; a run is fixed by its seed.

mod engine;
mod hooks;
mod mutate;
mod targets;

use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: cargo xtask fuzz [--seconds N] [--target NAME] [--seed S] [--list]
  --seconds N    time budget for the whole run, shared by the targets (default 60; 0 replays
                 the regression corpus only)
  --target NAME  fuzz one target (see --list)
  --seed S       the seed of the random cases, to repeat a run (default: from the clock)
  --list         print the target names";

const DEFAULT_SECONDS: f64 = 60.0;
/// One case running longer than this is a hang.
const HANG_AFTER: Duration = Duration::from_secs(10);

/// Makes a whole case of a mutated inner value.
pub type Wrap = fn(&mut fastrand::Rng, &[u8]) -> Vec<u8>;
/// Runs one case; `Err` says which invariant broke.
pub type Check = Box<dyn FnMut(&[u8]) -> Result<(), String>>;

/// One thing to fuzz: where its cases start from and what must hold for each.
pub struct Target {
    pub name: String,
    /// Whole cases to mutate: fixture outputs, payloads, requests, commands.
    pub seeds: Vec<Vec<u8>>,
    /// Values mutated before `wrap` makes a whole case of them (a command into a payload), so
    /// that mutations reach what lies inside a structure the plain seeds would break.
    pub inner: Vec<Vec<u8>>,
    pub wrap: Option<Wrap>,
    /// Byte strings this target's parser gives a meaning to, besides the shared ones.
    pub tokens: &'static [&'static [u8]],
    pub check: Check,
}

impl Target {
    fn case(&self, rng: &mut fastrand::Rng) -> Vec<u8> {
        if let (Some(wrap), false, true) = (self.wrap, self.inner.is_empty(), rng.bool()) {
            let inner = &self.inner[rng.usize(..self.inner.len())];
            let mutated = mutate::mutate(rng, inner, &self.inner, self.tokens);
            return wrap(rng, &mutated);
        }
        if self.seeds.is_empty() || rng.u8(..32) == 0 {
            return mutate::generate(rng, self.tokens);
        }
        let seed = &self.seeds[rng.usize(..self.seeds.len())];
        mutate::mutate(rng, seed, &self.seeds, self.tokens)
    }
}

struct Options {
    seconds: f64,
    target: Option<String>,
    seed: Option<u64>,
    list: bool,
    help: bool,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        seconds: DEFAULT_SECONDS,
        target: None,
        seed: None,
        list: false,
        help: false,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next().cloned())
                .ok_or(format!("{flag} needs a value"))
        };
        match flag {
            "--seconds" => {
                let text = value()?;
                options.seconds = text
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .ok_or(format!("--seconds {text}: not a number of seconds"))?;
            }
            "--target" => options.target = Some(value()?),
            "--seed" => {
                let text = value()?;
                options.seed = Some(
                    text.parse()
                        .map_err(|_| format!("--seed {text}: not a u64"))?,
                );
            }
            "--list" => options.list = true,
            "-h" | "--help" => options.help = true,
            _ => return Err(format!("unexpected argument '{arg}' (see --help)")),
        }
    }
    Ok(options)
}

/// The first panic report since the last `take`, from any thread.
static PANIC: Mutex<Option<String>> = Mutex::new(None);

fn take_panic() -> Option<String> {
    PANIC.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// The case running now, for the watchdog: when it started, its target and its bytes.
type Running = Arc<Mutex<Option<(Instant, String, Vec<u8>)>>>;

pub fn run(root: &Path, args: &[String]) -> Result<(), String> {
    // Setting up (fixtures, stores, the MCP workspace) comes out of the budget too.
    let start = Instant::now();
    let options = parse_args(args)?;
    if options.help {
        println!("{USAGE}");
        return Ok(());
    }
    let scratch = crate::common::Scratch::new("fuzz");
    let mut all = targets::all(root, &scratch.dir)?;
    if options.list {
        for target in &all {
            println!("{}", target.name);
        }
        return Ok(());
    }
    if let Some(name) = &options.target {
        all.retain(|t| &t.name == name);
        if all.is_empty() {
            return Err(format!(
                "no target '{name}' (cargo xtask fuzz --list names them)"
            ));
        }
    }
    let seed = options.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let corpus_root = root.join("xtask").join("fuzz-corpus");
    println!(
        "fuzzing {} targets for {}s, seed {seed} (repeat with --seed {seed})",
        all.len(),
        options.seconds
    );
    // Panics are the fuzzer's findings: recorded, never printed where they happen.
    panic::set_hook(Box::new(|info| {
        let mut first = PANIC.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert_with(|| info.to_string().replace('\n', " "));
    }));
    let running: Running = Arc::new(Mutex::new(None));
    watchdog(running.clone(), corpus_root.clone(), scratch.dir.clone());

    let budget = Duration::from_secs_f64(options.seconds);
    let count = all.len();
    let mut failed = Vec::new();
    println!(
        "{:<28} {:>9} {:>8} {:>8}",
        "target", "cases", "failures", "seconds"
    );
    for (k, target) in all.iter_mut().enumerate() {
        // What earlier targets left unused goes to the ones after them.
        let left = budget.saturating_sub(start.elapsed());
        let share = left / (count - k) as u32;
        let began = Instant::now();
        let mut rng = fastrand::Rng::with_seed(seed ^ fnv1a(target.name.as_bytes()));
        let (cases, failure) = fuzz_one(target, root, share, &mut rng, &running);
        println!(
            "{:<28} {:>9} {:>8} {:>8.1}",
            target.name,
            cases,
            usize::from(failure.is_some()),
            began.elapsed().as_secs_f64()
        );
        if let Some(failure) = failure {
            failed.push(failure);
        }
        let _ = std::io::stdout().flush();
    }
    if failed.is_empty() {
        println!("no failures in {:.1}s", start.elapsed().as_secs_f64());
        return Ok(());
    }
    for failure in &failed {
        println!("{failure}");
    }
    Err(format!(
        "{} of {count} targets failed (seed {seed})",
        failed.len()
    ))
}

/// Replays the target's corpus, then fuzzes it until `share` is spent or a case fails; returns
/// the cases run and the failure, as the lines to print.
fn fuzz_one(
    target: &mut Target,
    root: &Path,
    share: Duration,
    rng: &mut fastrand::Rng,
    running: &Running,
) -> (usize, Option<String>) {
    let deadline = Instant::now() + share;
    let dir = root.join("xtask").join("fuzz-corpus").join(&target.name);
    let mut cases = 0;
    for (path, input) in corpus(&dir) {
        cases += 1;
        if let Err(why) = run_case(target, &input, running) {
            let shown = path.strip_prefix(root);
            return (
                cases,
                Some(format!(
                    "{}: {why}\n  saved case {} still fails; reproduce: cargo xtask fuzz --target {} --seconds 0",
                    target.name,
                    shown.unwrap_or(&path).display(),
                    target.name
                )),
            );
        }
    }
    while Instant::now() < deadline {
        let input = target.case(rng);
        cases += 1;
        if let Err(why) = run_case(target, &input, running) {
            let saved = save(&dir, &input);
            return (
                cases,
                Some(format!(
                    "{}: {why}\n  saved {}; reproduce: cargo xtask fuzz --target {} --seconds 0",
                    target.name, saved, target.name
                )),
            );
        }
    }
    (cases, None)
}

/// Runs one case; a panic anywhere inside it (caught by sqz or not) is a failure.
fn run_case(target: &mut Target, input: &[u8], running: &Running) -> Result<(), String> {
    *running.lock().unwrap_or_else(|p| p.into_inner()) =
        Some((Instant::now(), target.name.clone(), input.to_vec()));
    take_panic();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| (target.check)(input)));
    let report = take_panic();
    *running.lock().unwrap_or_else(|p| p.into_inner()) = None;
    match (outcome, report) {
        (Err(_), report) => Err(format!(
            "panic: {}",
            engine::short(&report.unwrap_or_else(|| "(no report)".into()))
        )),
        (Ok(_), Some(report)) => Err(format!(
            "panic (caught inside sqz): {}",
            engine::short(&report)
        )),
        (Ok(result), None) => result,
    }
}

/// Watches the running case; one that runs past `HANG_AFTER` is saved and ends the process,
/// since the thread running it cannot be stopped.
fn watchdog(running: Running, corpus_root: PathBuf, scratch: PathBuf) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        let guard = running.lock().unwrap_or_else(|p| p.into_inner());
        let Some((started, name, input)) = guard.as_ref() else {
            continue;
        };
        if started.elapsed() < HANG_AFTER {
            continue;
        }
        let saved = save(&corpus_root.join(name), input);
        println!(
            "{name}: hang: one case ran for more than {}s\n  saved {saved}; reproduce: cargo xtask fuzz --target {name} --seconds 0",
            HANG_AFTER.as_secs()
        );
        let _ = std::io::stdout().flush();
        let _ = std::fs::remove_dir_all(&scratch);
        std::process::exit(1);
    });
}

/// The saved cases of one target, in name order; the directory may not exist yet.
fn corpus(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| std::fs::read(&p).ok().map(|bytes| (p, bytes)))
        .collect()
}

/// Writes a failing case under its content hash; returns where, relative to the repository.
fn save(dir: &Path, input: &[u8]) -> String {
    let name: String = crate::common::sha256_hex(input).chars().take(16).collect();
    let path = dir.join(&name);
    let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, input));
    let shown = format!(
        "xtask/fuzz-corpus/{}/{name}",
        dir.file_name().unwrap_or_default().to_string_lossy()
    );
    match written {
        Ok(()) => shown,
        Err(e) => format!("nothing ({shown}: {e})"),
    }
}

/// FNV-1a: a target's cases depend only on the seed and its name.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
