//! Risk routing (SPEC §5.2): decides, from whole lines, whether output is untouchable and
//! unstorable (stack traces, PEM, credentials, SQL DDL), storable but only mentions such things,
//! or ordinary. Also spots source code and diffs, whose lines are never dropped or changed.

use crate::doc::label::Label;

/// What the rest of the path may do with one output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Passes through byte for byte and is never stored.
    Untouchable(Risk),
    /// Mentions a risky marker: only lossless stages, never stored.
    NoStore,
    /// Source code or a diff: stored, deduplicated, but no line dropped or changed.
    Verbatim,
    /// Everything else.
    Normal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Risk {
    StackTrace,
    Pem,
    Credential,
    SqlDdl,
}

impl Risk {
    pub fn describe(self) -> &'static str {
        match self {
            Risk::StackTrace => "stack trace",
            Risk::Pem => "PEM block",
            Risk::Credential => "credential",
            Risk::SqlDdl => "SQL DDL",
        }
    }
}

pub fn route(label: &str, text: &str) -> Route {
    if let Some(risk) = untouchable(text) {
        return Route::Untouchable(risk);
    }
    if mentions_risk(text) {
        return Route::NoStore;
    }
    // Guessing source code from the content is for output no formatter claims: a test log's
    // `[ 40%]` or an installer's `(73 kB)` line endings read like code.
    // A log is a log whatever command printed it, and folds like one, even when its lines end
    // in `;` as logged SQL statements do.
    let log = std::cell::OnceCell::new();
    let is_log = || *log.get_or_init(|| looks_like_log(text));
    // A test run's `* test adds VAT [L#9]` lines end like code too, and so do a compiler's
    // `Program.cs(11,33): error CS0246: … [app.csproj]` and `2 Error(s)`.
    let guess_source = || {
        crate::fmt::find(label).is_none()
            && !crate::fmt::runs_tests(label)
            && !builds(label)
            && looks_like_source(text)
            && !is_log()
    };
    // A file read stays byte for byte, unless the content shows it is a log.
    let read_of_non_log = || Label::parse(label).reads_file() && !is_log();
    if read_of_non_log() || is_diff(text) || guess_source() {
        return Route::Verbatim;
    }
    Route::Normal
}

/// A build tool or compiler: what it prints is diagnostics and progress, never a source file.
fn builds(label: &str) -> bool {
    const BUILDERS: [&str; 18] = [
        "bazel", "cc", "clang", "clang++", "cmake", "dotnet", "g++", "gcc", "javac", "kotlinc",
        "meson", "msbuild", "ninja", "rustc", "sbt", "scalac", "swiftc", "tsc",
    ];
    let program = Label::parse(label).program;
    let program = program.rsplit('/').next().unwrap_or(program);
    BUILDERS.binary_search(&program).is_ok()
}

fn untouchable(text: &str) -> Option<Risk> {
    let mut frames = 0usize;
    let mut trace_head = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("-----BEGIN ") && trimmed.ends_with("-----") {
            return Some(Risk::Pem);
        }
        if is_credential_line(trimmed) || holds_secret_token(trimmed) {
            return Some(Risk::Credential);
        }
        if is_sql_ddl(trimmed) {
            return Some(Risk::SqlDdl);
        }
        if is_trace_head(trimmed) {
            trace_head = true;
        }
        if is_frame(line) {
            frames += 1;
        }
    }
    (frames >= 2 && (trace_head || frames >= 3)).then_some(Risk::StackTrace)
}

/// A line that belongs to a stack trace itself: its head or one of its frames.
pub fn is_trace_line(line: &str) -> bool {
    is_frame(line) || is_trace_head(line.trim())
}

/// First line of a stack dump in one of the runtimes we know.
fn is_trace_head(t: &str) -> bool {
    t.starts_with("Traceback (most recent call last):")
        || t == "stack backtrace:"
        || (t.starts_with("goroutine ") && t.ends_with("]:"))
        || t.starts_with("Exception in thread ")
        || t.starts_with("Caused by: ")
}

