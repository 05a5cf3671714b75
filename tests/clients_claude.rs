//! The real Claude Code client (npm `@anthropic-ai/claude-code`, pinned in
//! `tests/clients/claude/package.json`) run headless through `tests/clients/claude/script.json`
//! against a scripted model on loopback, once without sqz and once with `sqz init` (or through
//! `sqz proxy`), comparing what the model saw call by call. `tests/clients/claude/run.mjs` does
//! one run and writes its report; this file decides what counts as worse than without sqz.

#[path = "clients/claude/shared.rs"]
mod shared;

use shared::{bin, flag, get, list, number, runner, text, ToolCall};
use std::collections::BTreeSet;
use std::io::Write;
use std::ops::Deref;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The credential in the scratch project's `.env`. It must never reach sqz's store.
const CANARY: &str = "Zq3vT8mWk2LpR9xYb4NcH7sJd1FgA6eUo5iK0tVw";

/// One tool call of the script, and what the headless run adds: the tokens the model saw and
/// whether the client denied the call.
#[derive(Debug)]
struct Call {
    call: ToolCall,
    tokens: usize,
    denied: bool,
}

impl Deref for Call {
    type Target = ToolCall;

    fn deref(&self) -> &ToolCall {
        &self.call
    }
}

/// For each request after the first: the earlier messages it sent differently.
#[derive(Debug)]
struct History {
    request: usize,
    changed: BTreeSet<usize>,
    example: String,
}

#[derive(Debug)]
struct Report {
    label: String,
    store: PathBuf,
    store_files: Vec<(PathBuf, Vec<u8>)>,
    main_requests: usize,
    hook_runs: usize,
    /// Each hook run that failed or wrote to stderr: the tool call it ran for, and what it did.
    hook_errors: Vec<(String, String)>,
    calls: Vec<Call>,
    history: Vec<History>,
    /// Whether the project folder was trusted in Claude Code.
    trusted: bool,
}

/// Tokens in `text`, as `sqz tokens` counts them.
fn tokens(text: &str) -> usize {
    let mut child = Command::new(bin())
        .arg("tokens")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run sqz tokens");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = text.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().expect("sqz tokens");
    let _ = writer.join();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("sqz tokens printed {:?}", out.stdout))
}

/// Runs the client once through the script (`variant`: baseline, sqz or proxy) and reads back
/// its report and the store's files. The scratch directory is removed afterwards.
fn run(variant: &str, mode: &str) -> Report {
    run_in(variant, mode, true)
}

/// `run`, in a project folder the user has trusted in Claude Code or not.
fn run_in(variant: &str, mode: &str, trusted: bool) -> Report {
    let trust = if trusted { "yes" } else { "no" };
    let label = format!("{variant}/{mode}");
    let args = [
        "--variant",
        variant,
        "--mode",
        mode,
        "--canary",
        CANARY,
        "--trusted",
        trust,
    ];
    let name = format!("{variant}-{mode}-{trust}");
    let (out, report) = runner("run.mjs", &name, &args, &label);
    let claude = get(&report, "claude");
    let result = get(claude, "result");
    assert!(
        get(claude, "status").as_i64() == Some(0)
            && !result.is_null()
            && text(result, "subtype") == "success",
        "Claude Code did not finish the {label} run: {}",
        claude.to_compact()
    );
    let calls: Vec<Call> = list(&report, "calls")
        .iter()
        .map(|c| {
            let call = ToolCall::from_report(c, "normalized");
            Call {
                tokens: tokens(&call.text),
                denied: flag(c, "denied"),
                call,
            }
        })
        .collect();
    let history = list(&report, "history")
        .iter()
        .map(|h| History {
            request: number(h, "request"),
            changed: list(h, "changed")
                .iter()
                .filter_map(|i| i.as_u64().map(|i| i as usize))
                .collect(),
            example: get(h, "example").to_compact(),
        })
        .collect();
    let hook_errors = list(&report, "hook_errors")
        .iter()
        .map(|e| {
            let what = format!(
                "{} hook (outcome {}, exit {}) wrote to stderr: {}",
                text(e, "hook"),
                text(e, "outcome"),
                get(e, "exit_code").to_compact(),
                text(e, "stderr").trim()
            );
            (text(e, "tool_use_id"), what)
        })
        .collect();
    let store = PathBuf::from(text(&report, "store"));
    let mut store_files = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&store) {
        for entry in entries.flatten() {
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            store_files.push((entry.path(), bytes));
        }
    }
    let r = Report {
        label,
        store,
        store_files,
        main_requests: number(&report, "main_requests"),
        hook_runs: number(&report, "hook_runs"),
        hook_errors,
        calls,
        history,
        trusted,
    };
    let _ = std::fs::remove_dir_all(&out);
    r
}

/// The run without sqz in `mode`, shared by the tests that compare against it.
fn baseline(mode: &str) -> &'static Report {
    static DEFAULT: OnceLock<Report> = OnceLock::new();
    static BYPASS: OnceLock<Report> = OnceLock::new();
    let cell = match mode {
        "default" => &DEFAULT,
        "bypassPermissions" => &BYPASS,
        _ => panic!("no baseline for mode {mode}"),
    };
    cell.get_or_init(|| run("baseline", mode))
}

