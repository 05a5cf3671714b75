//! `cargo xtask bench`: the budgets of SPEC §12, each next to its measured median, from
//! whole-process runs of the release binary (what an agent's hook pays), on this machine.

use crate::common::{load_fixtures, Scratch};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Sample {
    wall: Duration,
}

/// Spawns `cmd` with `stdin` and times it to its exit.
fn run_once(cmd: &mut Command, stdin: &[u8]) -> Sample {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    reap(child);
    let wall = start.elapsed();
    let _ = writer.join();
    Sample { wall }
}

/// Waits for `child` with `wait4` and returns its peak RSS in KB: std cannot report a child's
/// own peak, `wait4` can.
#[allow(clippy::zombie_processes)] // reaped by wait4 below, which std's wait cannot replace
fn reap(child: std::process::Child) -> i64 {
    let mut status = 0;
    // The pid is our child's and it is reaped exactly once, here.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    usage.ru_maxrss
}

/// `xtask bench --peak PROGRAM ARGS…`: runs PROGRAM on this process's stdin, its output
/// discarded, and prints PROGRAM's peak RSS in KB. The bench measures memory through this small
/// process because Linux counts into a child's peak the peak of the process it was started
/// from (the memory it replaced at exec): a child of the bench itself, which holds every
/// input, reported the bench's 13 MB, or 70 MB during the `find` runs, as its own.
fn peak(command: &[String]) -> Result<(), String> {
    let (program, args) = command.split_first().ok_or("--peak needs a command")?;
    let child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    println!("{}", reap(child));
    Ok(())
}