/// One frame of a stack dump: Python `File "x", line N`, JVM/JS `at …`, Rust `N: sym` under a
/// backtrace, Go `\t/path/file.go:N`.
fn is_frame(line: &str) -> bool {
    let t = line.trim_start();
    if t.len() == line.len() && !line.starts_with('\t') {
        return false; // frames are always indented
    }
    if let Some(rest) = t.strip_prefix("File \"") {
        return rest.contains("\", line ");
    }
    if let Some(rest) = t.strip_prefix("at ") {
        let rest = rest.trim_end();
        return (rest.ends_with(')') && rest.contains('('))
            || ends_with_line_col(rest)
            || rest.ends_with(".rs")
            || ends_with_line_col(rest.trim_end_matches(')'));
    }
    if line.starts_with('\t') && (t.contains(".go:") || t.contains(".rs:")) {
        return t
            .split(".go:")
            .nth(1)
            .or_else(|| t.split(".rs:").nth(1))
            .is_some_and(|r| r.bytes().next().is_some_and(|b| b.is_ascii_digit()));
    }
    // Rust backtrace frame: `  12: core::panicking::panic`
    if let Some((num, sym)) = t.split_once(": ") {
        return !num.is_empty()
            && num.len() <= 3
            && num.bytes().all(|b| b.is_ascii_digit())
            && sym.contains("::");
    }
    false
}

fn ends_with_line_col(s: &str) -> bool {
    let mut parts = s.rsplitn(3, ':');
    let col = parts.next().unwrap_or("");
    let line = parts.next().unwrap_or("");
    parts.next().is_some()
        && !col.is_empty()
        && col.bytes().all(|b| b.is_ascii_digit())
        && !line.is_empty()
        && line.bytes().all(|b| b.is_ascii_digit())
}

/// Which lines belong to a paragraph (a run between blank lines) that holds a stack trace's
/// head or one of its frames: a formatter must keep every one of them.
pub fn trace_paragraphs(lines: &[&str]) -> Vec<bool> {
    let mut marks = vec![false; lines.len()];
    let mut start = 0;
    for end in 0..=lines.len() {
        if end == lines.len() || is_paragraph_break(lines[end]) {
            let paragraph = &lines[start..end];
            if paragraph
                .iter()
                .any(|l| is_frame(l) || is_trace_head(l.trim()))
            {
                marks[start..end].iter_mut().for_each(|m| *m = true);
            }
            start = end + 1;
        }
    }
    marks
}

/// A blank line, or one that is blank after a log-level tag (maven's `[INFO] `).
fn is_paragraph_break(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || matches!(t, "[INFO]" | "[WARNING]" | "[ERROR]" | "[DEBUG]")
}

/// `KEY=value`, `KEY: value`, `export KEY=value` or `"key": "value"` where the key names a
/// secret. The whole line must be that assignment, so prose that mentions a password is not.
pub fn is_credential_line(t: &str) -> bool {
    let t = t.strip_prefix("export ").unwrap_or(t).trim_start();
    let Some(sep) = t.find(['=', ':']) else {
        return url_with_password(t);
    };
    let key = t[..sep].trim().trim_matches(|c| c == '"' || c == '\'');
    let value = t[sep + 1..].trim().trim_end_matches(',').trim();
    let value = value.trim_matches(|c| c == '"' || c == '\'');
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return url_with_password(t);
    }
    if value.is_empty()
        || matches!(
            value,
            "null" | "none" | "None" | "{" | "[" | "true" | "false"
        )
        || is_version(value)
    {
        return false;
    }
    secret_key_name(key) || docker_config_key(key) || url_with_password(value)
}

/// The keys under which Kubernetes keeps a registry login: the whole Docker config, base64,
/// with every `auth` in it.
fn docker_config_key(key: &str) -> bool {
    key.eq_ignore_ascii_case(".dockerconfigjson") || key.eq_ignore_ascii_case(".dockercfg")
}

/// `1.2.1`, `^4.17.21`, `~0.3`: a dependency version in a manifest, not a secret.
fn is_version(value: &str) -> bool {
    let v = value.trim_start_matches(['^', '~', '=', '>', '<', 'v']);
    v.contains('.')
        && v.split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
}

fn secret_key_name(key: &str) -> bool {
    // Nearly every key names nothing secret: rule those out before splitting into words.
    const STEMS: [&[u8]; 7] = [
        b"pass", b"secret", b"token", b"key", b"cred", b"pwd", b"pat",
    ];
    let bytes = key.as_bytes();
    let has_stem = STEMS.iter().any(|stem| {
        bytes
            .windows(stem.len())
            .any(|w| w.eq_ignore_ascii_case(stem))
    });
    if !has_stem {
        return false;
    }
    // Split on separators and camelCase humps, compare upper-cased words.
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_uppercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    // The secret word names what the value is only when it ends the key: `GITHUB_TOKEN`,
    // `client_secret`, `STRIPE_SECRET_KEY` hold secrets; `TokenExpirationSeconds`,
    // `secretName` and `PASSWORD_FILE` hold a number, a name and a path.
    let Some(last) = words.last() else {
        return false;
    };
    matches!(
        last.as_str(),
        "PASSWORD"
            | "PASSWD"
            | "SECRET"
            | "TOKEN"
            | "APIKEY"
            | "PRIVATEKEY"
            | "CREDENTIALS"
            | "CREDENTIAL"
    ) || last.ends_with("PASSWORD")
        || last.ends_with("PASSWD")
        || last == "PASSPHRASE"
        || (words.len() >= 2 && matches!(last.as_str(), "KEY" | "PWD" | "PASS" | "PAT"))
        || words.windows(2).any(|p| {
            p[1] == "KEY"
                && matches!(
                    p[0].as_str(),
                    "ACCESS" | "SECRET" | "API" | "PRIVATE" | "SIGNING"
                )
        })
}