/// Prints call, tool, tokens without and with sqz, and the flags, to stderr.
fn table(base: &Report, with: &Report) {
    let mut t = format!(
        "\n{} against {}\n{:>4}  {:<5}  {:<52} {:>8} {:>8}  flags\n",
        with.label, base.label, "step", "tool", "input", "without", "with"
    );
    let (mut sum_base, mut sum_with) = (0, 0);
    for (b, w) in base.calls.iter().zip(&with.calls) {
        sum_base += b.tokens;
        sum_with += w.tokens;
        let mut input: String = w.input.chars().take(52).collect();
        if w.input.chars().count() > 52 {
            input.pop();
            input.push('…');
        }
        let mut flags = Vec::new();
        if w.denied {
            flags.push("denied");
        }
        if w.is_error {
            flags.push("error");
        }
        if b.denied {
            flags.push("denied-without");
        }
        t.push_str(&format!(
            "{:>4}  {:<5}  {:<52} {:>8} {:>8}  {}\n",
            w.step,
            w.tool,
            input,
            b.tokens,
            w.tokens,
            flags.join(",")
        ));
    }
    t.push_str(&format!(
        "{:>4}  {:<5}  {:<52} {:>8} {:>8}  {} hook runs\n",
        "", "all", "", sum_base, sum_with, with.hook_runs
    ));
    eprint!("{t}");
}

/// What `with` did worse than `base`, call by call, each naming the call and why.
fn regressions(base: &Report, with: &Report, hooks: bool) -> Vec<String> {
    let mut problems = Vec::new();
    if base.calls.len() != with.calls.len() {
        problems.push(format!(
            "{} had {} calls, {} had {}",
            base.label,
            base.calls.len(),
            with.label,
            with.calls.len()
        ));
    }
    for (b, w) in base.calls.iter().zip(&with.calls) {
        let name = w.name();
        if !w.answered {
            problems.push(format!("{name}: its result never reached the model"));
            continue;
        }
        if w.denied && !b.denied && w.expand && !with.trusted {
            // The one known gap: in a folder Claude Code has not trusted, the project's rules,
            // `Bash(sqz expand:*)` among them, are dropped, so expanding asks (README).
            eprintln!("{name}: asks in a folder that is not trusted, as the README says");
            continue;
        }
        if w.denied && !b.denied {
            problems.push(format!(
                "{name}: denied with sqz, ran without it; the model saw: {}",
                w.text
            ));
            continue;
        }
        if w.expand {
            if hooks {
                problems.extend(w.expand_problem());
            }
            continue;
        }
        problems.extend(w.status_problems(b));
        if w.tokens > b.tokens {
            problems.push(format!(
                "{name}: the model saw {} tokens with sqz, {} without; with sqz: {}",
                w.tokens,
                b.tokens,
                w.text.chars().take(300).collect::<String>()
            ));
        }
    }
    for (id, what) in &with.hook_errors {
        let call = with.calls.iter().find(|c| &c.id == id);
        let name = call.map_or_else(|| "before any tool call".to_string(), |c| c.name());
        problems.push(format!("{name}: {what}"));
    }
    if hooks && with.hook_runs == 0 {
        problems.push("no sqz hook ran".to_string());
    }
    if hooks && with.store_files.is_empty() {
        problems.push(format!(
            "nothing was stored in {}: the hooks never reached sqz",
            with.store.display()
        ));
    }
    for (file, bytes) in &with.store_files {
        if bytes.windows(CANARY.len()).any(|w| w == CANARY.as_bytes()) {
            problems.push(format!(
                "the .env credential is stored in {}",
                file.display()
            ));
        }
    }
    problems
}

fn check(base: &Report, with: &Report, hooks: bool) {
    table(base, with);
    let problems = regressions(base, with, hooks);
    assert!(
        problems.is_empty(),
        "Claude Code {} is worse than without sqz in {} ways:\n- {}",
        with.label,
        problems.len(),
        problems.join("\n- ")
    );
}

#[test]
fn sqz_init_in_default_mode_changes_nothing_for_the_worse() {
    let base = baseline("default");
    let with = run("sqz", "default");
    check(base, &with, true);
}

/// A folder the user never trusted: Claude Code drops the project's allow rules, so the hook
/// must not rewrite (the client would ask), while PostToolUse still compresses.
#[test]
fn sqz_init_in_an_untrusted_folder_changes_nothing_for_the_worse() {
    let base = baseline("default");
    let with = run_in("sqz", "default", false);
    check(base, &with, true);
}

#[test]
fn sqz_init_in_bypass_mode_changes_nothing_for_the_worse() {
    let base = baseline("bypassPermissions");
    let with = run("sqz", "bypassPermissions");
    check(base, &with, true);
}

/// Through `sqz proxy`, each request's messages (`cache_control` set aside) extend the previous
/// request's, except for messages the client itself changes in the same script without the proxy.
#[test]
fn sqz_proxy_only_extends_the_history_the_client_sends() {
    let base = baseline("default");
    let proxied = run("proxy", "default");
    let mut problems = Vec::new();
    if proxied.main_requests != base.main_requests {
        problems.push(format!(
            "{} model requests through the proxy, {} without",
            proxied.main_requests, base.main_requests
        ));
    }
    let mut client_changes = 0;
    for (b, p) in base.history.iter().zip(&proxied.history) {
        if !b.changed.is_empty() {
            client_changes += 1;
        }
        let extra: Vec<_> = p.changed.difference(&b.changed).collect();
        if !extra.is_empty() {
            problems.push(format!(
                "request {} changed earlier message(s) {extra:?} that the client alone leaves as they were: {}",
                p.request, p.example
            ));
        }
    }
    eprintln!(
        "\nthrough sqz proxy: {} of {} requests changed an earlier message; the client alone changes {}",
        proxied.history.iter().filter(|h| !h.changed.is_empty()).count(),
        proxied.history.len(),
        client_changes
    );
    problems.extend(regressions(base, &proxied, false));
    table(base, &proxied);
    assert!(
        problems.is_empty(),
        "Claude Code through sqz proxy: {} problems:\n- {}",
        problems.len(),
        problems.join("\n- ")
    );
}