/// The peak RSS in KB of `cmd`, an `xtask bench --peak` run, on `stdin`.
fn peak_kb(cmd: &mut Command, stdin: &[u8]) -> Result<i64, String> {
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    let mut input = child.stdin.take().ok_or("no stdin")?;
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = writer.join();
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse()
        .map_err(|_| format!("xtask bench --peak printed {text:?}"))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Row {
    what: String,
    budget: String,
    measured: String,
    ok: Option<bool>,
}

pub fn run(root: &Path) -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(2).collect();
    if let Some(("--peak", command)) = args.split_first().map(|(f, rest)| (f.as_str(), rest)) {
        return peak(command);
    }
    // The static binary, as `cargo xtask dist` ships it: no dynamic loader at start-up.
    let (bin, _) = crate::dist::build_static(root)?;
    let scratch = Scratch::new("bench");
    let db = scratch.db();
    let sqz = |args: &[&str]| {
        let mut c = Command::new(&bin);
        c.args(args).env("SQZ_DB_PATH", &db).env("SQZ_QUIET", "1");
        c
    };
    let this = std::env::current_exe().map_err(|e| e.to_string())?;
    let sqz_peak = |args: &[&str]| {
        let mut c = Command::new(&this);
        c.args(["bench", "--peak"])
            .arg(&bin)
            .args(args)
            .env("SQZ_DB_PATH", &db)
            .env("SQZ_QUIET", "1");
        c
    };
    let corpus = corpus(root);
    let log_10k = cut_lines(&corpus, 10 * 1024);
    let log_1m = repeat_to(&corpus, 1 << 20);
    let json_1m = json_document(1 << 20);
    let mut rows = Vec::new();

    let exec = median(
        (0..200)
            .map(|_| run_once(&mut Command::new("/bin/true"), b"").wall)
            .collect(),
    );
    let version = median(
        (0..200)
            .map(|_| run_once(&mut sqz(&["--version"]), b"").wall)
            .collect(),
    );
    rows.push(Row {
        what: "process start (sqz --version)".into(),
        budget: format!("≤ exec of /bin/true ({:.2} ms)", ms(exec)),
        measured: format!("{:.2} ms", ms(version)),
        ok: Some(version <= exec),
    });
    // A home whose Claude settings hold the allow rules, so the hook really rewrites.
    let home = scratch.dir.join("home");
    std::fs::create_dir_all(home.join(".claude")).map_err(|e| e.to_string())?;
    // sqz's rules and the user's own rule for the command, so the hook reads every file and
    // rewrites.
    let rules: Vec<String> = sqz::hook::rewrite::ALLOW_RULES
        .iter()
        .chain(&["Bash(cargo test:*)"])
        .map(|r| {
            let mut quoted = String::new();
            sqz::json::write_string(&mut quoted, r);
            quoted
        })
        .collect();
    std::fs::write(
        home.join(".claude").join("settings.json"),
        format!(
            "{{\"permissions\": {{\"allow\": [{}]}}}}\n",
            rules.join(", ")
        ),
    )
    .map_err(|e| e.to_string())?;
    let payload = format!(
        "{{\"session_id\":\"bench\",\"cwd\":\"{}\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":\"cargo test --workspace\",\"description\":\"Run the tests\"}}}}",
        scratch.dir.display()
    );
    let hook = median(
        (0..200)
            .map(|_| {
                let mut c = sqz(&["hook", "claude"]);
                c.env("HOME", &home);
                run_once(&mut c, payload.as_bytes()).wall
            })
            .collect(),
    );
    rows.push(three_x("hook rewrite (sqz hook claude)", hook, exec));

    // Seed the store so the next runs are dedup hits.
    run_once(&mut sqz(&["compress", "--cmd", "cargo build"]), &log_10k);
    let hit = median(
        (0..100)
            .map(|_| run_once(&mut sqz(&["compress", "--cmd", "cargo build"]), &log_10k).wall)
            .collect(),
    );
    rows.push(three_x("dedup hit (10 KB repeat → §ref)", hit, exec));
    let hash = sqz::text::hash16(&log_10k);
    let expand = median(
        (0..100)
            .map(|_| run_once(&mut sqz(&["expand", &hash]), b"").wall)
            .collect(),
    );
    rows.push(three_x("sqz expand HASH", expand, exec));

    // Unique per run so nothing is a repeat; JSON stays a JSON document.
    let unique = |input: &[u8], n: usize| {
        let tag = fastrand::u64(..);
        if input.first() == Some(&b'{') {
            let mut doc = format!("{{\"run\": \"{n}-{tag}\",").into_bytes();
            doc.extend_from_slice(&input[1..]);
            doc
        } else {
            let mut log = format!("run {n} {tag}\n").into_bytes();
            log.extend_from_slice(input);
            log
        }
    };
    // The median time of `runs` runs, and the largest peak memory of three more.
    let fresh = |input: &[u8], label: &str, runs: usize| -> Result<(Duration, i64), String> {
        let args = ["compress", "--cmd", label];
        let walls = (0..runs)
            .map(|n| run_once(&mut sqz(&args), &unique(input, n)).wall)
            .collect();
        let mut rss = 0;
        for n in runs..runs + 3 {
            rss = rss.max(peak_kb(&mut sqz_peak(&args), &unique(input, n))?);
        }
        Ok((median(walls), rss))
    };
    let (f10, _) = fresh(&log_10k, "cargo build", 60)?;
    rows.push(budget_ms("compress, fresh 10 KB log", f10, 10.0));
    let (f1m, rss_log) = fresh(&log_1m, "make", 15)?;
    rows.push(budget_ms("compress, fresh 1 MB log", f1m, 60.0));
    let (j1m, rss_json) = fresh(&json_1m, "kubectl get pods -o json", 15)?;
    rows.push(budget_ms("compress, fresh 1 MB JSON", j1m, 60.0));
    let find = crate::common::huge_find().into_bytes();
    let (huge, rss_find) = fresh(&find, "find .", 3)?;
    let limit = 60.0 * find.len() as f64 / (1 << 20) as f64;
    rows.push(budget_ms(
        &format!(
            "compress, 500k-line find ({:.0} MB)",
            find.len() as f64 / 1e6
        ),
        huge,
        limit,
    ));
    for (what, rss, size) in [
        ("peak memory, 500k-line find", rss_find, find.len()),
        ("peak memory, 1 MB log", rss_log, log_1m.len()),
        ("peak memory, 1 MB JSON", rss_json, json_1m.len()),
    ] {
        let budget_kb = (3 * size / 1024 + 8 * 1024) as i64;
        rows.push(Row {
            what: what.into(),
            budget: format!("< 3× input + 8 MB ({:.1} MB)", budget_kb as f64 / 1024.0),
            measured: format!("{:.1} MB", rss as f64 / 1024.0),
            ok: Some(rss < budget_kb),
        });
    }
    let (read_fresh, read_repeat) = mcp_reads(&bin, &db, &scratch.dir, root)?;
    rows.push(budget_ms(
        "MCP sqz_read_file, 100 distinct 10 KB files",
        read_fresh,
        3.0,
    ));
    rows.push(budget_ms(
        "MCP sqz_read_file, the same files again (§ref)",
        read_repeat,
        3.0,
    ));

    let (proxy, alone) = proxy_request(&bin, &scratch, &corpus)?;
    rows.push(Row {
        what: "proxy, 1 MB Anthropic request".into(),
        budget: format!(
            "< 3× compress, a call per result ({:.0} ms)",
            3.0 * ms(alone)
        ),
        measured: format!("{:.2} ms", ms(proxy)),
        ok: Some(proxy < alone * 3),
    });

    println!(
        "{:<48} {:<34} {:<20} verdict",
        "budget (SPEC §12)", "limit", "median"
    );
    let mut missed = 0;
    for r in &rows {
        let verdict = match r.ok {
            Some(true) => "ok",
            Some(false) => {
                missed += 1;
                "MISSED"
            }
            None => "-",
        };
        println!(
            "{:<48} {:<34} {:<20} {verdict}",
            r.what, r.budget, r.measured
        );
    }
    println!(
        "\ninputs: 10 KB and 1 MB of real fixture output, 1 MB of generated JSON; {} cores",
        cores()
    );
    if missed > 0 {
        return Err(format!("{missed} budgets missed"));
    }
    Ok(())
}