/// Prefixes of tokens that are secrets wherever they stand: GitHub, OpenAI and Anthropic,
/// Slack, GitLab, AWS access keys, Stripe, and JWTs (`eyJ`, a base64 `{"`).
const TOKEN_PREFIXES: [&str; 14] = [
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "sk-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "glpat-",
    "AKIA",
    "sk_live_",
    "eyJ",
];

/// A word that is a token by its form: a known prefix followed by at least 16 more
/// characters of a token's alphabet (32 for the short `sk-`, which package names can begin
/// with), with a digit among them.
fn looks_like_token(word: &str) -> bool {
    TOKEN_PREFIXES.iter().any(|p| {
        word.strip_prefix(p).is_some_and(|rest| {
            rest.len() >= if *p == "sk-" { 32 } else { 16 }
                && rest.bytes().any(|b| b.is_ascii_digit())
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.=".contains(&b))
        })
    })
}

/// `label` with every credential in it replaced by `***`, for writing it anywhere: the value
/// of a secret-named `KEY=value` or `--secret-flag value`, `curl -u user:pass`, `mysql -pX`, a
/// bearer or basic credential, a URL's password or token, and tokens known by their form.
pub fn redact_label(label: &str) -> std::borrow::Cow<'_, str> {
    const HIDDEN: &str = "***";
    let mut out = String::with_capacity(label.len());
    let mut changed = false;
    // The previous word asks for its value in the next one: `-u`, `--token`, `Bearer`.
    let mut value_next = false;
    let mut user_next = 0;
    // `mysql -pSECRET`: the password joined to its flag, for the MySQL clients only.
    let program = crate::doc::label::Label::parse(label).program;
    let mysql = matches!(program, "mysql" | "mysqldump" | "mysqladmin" | "mariadb");
    let mut rest = label;
    while !rest.is_empty() {
        let gap = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..gap]);
        rest = &rest[gap..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        let bare = word.trim_matches(|c| c == '\'' || c == '"');
        let quote = &word[..word.len() - word.trim_start_matches(['\'', '"']).len()];
        let closing = &word[word.trim_end_matches(['\'', '"']).len()..];
        let wanted = value_next && !bare.is_empty() && (user_next == 0 || bare.contains(':'));
        let redacted: Option<String> = if wanted || looks_like_token(bare) {
            Some(format!("{quote}{HIDDEN}{closing}"))
        } else if let Some((key, _)) = bare
            .split_once('=')
            .filter(|(k, v)| !v.is_empty() && secret_key_name(k.trim_start_matches('-')))
        {
            Some(format!("{quote}{key}={HIDDEN}{closing}"))
        } else if mysql && bare.starts_with("-p") && bare.len() > 2 && !bare.starts_with("--") {
            // `mysql -pSECRET`: the password joined to its flag.
            Some(format!("{quote}-p{HIDDEN}{closing}"))
        } else if url_with_password(bare) || url_with_token(bare) {
            Some(format!("{quote}{}{closing}", hide_userinfo(bare)))
        } else {
            None
        };
        let lower = bare.to_ascii_lowercase();
        // `-u user:pass` (curl) hides a value only when it holds a password.
        user_next = usize::from(matches!(lower.as_str(), "-u" | "--user"));
        value_next = user_next == 1
            || matches!(
                lower.as_str(),
                "bearer" | "basic" | "token" | "--password" | "--pass"
            )
            || (bare.starts_with("--") && !bare.contains('=') && secret_key_name(&bare[2..]));
        match redacted {
            Some(r) => {
                changed = true;
                out.push_str(&r);
            }
            None => out.push_str(word),
        }
    }
    if changed {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(label)
    }
}

/// The secrets a line may hold whatever key it is under, one rule a row: tokens known by
/// their form, URLs carrying a token or password, Slack webhooks, `.netrc` passwords, Docker
/// config `auth` values, PuTTY key files, and command lines with a password in them.
fn holds_secret_token(line: &str) -> bool {
    if line.starts_with("PuTTY-User-Key-File-") || command_with_password(line) {
        return true;
    }
    // Words without allocating: every output line passes here.
    let words = || {
        line.split(|c: char| {
            c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '=' | '(' | ')')
        })
        .filter(|w| !w.is_empty() && *w != ":")
    };
    // The word after `key`, if any.
    let after = |key: &str| words().skip_while(|w| *w != key).nth(1);
    // `machine host login user password SECRET` (.netrc) and `"auth": "BASE64"` (Docker).
    if line.starts_with("machine ") && after("password").is_some() {
        return true;
    }
    if memchr::memchr(b'"', line.as_bytes()).is_some()
        && line.contains("\"auth\"")
        && after("auth")
            .or_else(|| after("auth:"))
            .is_some_and(|v| v.len() >= 16)
    {
        return true;
    }
    // Tokens, webhooks and URLs with credentials are long words: split on bytes, and look
    // closer only at words of 10 bytes or more (the shortest token is 19).
    line.as_bytes()
        .split(|&b| {
            matches!(
                b,
                b' ' | b'\t' | b'"' | b'\'' | b',' | b';' | b'=' | b'(' | b')'
            )
        })
        .filter(|w| w.len() >= 10)
        .filter_map(|w| std::str::from_utf8(w).ok())
        .any(|w| {
            // Every token prefix begins with one of these; every URL holds `://`.
            (matches!(w.as_bytes()[0], b'g' | b's' | b'x' | b'A' | b'e') && looks_like_token(w))
                || (memchr::memmem::find(w.as_bytes(), b"://").is_some()
                    && (w.contains("hooks.slack.com/services/T")
                        || url_with_token(w)
                        || url_with_password(w)))
        })
}

/// A command line, as `ps`, a shell history or a script shows it, with a password among its
/// arguments: `mysql … -pSECRET`, `--password=SECRET` (or a flag whose value is
/// `password=SECRET`), `curl -u user:SECRET`. Cheap substring checks come first: every output
/// line passes here.
fn command_with_password(line: &str) -> bool {
    let has = |needle: &[u8]| memchr::memmem::find(line.as_bytes(), needle).is_some();
    let words = || line.split_ascii_whitespace();
    if has(b"mysql") || has(b"mariadb") {
        let mut client = false;
        for word in words() {
            let name = word.rsplit('/').next().unwrap_or(word);
            if name.starts_with("mysql") || name == "mariadb" {
                client = true;
            } else if client && word.starts_with("-p") && word.len() > 2 {
                return true;
            }
        }
    }
    if has(b"--") && has(b"=") {
        let secret_pair = |pair: &str| {
            pair.split_once('=')
                .is_some_and(|(key, value)| !value.is_empty() && secret_key_name(key))
        };
        let flagged = words().filter_map(|w| w.strip_prefix("--")).any(|flag| {
            secret_pair(flag) || flag.split_once('=').is_some_and(|(_, v)| secret_pair(v))
        });
        if flagged {
            return true;
        }
    }
    if has(b"curl") && (has(b"-u") || has(b"--user")) {
        let mut user_next = false;
        for word in words() {
            if user_next && word.split_once(':').is_some_and(|(_, p)| !p.is_empty()) {
                return true;
            }
            user_next = matches!(word, "-u" | "--user");
        }
    }
    false
}

/// `https://TOKEN@host`: a URL whose user part alone is a long token.
fn url_with_token(s: &str) -> bool {
    let Some(scheme_end) = s.find("://") else {
        return false;
    };
    let authority = s[scheme_end + 3..].split('/').next().unwrap_or("");
    authority
        .rsplit_once('@')
        .is_some_and(|(user, _)| !user.contains(':') && user.len() >= 20)
}

/// The URL with its user part, or its password where there is a user name, hidden.
fn hide_userinfo(url: &str) -> String {
    let scheme_end = url.find("://").map_or(0, |i| i + 3);
    let authority_end = url[scheme_end..]
        .find('/')
        .map_or(url.len(), |i| scheme_end + i);
    let Some(at) = url[scheme_end..authority_end].rfind('@') else {
        return url.to_string();
    };
    let userinfo = &url[scheme_end..scheme_end + at];
    let shown = match userinfo.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => "***".to_string(),
    };
    format!("{}{shown}{}", &url[..scheme_end], &url[scheme_end + at..])
}