/// One warm `sqz mcp` process reading 100 distinct 10 KB source files through
/// `sqz_read_file`, then all of them again: the median time per call of each pass, measured
/// from writing the request line to reading the answer line.
fn mcp_reads(
    bin: &Path,
    db: &Path,
    dir: &Path,
    root: &Path,
) -> Result<(Duration, Duration), String> {
    use std::io::{BufRead, BufReader};
    let files = dir.join("mcp-files");
    std::fs::create_dir_all(&files).map_err(|e| e.to_string())?;
    let mut source = Vec::new();
    for sub in [
        "src",
        "src/engine",
        "src/fmt",
        "src/hook",
        "src/cmd",
        "src/mcp",
        "src/store",
        "tests",
    ] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(sub))
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .collect();
        names.sort();
        for name in names {
            source.extend(std::fs::read(name).map_err(|e| e.to_string())?);
        }
    }
    for n in 0..100 {
        // Distinct 10 KB windows of real source, each starting with its own line.
        let at = (n * 7919) % source.len().saturating_sub(20 * 1024).max(1);
        let start = at
            + source[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
        let mut body = format!("// bench file {n}\n").into_bytes();
        body.extend(cut_lines(&source[start..], 10 * 1024));
        std::fs::write(files.join(format!("f{n:03}.rs")), body).map_err(|e| e.to_string())?;
    }
    let mut child = Command::new(bin)
        .arg("mcp")
        .current_dir(&files)
        .env("SQZ_DB_PATH", db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut input = child.stdin.take().ok_or("no stdin")?;
    let mut output = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut ask = |id: usize, request: String| -> Result<Duration, String> {
        let start = Instant::now();
        input
            .write_all(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{request}}}\n").as_bytes())
            .map_err(|e| e.to_string())?;
        let mut line = String::new();
        output.read_line(&mut line).map_err(|e| e.to_string())?;
        if line.contains("\"error\"") || line.contains("\"isError\":true") {
            return Err(format!("sqz mcp answered with an error: {}", line.trim()));
        }
        Ok(start.elapsed())
    };
    ask(
        0,
        r#""method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}"#
            .into(),
    )?;
    let read = |n: usize| {
        format!(
            r#""method":"tools/call","params":{{"name":"sqz_read_file","arguments":{{"path":"f{n:03}.rs"}}}}"#
        )
    };
    let mut passes = Vec::new();
    for pass in 0..2 {
        let mut walls = Vec::new();
        for n in 0..100 {
            walls.push(ask(1 + pass * 100 + n, read(n))?);
        }
        passes.push(median(walls));
    }
    drop(input);
    let _ = child.wait();
    Ok((passes[0], passes[1]))
}

fn three_x(what: &str, d: Duration, exec: Duration) -> Row {
    Row {
        what: what.into(),
        budget: format!("≤ 3× exec ({:.2} ms)", 3.0 * ms(exec)),
        measured: format!("{:.2} ms", ms(d)),
        ok: Some(d <= exec * 3),
    }
}