fn url_with_password(s: &str) -> bool {
    let Some(scheme_end) = s.find("://") else {
        return false;
    };
    let rest = &s[scheme_end + 3..];
    let authority = rest.split(['/', ' ', '\t']).next().unwrap_or("");
    match authority.rsplit_once('@') {
        Some((userinfo, _)) => userinfo.split_once(':').is_some_and(|(_, p)| !p.is_empty()),
        None => false,
    }
}

fn is_sql_ddl(t: &str) -> bool {
    let mut words = t.split_ascii_whitespace();
    let Some(verb) = words.next() else {
        return false;
    };
    if !["CREATE", "ALTER", "DROP"]
        .iter()
        .any(|v| verb.eq_ignore_ascii_case(v))
    {
        return false;
    }
    let mut object = words.next().unwrap_or("");
    for skip in [
        "OR",
        "REPLACE",
        "UNIQUE",
        "TEMP",
        "TEMPORARY",
        "IF",
        "NOT",
        "EXISTS",
    ] {
        if object.eq_ignore_ascii_case(skip) {
            object = words.next().unwrap_or("");
        }
    }
    [
        "TABLE",
        "INDEX",
        "VIEW",
        "SCHEMA",
        "DATABASE",
        "SEQUENCE",
        "TRIGGER",
        "TYPE",
        "EXTENSION",
        "FUNCTION",
    ]
    .iter()
    .any(|o| object.eq_ignore_ascii_case(o))
        && words.next().is_some()
}

/// Output that mentions a risky marker without being one — a secret assigned inside a longer
/// line (a grep hit, a log line), a PEM header or DDL mid-line, a traceback header without
/// frames: it may be compressed losslessly but is never written to the store.
fn mentions_risk(text: &str) -> bool {
    let bytes = text.as_bytes();
    let has = |needle: &str| memchr::memmem::find(bytes, needle.as_bytes()).is_some();
    if has("-----BEGIN ") || has("Traceback (most recent call last)") {
        return true;
    }
    if has("://") && text.lines().any(url_with_password) {
        return true;
    }
    if (has("TABLE ") || has("table ") || has("Table "))
        && text.lines().any(|l| {
            contains_ignore_case(l, "create table ") || contains_ignore_case(l, "alter table ")
        })
    {
        return true;
    }
    text.lines().any(inline_secret)
}

fn contains_ignore_case(line: &str, needle: &str) -> bool {
    line.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// `…API_KEY=abc123def…` or `… "token": "eyJhbGciOi…"` inside a line: a secret-named key
/// right before `=` or `:`, followed by a value that looks like a secret rather than a type,
/// a number or a version.
fn inline_secret(line: &str) -> bool {
    let bytes = line.as_bytes();
    for (at, _) in line.match_indices(['=', ':']) {
        let key_start = line[..at]
            .trim_end_matches(['"', '\'', ' '])
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let key = line[key_start..at].trim_end_matches(['"', '\'', ' ']);
        if key.is_empty() || !secret_key_name(key) {
            continue;
        }
        let value: String = line[at + 1..]
            .trim_start_matches([' ', '"', '\''])
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | ',' | ';' | ')'))
            .collect();
        let first = value.bytes().next().unwrap_or(b' ');
        if value.len() >= 6
            && first.is_ascii_alphanumeric()
            && !is_version(&value)
            && bytes.get(at + 1) != Some(&b':')
        {
            return true;
        }
    }
    false
}

/// Content that reads as a log: most non-blank lines (of the first 2000) open with a timestamp,
/// or carry a level word (`INFO`, `WARN`, `ERROR`, …) among their first words. Source, configs
/// and data rarely do; a program printing its own timestamps and levels is writing a log.
/// Lines that nearly all open with a timestamp are a log even when they end like code (logged
/// SQL statements end in `;`); level words alone are not enough then.
pub fn looks_like_log(text: &str) -> bool {
    let mut total = 0usize;
    let mut stamped = 0usize;
    let mut logged = 0usize;
    for line in text.lines().take(2000) {
        let t = line.trim_start();
        if t.is_empty() {
            continue;
        }
        total += 1;
        if opens_with_timestamp(t) {
            stamped += 1;
            logged += 1;
        } else if has_level_word(t) {
            logged += 1;
        }
    }
    let most = |n: usize| total >= 10 && n * 10 >= total * 8;
    most(stamped) || (most(logged) && !looks_like_source(text))
}

/// `2026-12-03 09:05:43`, `2026-12-03T09:05:43Z`, `[03/Dec/2026 09:05:45]`, `Dec  3 09:05:45`,
/// `09:05:43.123`: a date or a clock time within the first 48 bytes of the line.
fn opens_with_timestamp(line: &str) -> bool {
    let head = crate::text::cut_at_char(line, 48).as_bytes();
    let clock = head.windows(8).any(|w| {
        w[0].is_ascii_digit()
            && w[1].is_ascii_digit()
            && w[2] == b':'
            && w[3].is_ascii_digit()
            && w[4].is_ascii_digit()
            && w[5] == b':'
            && w[6].is_ascii_digit()
            && w[7].is_ascii_digit()
    });
    let date = head.windows(10).any(|w| {
        w[..4].iter().all(u8::is_ascii_digit)
            && w[4] == b'-'
            && w[5..7].iter().all(u8::is_ascii_digit)
            && w[7] == b'-'
            && w[8..10].iter().all(u8::is_ascii_digit)
    });
    clock || date
}

/// A level word among the first six words: `INFO`, `[WARN]`, `E/` aside, or `level=error`.
/// Upper case only, except after `level=`, so prose ("an error in…") is not a log.
fn has_level_word(line: &str) -> bool {
    const LEVELS: [&str; 10] = [
        "TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "WARNING", "ERROR", "FATAL", "CRITICAL",
        "PANIC",
    ];
    line.split_whitespace().take(6).any(|word| {
        let (w, any_case) = match word.strip_prefix("level=") {
            Some(rest) => (rest, true),
            None => (word, false),
        };
        let w = w.trim_matches(|c: char| !c.is_ascii_alphabetic());
        LEVELS.iter().any(|l| {
            if any_case {
                w.eq_ignore_ascii_case(l)
            } else {
                w == *l
            }
        })
    })
}

pub fn is_diff(text: &str) -> bool {
    let mut minus = false;
    for line in text.lines().take(400) {
        if line.starts_with("diff --git ") || line.starts_with("Index: ") {
            return true;
        }
        if line.starts_with("--- ") {
            minus = true;
        } else if minus && line.starts_with("+++ ") {
            return true;
        } else {
            minus = false;
        }
    }
    false
}

/// Content that reads as a program: most non-blank lines end in a bracket or semicolon, open a
/// block, or start with a declaration keyword.
pub fn looks_like_source(text: &str) -> bool {
    if looks_like_json(text) {
        return false;
    }
    let mut total = 0usize;
    let mut code = 0usize;
    for line in text.lines().take(2000) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        total += 1;
        if code_like(t) {
            code += 1;
        }
    }
    total >= 5 && code * 5 >= total * 3
}

/// Pretty-printed JSON also ends its lines in brackets and commas, but it is data: it opens
/// with `{` or `[` and its next line opens a key, a string, a value or a nested bracket.
fn looks_like_json(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    let second = lines.next().unwrap_or("");
    let opens = |l: &str| {
        l.starts_with(['"', '{', '[', ']', '}']) || l.starts_with(|c: char| c.is_ascii_digit())
    };
    (first == "{"
        || first == "["
        || (first.starts_with(['{', '[']) && first.len() > 1 && opens(first[1..].trim_start())))
        && (second.is_empty() || opens(second))
}