fn budget_ms(what: &str, d: Duration, limit: f64) -> Row {
    Row {
        what: what.into(),
        budget: format!("< {limit:.0} ms"),
        measured: format!("{:.2} ms", ms(d)),
        ok: Some(ms(d) < limit),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// All non-identical fixture outputs, concatenated: realistic log text.
fn corpus(root: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for f in load_fixtures(&root.join("fixtures"))
        .into_iter()
        .filter(|f| !f.identical)
    {
        out.extend_from_slice(&f.input);
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
    }
    if out.is_empty() {
        out = b"   Compiling bench v0.1.0\n".to_vec();
    }
    out
}

fn cut_lines(corpus: &[u8], size: usize) -> Vec<u8> {
    let mut out = repeat_to(corpus, size);
    out.truncate(size);
    while out.last().is_some_and(|&b| b != b'\n') {
        out.pop();
    }
    out
}

fn repeat_to(corpus: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + corpus.len());
    while out.len() < size {
        out.extend_from_slice(corpus);
    }
    out
}

/// A pretty-printed JSON array of records, like `kubectl get -o json` items.
fn json_document(size: usize) -> Vec<u8> {
    let mut s = String::from("{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n");
    let mut n = 0;
    while s.len() < size {
        if n > 0 {
            s.push_str(",\n");
        }
        s.push_str(&format!(
            "    {{\n      \"name\": \"worker-{n}\",\n      \"namespace\": \"default\",\n      \"phase\": \"{}\",\n      \"restarts\": {},\n      \"node\": \"node-{}\",\n      \"ip\": \"10.0.{}.{}\",\n      \"labels\": {{\"app\": \"api\", \"tier\": \"backend\"}}\n    }}",
            if n % 97 == 0 { "CrashLoopBackOff" } else { "Running" },
            n % 7,
            n % 5,
            n / 250,
            n % 250
        ));
        n += 1;
    }
    s.push_str("\n  ],\n  \"kind\": \"List\"\n}\n");
    s.into_bytes()
}

/// `sqz proxy` on a 1 MB Anthropic Messages body whose tool results are real fixture outputs,
/// against `sqz compress` run on each of the same tool results: the medians of both.
fn proxy_request(
    bin: &Path,
    scratch: &Scratch,
    corpus: &[u8],
) -> Result<(Duration, Duration), String> {
    use std::io::{BufRead, BufReader, Read};
    let text = String::from_utf8_lossy(corpus);
    // Tool results of about 8 KB, cut at line ends, up to 1 MB in all.
    let mut results: Vec<&str> = Vec::new();
    let mut rest: &str = &text;
    let mut total = 0;
    while total < (1 << 20) && !rest.is_empty() {
        let cut = rest
            .char_indices()
            .skip(8 * 1024)
            .find(|(_, c)| *c == '\n')
            .map_or(rest.len(), |(i, _)| i + 1);
        results.push(&rest[..cut]);
        total += cut;
        rest = &rest[cut..];
    }
    let body = |tag: u64| -> String {
        let mut messages = Vec::new();
        for (k, r) in results.iter().enumerate() {
            let mut output = String::new();
            sqz::json::write_string(&mut output, &format!("run {tag}\n{r}"));
            messages.push(format!(
                r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"t{k}","name":"bash","input":{{"command":"make"}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{k}","content":{output}}}]}}"#
            ));
        }
        format!(
            r#"{{"model":"m","max_tokens":1024,"messages":[{}]}}"#,
            messages.join(",")
        )
    };
    let mut child = Command::new(bin)
        .args(["proxy", "--port", "0"])
        .env("SQZ_DB_PATH", scratch.dir.join("proxy.db"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start sqz proxy: {e}"))?;
    let mut line = String::new();
    let mut stderr = BufReader::new(child.stderr.take().ok_or("no stderr")?);
    stderr.read_line(&mut line).map_err(|e| e.to_string())?;
    let port: u16 = line
        .rsplit(':')
        .next()
        .and_then(|p| p.trim().parse().ok())
        .ok_or_else(|| format!("no port in {line:?}"))?;
    let mut walls = Vec::new();
    for run in 0..7 {
        let payload = body(run);
        let start = Instant::now();
        let mut stream =
            std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
        write!(
            stream,
            "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            payload.len()
        )
        .and_then(|()| stream.write_all(payload.as_bytes()))
        .map_err(|e| e.to_string())?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).map_err(|e| e.to_string())?;
        walls.push(start.elapsed());
        if !answer.starts_with(b"HTTP/1.1 200") {
            return Err("the proxy did not answer 200".into());
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    // The same tool results through `sqz compress`, one call each, as the shell hook would
    // compress them: the sum over one request's results, median of 3.
    let alone = median(
        (0..3)
            .map(|run| {
                results
                    .iter()
                    .map(|r| {
                        let input = format!("run {run}\n{r}").into_bytes();
                        let mut c = Command::new(bin);
                        c.args(["compress", "--cmd", "make"])
                            .env("SQZ_DB_PATH", scratch.dir.join("alone.db"))
                            .env("SQZ_QUIET", "1");
                        run_once(&mut c, &input).wall
                    })
                    .sum()
            })
            .collect(),
    );
    Ok((median(walls), alone))
}