fn code_like(t: &str) -> bool {
    const STARTS: [&str; 34] = [
        "fn ",
        "pub ",
        "let ",
        "use ",
        "impl ",
        "struct ",
        "enum ",
        "mod ",
        "match ",
        "def ",
        "class ",
        "import ",
        "from ",
        "return",
        "if ",
        "for ",
        "while ",
        "const ",
        "function ",
        "export ",
        "#include",
        "package ",
        "func ",
        "var ",
        "//",
        "/*",
        "* ",
        "#[",
        "@",
        "else",
        "}",
        "try",
        "except",
        "#!",
    ];
    if STARTS.iter().any(|s| t.starts_with(s)) {
        return true;
    }
    let last = t.as_bytes()[t.len() - 1];
    matches!(last, b'{' | b'}' | b';' | b')' | b',' | b'(' | b'[' | b']')
        || (last == b':' && !t.contains(": "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_formats_each_route_as_credentials() {
        let rows = [
            "PGPASSWORD=hunter2pg",
            "REDIS_PASS=hunter2",
            "SIGNING_PASSPHRASE=correct horse",
            "GITHUB_PAT=hunter2pat",
            "token ghp_0123456789abcdefghijABCDEFGH1234",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "remote: https://ghp_0123456789abcdefghijABCDEFGH1234@github.com/o/r.git",
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "set-cookie: session=eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjoxMjM0NX0.sig123456; Path=/",
            "machine api.example.test login bob password hunter2netrc",
            "\"auth\": \"Ym9iOmh1bnRlcjJkb2NrZXJjb25maWc=\"",
            "SENTRY_DSN=https://0123456789abcdef0123456789abcdef@o123.ingest.sentry.io/42",
            "webhook: https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "PuTTY-User-Key-File-3: ssh-ed25519",
            "mysql://root:hunter2@db:3306/app",
            "root  4242  0.0  0.1  24412  9876 ?  S  10:00  0:00 mysql -uroot -pS3cretps -h db",
            "dev   4243  0.0  0.0   8840  3120 pts/1 S+ 10:01 0:00 /usr/bin/mysqldump -pS3cret app",
            "ci    4244  0.3  0.2  99120 20480 ?  Sl 10:02 0:04 node deploy.js --api-key=abc123def",
            "kubectl create secret generic db --from-literal=password=S3cretlit",
            "ci    4245  0.0  0.0   9000  2000 ?  S  10:03 0:00 curl -u deploy:S3cretcurl https://x",
            ".dockerconfigjson: eyJhdXRocyI6eyJyZWdpc3RyeS5leGFtcGxlIjp7ImF1dGgiOiJZbTlpIn19fQ==",
            "\".dockerconfigjson\": \"eyJhdXRocyI6eyJyZWdpc3RyeS5leGFtcGxlIjp7fX19\",",
        ];
        for row in rows {
            assert_eq!(
                untouchable(row),
                Some(Risk::Credential),
                "{row} is not taken for a credential"
            );
        }
        // Prose, columns and package names that only look near one stay ordinary.
        for line in [
            "warning: the password reset flow has no rate limit",
            "ALTER users.password_hash to argon2id",
            "Successfully installed sk-video-1.1.10 scikit-learn-1.5.2",
            "eyJ is how base64 JSON begins",
            "   Compiling ghp_parser v0.1.0",
            "root  4246  0.0  0.1  24412  9876 ?  S  10:00  0:00 mysqld --port=3306 -P 3306",
            "mysql -p",
            "tool --password-file=/run/secrets/db --token-count=5",
            "curl -u deploy https://x",
            "type: kubernetes.io/dockerconfigjson",
        ] {
            assert_eq!(untouchable(line), None, "{line}");
        }
    }

    #[test]
    fn labels_lose_their_credentials_and_nothing_else() {
        let cases = [
            (
                "curl -u admin:hunter2 https://x/api",
                "curl -u *** https://x/api",
            ),
            ("mysql -pS3cret -h db", "mysql -p*** -h db"),
            ("mysql -u root -pS3cret db", "mysql -u root -p*** db"),
            ("PGPASSWORD=s3cret psql -h db", "PGPASSWORD=*** psql -h db"),
            ("REDIS_PASS=x redis-cli", "REDIS_PASS=*** redis-cli"),
            ("GITHUB_PAT=abc gh pr list", "GITHUB_PAT=*** gh pr list"),
            (
                "curl -H 'Authorization: Bearer abc.def' x",
                "curl -H 'Authorization: Bearer ***' x",
            ),
            (
                "git push https://bob:pw@host/r.git",
                "git push https://bob:***@host/r.git",
            ),
            (
                "git clone https://ghp_0123456789abcdefghijABCD@github.com/o/r",
                "git clone https://***@github.com/o/r",
            ),
            ("echo ghp_0123456789abcdefghijABCD", "echo ***"),
            ("tool --api-key abc123 run", "tool --api-key *** run"),
            ("tool --token=abc123 run", "tool --token=*** run"),
        ];
        for (label, want) in cases {
            assert_eq!(redact_label(label), want, "{label}");
        }
        // Nothing secret, nothing changed.
        for label in [
            "cargo test --workspace",
            "grep -rn password_hash src/",
            "npm run build -- --mode prod",
            "git log -p -3",
            "pytest -k test_password_reset",
        ] {
            assert!(
                matches!(redact_label(label), std::borrow::Cow::Borrowed(_)),
                "{label}"
            );
        }
    }

    #[test]
    fn credentials_are_whole_lines() {
        assert!(is_credential_line("STRIPE_SECRET_KEY=sk_test_123"));
        assert!(is_credential_line("export AWS_ACCESS_KEY_ID=AKIA123"));
        assert!(is_credential_line("password: hunter2"));
        assert!(is_credential_line("\"access_token\": \"abc\","));
        assert!(is_credential_line("DATABASE_URL=postgres://u:pw@db/x"));
        assert!(!is_credential_line(
            "error: the password was rejected by the server"
        ));
        assert!(!is_credential_line("tokens: 5"));
        assert!(!is_credential_line("max_tokens: 100"));
        assert!(!is_credential_line("password="));
        assert!(!is_credential_line("TokenExpirationSeconds:  3607"));
        assert!(!is_credential_line("secretName: app-tls"));
        assert!(is_credential_line("GITHUB_TOKEN=ghp_abcdef0123456789"));
        assert!(is_credential_line("client_secret: s3cr3t-value"));
        assert_eq!(
            route("go test -v", "--- PASS: TestBucketRefill (0.00s)\n"),
            Route::Normal
        );
    }

    #[test]
    fn traces_need_frames() {
        let py = "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    f()\n  File \"a.py\", line 2, in f\n    1/0\nZeroDivisionError: division by zero\n";
        assert_eq!(
            route("python3 a.py", py),
            Route::Untouchable(Risk::StackTrace)
        );
        let js = "Error: boom\n    at f (/app/x.js:3:9)\n    at Object.<anonymous> (/app/x.js:5:1)\n    at Module._compile (node:internal/modules/cjs/loader:1256:14)\n";
        assert_eq!(route("node x.js", js), Route::Untouchable(Risk::StackTrace));
        let panic = "thread 'main' panicked at src/main.rs:2:5:\nboom\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(route("cargo run", panic), Route::Normal);
    }

    #[test]
    fn trace_paragraphs_cover_whole_blocks() {
        let lines = [
            "test a ... ok",
            "",
            "Error: boom",
            "    at f (x.js:1:2)",
            "    at g (x.js:3:4)",
            "",
            "Tests: 1 failed",
        ];
        assert_eq!(
            trace_paragraphs(&lines),
            [false, false, true, true, true, false, false]
        );
    }

    #[test]
    fn ddl_and_pem_and_mentions() {
        assert_eq!(
            route("cat m.sql", "CREATE TABLE users (\n id int\n);\n"),
            Route::Untouchable(Risk::SqlDdl)
        );
        assert_eq!(
            route(
                "cat k",
                "-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----\n"
            ),
            Route::Untouchable(Risk::Pem)
        );
        assert_eq!(
            route("grep", "docs/a.md:3: never commit your password\n"),
            Route::Normal
        );
        assert_eq!(
            route("grep", "src/cfg.py:3: API_KEY = \"sk_live_abcdef123\"\n"),
            Route::NoStore
        );
        assert_eq!(
            route(
                "cargo build",
                "15 | pub fn verify(secret: &str) -> bool {\n"
            ),
            Route::Normal
        );
        assert_eq!(
            route("npm view", "    \"pbkdf2-password\": \"1.2.1\",\n"),
            Route::Normal
        );
        assert_eq!(
            route("log", "connecting to postgres://app:hunter22@db/app\n"),
            Route::Untouchable(Risk::Credential)
        );
        assert_eq!(
            route("log", "saw -----BEGIN CERTIFICATE----- in the bundle\n"),
            Route::NoStore
        );
    }

    #[test]
    fn source_and_diffs_are_verbatim() {
        assert_eq!(route("cat src/lib.rs", "hello\n"), Route::Verbatim);
        assert_eq!(
            route("git diff", "diff --git a/x b/x\n--- a/x\n+++ b/x\n"),
            Route::Verbatim
        );
        let code = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\nfn other() {\n}\n";
        assert_eq!(route("x", code), Route::Verbatim);
        let json =
            "{\n  \"items\": [\n    {\n      \"name\": \"a\",\n      \"n\": 1\n    }\n  ]\n}\n";
        assert_eq!(route("kubectl get pods -o json", json), Route::Normal);
        let ip = "[ {\n        \"ifindex\": 1,\n        \"ifname\": \"lo\",\n        \"mtu\": 65536\n    },{\n        \"ifindex\": 2,\n        \"mtu\": 1500\n    } ]\n";
        assert_eq!(route("ip -j -p link show", ip), Route::Normal);
        // A compiler's diagnostics end in `)` and `]` like code; a build tool prints no source.
        let msbuild = "Program.cs(11,33): error CS0246: The type 'x' could not be found [a.csproj]\nProgram.cs(13,30): error CS1579: foreach statement cannot operate [a.csproj]\n\nBuild FAILED.\n\nProgram.cs(11,33): error CS0246: The type 'x' could not be found [a.csproj]\nProgram.cs(13,30): error CS1579: foreach statement cannot operate [a.csproj]\n    0 Warning(s)\n    2 Error(s)\n";
        assert_eq!(route("x", msbuild), Route::Verbatim);
        assert_eq!(route("dotnet build", msbuild), Route::Normal);
        assert_eq!(
            route(
                "x",
                "Compiling a v1\nCompiling b v2\nFinished dev\nok\nall good\n"
            ),
            Route::Normal
        );
    }
}
