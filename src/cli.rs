//! Argument parsing on lexopt: one table per command (`COMMANDS`) names its flags, operands and
//! help text, the parsers recognise a flag only through its command's table, and help is made
//! from the tables alone. Nothing here does I/O; a usage error is one line and exit status 2.

use lexopt::prelude::*;
use std::ffi::OsString;
use std::path::PathBuf;

pub enum Command {
    Compress(Compress),
    Expand {
        reference: String,
    },
    Tokens {
        file: Option<PathBuf>,
    },
    Pin {
        hash: String,
        pinned: bool,
    },
    Forget {
        hash: String,
    },
    Reset {
        all: bool,
    },
    Demo {
        keep: bool,
    },
    Stats(Stats),
    Gain(Gain),
    HttpProxy(HttpProxy),
    Hook {
        client: String,
    },
    Resume,
    Recall {
        query: String,
    },
    PrintOpencodePlugin,
    Init(Setup),
    Uninstall(Setup),
    Doctor {
        global: bool,
        fix: bool,
    },
    Mcp(Mcp),
    McpProxy(Proxy),
    Discover(Discover),
    /// `sqz help` (no topic) or one command's help.
    Help {
        topic: Option<&'static CommandSpec>,
    },
    Version,
}

#[derive(Default)]
pub struct Compress {
    pub label: Option<String>,
    pub no_cache: bool,
    /// The trailer came from the hook's EXIT trap (`trailer::strip_trapped`).
    pub trap: bool,
    pub text: Option<String>,
}

/// The flags of `sqz stats`.
pub struct Stats {
    pub breakdown: bool,
    pub cost: bool,
    pub json: bool,
    pub days: u32,
    pub project: Option<PathBuf>,
    /// US dollars per million input tokens, if given.
    pub price: Option<f64>,
}

/// The flags of `sqz proxy`.
pub struct HttpProxy {
    pub port: u16,
    pub upstream: Option<String>,
    pub max_body_mb: usize,
}

/// The flags of `sqz gain`.
pub struct Gain {
    pub days: u32,
    pub html: Option<PathBuf>,
}

/// The flags and operands of `sqz discover`.
#[derive(Default)]
pub struct Discover {
    pub replay: bool,
    pub json: bool,
    pub paths: Vec<PathBuf>,
}

/// The flags of `sqz mcp`.
#[derive(Default)]
pub struct Mcp {
    pub http: bool,
    pub port: u16,
    pub allow: Vec<PathBuf>,
    /// Where the HTTP transport keeps its bearer token.
    pub token_file: Option<PathBuf>,
}

/// The flags of `sqz mcp proxy` and the upstream command line.
#[derive(Default)]
pub struct Proxy {
    pub lazy_tools: bool,
    pub no_desc: bool,
    pub no_cache: bool,
    /// The upstream program and its arguments, as written.
    pub command: Vec<OsString>,
}

/// The flags of `sqz init` and `sqz uninstall`.
#[derive(Default)]
pub struct Setup {
    pub global: bool,
    pub only: Vec<String>,
    pub skip: Vec<String>,
    pub dry_run: bool,
}

/// One command: how it is called and what its help says.
#[derive(Debug)]
pub struct CommandSpec {
    /// The words after `sqz`, e.g. `mcp proxy`.
    pub name: &'static str,
    /// The operands as the usage line shows them, e.g. `REF` or `[FILE]`; empty for none.
    pub args: &'static str,
    /// One complete sentence for the command list of `sqz help`.
    pub summary: &'static str,
    /// What `sqz COMMAND --help` says after the summary; empty when the summary says it all.
    pub about: &'static str,
    /// Every flag the command accepts besides `-h/--help`, which every command accepts.
    pub flags: &'static [Flag],
}

/// One flag of one command.
#[derive(Debug)]
pub struct Flag {
    pub long: &'static str,
    pub short: Option<char>,
    /// The name of the value it takes, e.g. `LABEL`; `None` for a switch.
    pub value: Option<&'static str>,
    /// Whether it may be given again, each time adding to a list.
    pub repeats: bool,
    pub meaning: &'static str,
}

impl Flag {
    const fn switch(long: &'static str, meaning: &'static str) -> Flag {
        Flag {
            long,
            short: None,
            value: None,
            repeats: false,
            meaning,
        }
    }

    const fn with_value(long: &'static str, value: &'static str, meaning: &'static str) -> Flag {
        Flag {
            value: Some(value),
            ..Flag::switch(long, meaning)
        }
    }

    const fn with_short(self, short: char) -> Flag {
        Flag {
            short: Some(short),
            ..self
        }
    }

    const fn repeated(self) -> Flag {
        Flag {
            repeats: true,
            ..self
        }
    }
}

/// The flag every command accepts, and `sqz` alone too.
pub const HELP: Flag = Flag::switch("help", "show this help").with_short('h');

const VERSION: Flag = Flag::switch("version", "print the version").with_short('V');

/// The flags of `sqz` itself, before any command (`-h/--help` besides).
pub const TOP_FLAGS: &[Flag] = &[VERSION];

const SETUP_FLAGS: &[Flag] = &[
    Flag::switch(
        "global",
        "user-level files under HOME instead of the current project",
    ),
    Flag::with_value(
        "only",
        "C,…",
        "just these clients, configured even when not found: claude gemini copilot opencode codex kiro cursor windsurf cline zed",
    )
    .repeated(),
    Flag::with_value("skip", "C,…", "not these clients").repeated(),
    Flag::switch("dry-run", "print what would be written, write nothing"),
];

static COMPRESS: CommandSpec = CommandSpec {
    name: "compress",
    args: "[TEXT]",
    summary: "Compress stdin (or TEXT) for an agent.",
    about: "Output goes to stdout, one [sqz] header to stderr.\nA final line __SQZ_EXIT_<code>__ is stripped and becomes sqz's exit status.",
    flags: &[
        Flag::with_value(
            "cmd",
            "LABEL",
            "the command that produced the output (picks a formatter)",
        ),
        Flag::switch(
            "no-cache",
            "no references, nothing stored; only lossless stages run",
        ),
        Flag::switch(
            "no-abbrev",
            "accepted for compatibility; sqz never abbreviates phrases",
        ),
        Flag::switch(
            "trap",
            "an EXIT trap printed the trailer: the last one counts even when background output follows",
        ),
    ],
};

static EXPAND: CommandSpec = CommandSpec {
    name: "expand",
    args: "REF",
    summary: "Print the original bytes behind a reference.",
    about: "REF is a unique hash prefix, a whole §ref:…§ token, or HASH:La-b for lines a to b.\nExit 0 found, 1 none, 2 ambiguous or malformed, 3 store error.",
    flags: &[],
};

static TOKENS: CommandSpec = CommandSpec {
    name: "tokens",
    args: "[FILE]",
    summary: "Print the approximate cl100k token count of FILE or stdin.",
    about: "",
    flags: &[],
};

static PIN: CommandSpec = CommandSpec {
    name: "pin",
    args: "HASH",
    summary: "Exempt a stored entry from freshness checks, so its references stay valid.",
    about: "",
    flags: &[],
};

static UNPIN: CommandSpec = CommandSpec {
    name: "unpin",
    args: "HASH",
    summary: "Undo sqz pin.",
    about: "",
    flags: &[],
};

static FORGET: CommandSpec = CommandSpec {
    name: "forget",
    args: "HASH",
    summary: "Delete one stored entry.",
    about: "",
    flags: &[],
};

static RESET: CommandSpec = CommandSpec {
    name: "reset",
    args: "",
    summary: "Delete every stored entry.",
    about: "",
    flags: &[Flag::switch(
        "all",
        "also delete the event history and metadata",
    )],
};

static HOOK: CommandSpec = CommandSpec {
    name: "hook",
    args: "CLIENT",
    summary: "Answer one agent client's hook, which never blocks the command.",
    about: "precompact: mark everything served so far as no longer in context (Claude Code\nPreCompact), so no earlier output is referenced again.\nclaude: Claude Code PreToolUse on Bash; rewrites a command so its output is compressed.\nclaude-post: Claude Code PostToolUse on Bash; compresses output the rewrite left alone.\ngemini: Gemini CLI AfterTool on run_shell_command. copilot: Copilot CLI postToolUse on bash.\nopencode: {\"command\": …, \"output\": …} in, {\"output\": …} out, for the OpenCode plugin.\nOn anything unexpected the command runs as written.",
    flags: &[],
};

static RECALL: CommandSpec = CommandSpec {
    name: "recall",
    args: "QUERY",
    summary: "Search everything sqz served (BM25) and print the best 10 entries.",
    about: "Each entry shows its label, age, §ref:HASH§ (for sqz expand) and a snippet.\nExit 0 with hits, 1 without.",
    flags: &[],
};

static RESUME: CommandSpec = CommandSpec {
    name: "resume",
    args: "",
    summary: "Print a short guide to what sqz served recently, with the sqz expand command for each.",
    about: "An agent gets its outputs back with it after a compaction (Claude Code SessionStart,\nsource compact).",
    flags: &[],
};

static PRINT_OPENCODE_PLUGIN: CommandSpec = CommandSpec {
    name: "print-opencode-plugin",
    args: "",
    summary: "Print the OpenCode plugin, which asks sqz hook opencode about each bash output.",
    about: "Save it as ~/.config/opencode/plugins/sqz.ts.",
    flags: &[],
};

static INIT: CommandSpec = CommandSpec {
    name: "init",
    args: "",
    summary:
        "Configure the agents found under HOME to use sqz (hooks, allow rules, MCP, guidance).",
    about: "Existing files are merged, never replaced; running it again changes nothing.",
    flags: SETUP_FLAGS,
};

static UNINSTALL: CommandSpec = CommandSpec {
    name: "uninstall",
    args: "",
    summary: "Remove exactly what sqz init added, leaving everything else.",
    about: "",
    flags: SETUP_FLAGS,
};

static DOCTOR: CommandSpec = CommandSpec {
    name: "doctor",
    args: "",
    summary: "Report per client whether sqz is set up, then sqz on PATH and the last compression.",
    about: "Per client: found, tier, configured, duplicate or stale hooks, missing allow rules and\nMCP registration. Exit 0 when every found client is configured.",
    flags: &[
        Flag::switch("global", "check only the user-level files under HOME"),
        Flag::switch("fix", "run sqz init where a client is broken or not set up"),
    ],
};

static MCP: CommandSpec = CommandSpec {
    name: "mcp",
    args: "",
    summary: "Run the MCP server on stdio (or Streamable HTTP on 127.0.0.1:N at /mcp) until end of input.",
    about: "Newline-delimited JSON-RPC. Tools: sqz_read_file, sqz_grep, sqz_list_dir, sqz_recall,\nexpand, compress, passthrough. Also reached as sqz-mcp.",
    flags: &[
        Flag::with_value("transport", "stdio|http", "stdio (default) or http").with_short('t'),
        Flag::with_value(
            "port",
            "N",
            "the HTTP port (implies --transport http; default 3000)",
        )
        .with_short('p'),
        Flag::with_value(
            "allow",
            "PATH",
            "let the file tools read under PATH too; by default they stay inside the working directory and the client's MCP roots",
        )
        .repeated(),
        Flag::with_value(
            "token-file",
            "PATH",
            "HTTP: read the bearer token from PATH, or write a new one there (0600); default a new token each start",
        ),
        VERSION,
    ],
};

static MCP_PROXY: CommandSpec = CommandSpec {
    name: "mcp proxy",
    args: "-- CMD ARGS…",
    summary: "Run the stdio MCP server CMD behind sqz, compressing its results.",
    about: "Successful text results are compressed (repeats become refs), tool descriptions\ncompacted, and sqz_expand added.",
    flags: &[
        Flag::switch(
            "lazy-tools",
            "one-sentence descriptions plus a sqz_tool_help tool with the full text",
        ),
        Flag::switch("no-desc", "leave tool descriptions as they are"),
        Flag::switch("no-cache", "store nothing, no refs; only lossless compression"),
    ],
};

static DISCOVER: CommandSpec = CommandSpec {
    name: "discover",
    args: "[PATH…]",
    summary: "Replay agent sessions through sqz and report what it would have saved.",
    about: "PATHs are session files (.jsonl, .json) of Claude Code, Codex CLI, Copilot CLI,\nOpenCode or Gemini CLI, told apart by content, or directories searched for them\n(default ~/.claude/projects). Each file is one session in its own throwaway store.\nTwo columns, per client: the hook path (what that client's hooks change) and routed\n(every result through compress). --replay is required.",
    flags: &[
        Flag::switch("replay", "replay every tool result through sqz"),
        Flag::switch("json", "print the report as JSON"),
    ],
};

static DEMO: CommandSpec = CommandSpec {
    name: "demo",
    args: "",
    summary: "Run the main job on bundled sample outputs in a throwaway store.",
    about: "",
    flags: &[Flag::switch(
        "keep",
        "keep the store and print its path, to try sqz stats and sqz gain on it",
    )],
};

static HTTP_PROXY: CommandSpec = CommandSpec {
    name: "proxy",
    args: "",
    summary: "Compress the tool results in OpenAI, Anthropic and Google request bodies on 127.0.0.1.",
    about: "POST a body to /v1/chat/completions, /v1/responses, /v1/messages or\n/v1beta/models/M:generateContent and get {\"compressed_body\": …, \"original_tokens\", …} back,\nor with --upstream have it forwarded and the answer streamed back. Only tool results\nchange; each is sent the same way on every turn, so prompt caches keep hitting. GET\n/health answers {\"status\":\"ok\"}.",
    flags: &[
        Flag::with_value("port", "N", "the port on 127.0.0.1 (default 8080; 0 picks a free one)").with_short('p'),
        Flag::with_value(
            "upstream",
            "URL",
            "forward to this plain-HTTP base URL (a local gateway that holds TLS and keys)",
        ),
        Flag::with_value("max-body-mb", "N", "larger bodies get 413 (default 32)"),
    ],
};

static STATS: CommandSpec = CommandSpec {
    name: "stats",
    args: "",
    summary: "Show what sqz saved: calls, tokens in and out, the top commands, and regret signals.",
    about: "Counted from the store's event rows with the tokenizer the headers use. Regret signals:
quick re-runs (the same output again within SQZ_REGRET_WINDOW_SECS of being served
compressed) and expands, each as a share of calls. Days are UTC.",
    flags: &[
        Flag::switch(
            "breakdown",
            "every command family, every kind, and regret per command",
        ),
        Flag::switch(
            "cost",
            "add dollars saved: an estimate, each saved token priced once at --price",
        ),
        Flag::with_value(
            "price",
            "USD",
            "dollars per million input tokens for --cost (default 3.00)",
        ),
        Flag::switch("json", "print the report as JSON (schema in the README)"),
        Flag::with_value("days", "N", "the last N days, today included (default 30)"),
        Flag::with_value("project", "DIR", "only calls made in DIR or below it"),
    ],
};

static GAIN: CommandSpec = CommandSpec {
    name: "gain",
    args: "",
    summary: "Draw saved tokens per day as a bar chart, one bar a day.",
    about: "Colour only on a terminal and never with NO_COLOR; bars fill COLUMNS. Days are UTC.",
    flags: &[
        Flag::with_value("days", "N", "the last N days, today included (default 14)"),
        Flag::with_value(
            "html",
            "FILE",
            "also write a self-contained HTML report (chart, commands, kinds, regret)",
        ),
    ],
};

static HELP_COMMAND: CommandSpec = CommandSpec {
    name: "help",
    args: "[COMMAND]",
    summary: "Show help for sqz or one command.",
    about: "",
    flags: &[],
};

/// Every command, in the order `sqz help` lists them.
pub static COMMANDS: &[&CommandSpec] = &[
    &COMPRESS,
    &EXPAND,
    &TOKENS,
    &PIN,
    &UNPIN,
    &FORGET,
    &RESET,
    &HOOK,
    &RECALL,
    &RESUME,
    &PRINT_OPENCODE_PLUGIN,
    &INIT,
    &UNINSTALL,
    &DOCTOR,
    &MCP,
    &MCP_PROXY,
    &HTTP_PROXY,
    &STATS,
    &GAIN,
    &DISCOVER,
    &DEMO,
    &HELP_COMMAND,
];

/// The command called `name` (`mcp proxy` for the proxy).
pub fn find(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().copied().find(|c| c.name == name)
}

/// One argument after the command word, its flags recognised through the command's table.
enum Token {
    Help,
    Switch(&'static str),
    Valued(&'static str, OsString),
    Operand(OsString),
}

impl Token {
    /// The usage error for an argument the command's parser has no place for.
    fn unexpected(self) -> lexopt::Error {
        match self {
            Token::Help => lexopt::Error::UnexpectedOption("--help".into()),
            Token::Switch(long) | Token::Valued(long, _) => {
                lexopt::Error::UnexpectedOption(format!("--{long}"))
            }
            Token::Operand(value) => lexopt::Error::UnexpectedArgument(value),
        }
    }
}

/// The flag of `flags` (or `-h/--help`) that the option `arg` names; `Err` holds the option
/// as written when there is none.
fn lookup(arg: &lexopt::Arg, flags: &'static [Flag]) -> Result<&'static Flag, String> {
    let found = flags.iter().chain([&HELP]).find(|f| match arg {
        Long(long) => f.long == *long,
        Short(short) => f.short == Some(*short),
        Value(_) => false,
    });
    found.ok_or_else(|| match arg {
        Long(long) => format!("--{long}"),
        Short(short) => format!("-{short}"),
        Value(value) => value.to_string_lossy().into_owned(),
    })
}

/// The next argument of `spec`'s command; a flag that is not in its table is a usage error,
/// and a flag the table says takes a value gets it.
fn next(parser: &mut lexopt::Parser, spec: &CommandSpec) -> Result<Option<Token>, lexopt::Error> {
    let Some(arg) = parser.next()? else {
        return Ok(None);
    };
    if let Value(value) = arg {
        return Ok(Some(Token::Operand(value)));
    }
    let flag = lookup(&arg, spec.flags).map_err(lexopt::Error::UnexpectedOption)?;
    Ok(Some(if flag.long == HELP.long {
        Token::Help
    } else if flag.value.is_some() {
        Token::Valued(flag.long, parser.value()?)
    } else {
        Token::Switch(flag.long)
    }))
}

fn help_for(spec: &'static CommandSpec) -> Command {
    Command::Help { topic: Some(spec) }
}

pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, lexopt::Error> {
    let mut parser = lexopt::Parser::from_args(args);
    let Some(arg) = parser.next()? else {
        return Ok(Command::Help { topic: None });
    };
    let word = match arg {
        Value(word) => word.string()?,
        option => {
            let flag = lookup(&option, TOP_FLAGS).map_err(lexopt::Error::UnexpectedOption)?;
            return Ok(if flag.long == VERSION.long {
                Command::Version
            } else {
                Command::Help { topic: None }
            });
        }
    };
    let p = &mut parser;
    match word.as_str() {
        "compress" => parse_compress(p),
        "expand" => one_operand(p, &EXPAND, |reference| Command::Expand { reference }),
        "tokens" => parse_tokens(p),
        "pin" => one_operand(p, &PIN, |hash| Command::Pin { hash, pinned: true }),
        "unpin" => one_operand(p, &UNPIN, |hash| Command::Pin {
            hash,
            pinned: false,
        }),
        "forget" => one_operand(p, &FORGET, |hash| Command::Forget { hash }),
        "reset" => parse_reset(p),
        "init" => parse_setup(p, &INIT, Command::Init),
        "uninstall" => parse_setup(p, &UNINSTALL, Command::Uninstall),
        "doctor" => parse_doctor(p),
        "demo" => parse_demo(p),
        "stats" => parse_stats(p),
        "proxy" => parse_http_proxy(p),
        "gain" => parse_gain(p),
        "discover" => parse_discover(p),
        "mcp" => parse_mcp(p),
        "resume" => no_operands(p, &RESUME, Command::Resume),
        "recall" => one_operand(p, &RECALL, |query| Command::Recall { query }),
        "print-opencode-plugin" => {
            no_operands(p, &PRINT_OPENCODE_PLUGIN, Command::PrintOpencodePlugin)
        }
        "hook" => one_operand(p, &HOOK, |client| Command::Hook { client }),
        "help" => parse_help(p),
        _ => Err(lexopt::Error::Custom(
            format!("unknown command '{word}' (see sqz help)").into(),
        )),
    }
}

fn parse_compress(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut c = Compress::default();
    while let Some(token) = next(parser, &COMPRESS)? {
        match token {
            Token::Help => return Ok(help_for(&COMPRESS)),
            Token::Valued("cmd", label) => c.label = Some(label.string()?),
            Token::Switch("no-cache") => c.no_cache = true,
            // Accepted for scripts written for the original; sqz never abbreviates phrases.
            Token::Switch("no-abbrev") => {}
            Token::Switch("trap") => c.trap = true,
            Token::Operand(text) if c.text.is_none() => c.text = Some(text.string()?),
            other => return Err(other.unexpected()),
        }
    }
    Ok(Command::Compress(c))
}

fn parse_demo(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut keep = false;
    while let Some(token) = next(parser, &DEMO)? {
        match token {
            Token::Help => return Ok(help_for(&DEMO)),
            Token::Switch("keep") => keep = true,
            other => return Err(other.unexpected()),
        }
    }
    Ok(Command::Demo { keep })
}

/// A day count of 1 to 3650.
fn days(value: OsString) -> Result<u32, lexopt::Error> {
    let n: u32 = value.parse()?;
    if !(1..=3650).contains(&n) {
        return Err(lexopt::Error::Custom(
            format!("--days {n}: expected 1 to 3650").into(),
        ));
    }
    Ok(n)
}

fn parse_stats(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut s = Stats {
        breakdown: false,
        cost: false,
        json: false,
        days: 30,
        project: None,
        price: None,
    };
    while let Some(token) = next(parser, &STATS)? {
        match token {
            Token::Help => return Ok(help_for(&STATS)),
            Token::Switch("breakdown") => s.breakdown = true,
            Token::Switch("cost") => s.cost = true,
            Token::Switch("json") => s.json = true,
            Token::Valued("days", n) => s.days = days(n)?,
            Token::Valued("project", dir) => s.project = Some(PathBuf::from(dir)),
            Token::Valued("price", usd) => {
                let usd: f64 = usd.parse()?;
                if !(usd.is_finite() && usd >= 0.0) {
                    return Err(lexopt::Error::Custom(
                        format!("--price {usd}: expected dollars, 0 or more").into(),
                    ));
                }
                s.price = Some(usd);
            }
            other => return Err(other.unexpected()),
        }
    }
    Ok(Command::Stats(s))
}

fn parse_http_proxy(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut h = HttpProxy {
        port: 8080,
        upstream: None,
        max_body_mb: 32,
    };
    while let Some(token) = next(parser, &HTTP_PROXY)? {
        match token {
            Token::Help => return Ok(help_for(&HTTP_PROXY)),
            Token::Valued("port", port) => h.port = port.parse()?,
            Token::Valued("upstream", url) => h.upstream = Some(url.string()?),
            Token::Valued("max-body-mb", n) => {
                h.max_body_mb = n.parse()?;
                if h.max_body_mb == 0 {
                    return Err(lexopt::Error::Custom(
                        "--max-body-mb must be 1 or more".into(),
                    ));
                }
            }
            other => return Err(other.unexpected()),
        }
    }
    Ok(Command::HttpProxy(h))
}

fn parse_gain(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut g = Gain {
        days: 14,
        html: None,
    };
    while let Some(token) = next(parser, &GAIN)? {
        match token {
            Token::Help => return Ok(help_for(&GAIN)),
            Token::Valued("days", n) => g.days = days(n)?,
            Token::Valued("html", file) => g.html = Some(PathBuf::from(file)),
            other => return Err(other.unexpected()),
        }
    }
    Ok(Command::Gain(g))
}

fn parse_discover(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut d = Discover::default();
    while let Some(token) = next(parser, &DISCOVER)? {
        match token {
            Token::Help => return Ok(help_for(&DISCOVER)),
            Token::Switch("replay") => d.replay = true,
            Token::Switch("json") => d.json = true,
            Token::Operand(path) => d.paths.push(PathBuf::from(path)),
            other => return Err(other.unexpected()),
        }
    }
    Ok(Command::Discover(d))
}

fn parse_mcp(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut m = Mcp {
        port: 3000,
        ..Mcp::default()
    };
    while let Some(token) = next(parser, &MCP)? {
        match token {
            Token::Help => return Ok(help_for(&MCP)),
            Token::Operand(word) if word == "proxy" => return parse_proxy(parser),
            Token::Valued("transport", transport) => match transport.string()?.as_str() {
                "stdio" => m.http = false,
                "http" | "sse" | "streamable-http" => m.http = true,
                other => {
                    return Err(lexopt::Error::Custom(
                        format!("unknown transport '{other}' (stdio or http)").into(),
                    ))
                }
            },
            Token::Valued("port", port) => {
                m.port = port.parse()?;
                m.http = true;
            }
            Token::Valued("allow", path) => m.allow.push(PathBuf::from(path)),
            Token::Valued("token-file", path) => {
                m.token_file = Some(PathBuf::from(path));
                m.http = true;
            }
            Token::Switch("version") => return Ok(Command::Version),
            other => return Err(other.unexpected()),
        }
    }
    Ok(Command::Mcp(m))
}

fn parse_proxy(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut p = Proxy::default();
    while let Some(token) = next(parser, &MCP_PROXY)? {
        match token {
            Token::Help => return Ok(help_for(&MCP_PROXY)),
            Token::Switch("lazy-tools") => p.lazy_tools = true,
            Token::Switch("no-desc") => p.no_desc = true,
            Token::Switch("no-cache") => p.no_cache = true,
            // The upstream command and everything after it, flags included, as written.
            Token::Operand(program) => {
                p.command.push(program);
                p.command.extend(parser.raw_args()?);
                break;
            }
            other => return Err(other.unexpected()),
        }
    }
    if p.command.is_empty() {
        return Err(lexopt::Error::Custom(
            format!(
                "mcp proxy needs the upstream command (usage: {})",
                usage(&MCP_PROXY)
            )
            .into(),
        ));
    }
    Ok(Command::McpProxy(p))
}

fn parse_tokens(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut file = None;
    while let Some(token) = next(parser, &TOKENS)? {
        match token {
            Token::Help => return Ok(help_for(&TOKENS)),
            Token::Operand(path) if file.is_none() => file = Some(PathBuf::from(path)),
            other => return Err(other.unexpected()),
        }
    }
    Ok(Command::Tokens { file })
}

fn parse_reset(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut all = false;
    while let Some(token) = next(parser, &RESET)? {
        match token {
            Token::Help => return Ok(help_for(&RESET)),
            Token::Switch("all") => all = true,
            other => return Err(other.unexpected()),
        }
    }
    Ok(Command::Reset { all })
}

fn parse_setup(
    parser: &mut lexopt::Parser,
    spec: &'static CommandSpec,
    make: fn(Setup) -> Command,
) -> Result<Command, lexopt::Error> {
    let mut s = Setup::default();
    let list = |v: String| -> Vec<String> {
        v.split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty())
            .collect()
    };
    while let Some(token) = next(parser, spec)? {
        match token {
            Token::Help => return Ok(help_for(spec)),
            Token::Switch("global") => s.global = true,
            Token::Valued("only", clients) => s.only.extend(list(clients.string()?)),
            Token::Valued("skip", clients) => s.skip.extend(list(clients.string()?)),
            Token::Switch("dry-run") => s.dry_run = true,
            other => return Err(other.unexpected()),
        }
    }
    Ok(make(s))
}

fn parse_doctor(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let (mut global, mut fix) = (false, false);
    while let Some(token) = next(parser, &DOCTOR)? {
        match token {
            Token::Help => return Ok(help_for(&DOCTOR)),
            Token::Switch("global") => global = true,
            Token::Switch("fix") => fix = true,
            other => return Err(other.unexpected()),
        }
    }
    Ok(Command::Doctor { global, fix })
}

/// `sqz help [COMMAND]`; `COMMAND` may be two words (`mcp proxy`). An unknown topic, or a
/// flag where the topic goes, is a usage error.
fn parse_help(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut words = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Value(word) => words.push(word.to_string_lossy().into_owned()),
            option => match lookup(&option, HELP_COMMAND.flags) {
                Ok(_) => return Ok(help_for(&HELP_COMMAND)),
                Err(written) => return Err(no_help(&written)),
            },
        }
    }
    if words.is_empty() {
        return Ok(Command::Help { topic: None });
    }
    let topic = words.join(" ");
    find(&topic).map(help_for).ok_or_else(|| no_help(&topic))
}

fn no_help(topic: &str) -> lexopt::Error {
    lexopt::Error::Custom(format!("no help for '{topic}' (see sqz help)").into())
}

fn no_operands(
    parser: &mut lexopt::Parser,
    spec: &'static CommandSpec,
    then: Command,
) -> Result<Command, lexopt::Error> {
    match next(parser, spec)? {
        None => Ok(then),
        Some(Token::Help) => Ok(help_for(spec)),
        Some(other) => Err(other.unexpected()),
    }
}

/// Exactly one operand, e.g. the HASH of `sqz pin HASH`, handed to `make`.
fn one_operand(
    parser: &mut lexopt::Parser,
    spec: &'static CommandSpec,
    make: impl FnOnce(String) -> Command,
) -> Result<Command, lexopt::Error> {
    let mut value = None;
    while let Some(token) = next(parser, spec)? {
        match token {
            Token::Help => return Ok(help_for(spec)),
            Token::Operand(v) if value.is_none() => value = Some(v.string()?),
            other => return Err(other.unexpected()),
        }
    }
    match value {
        Some(v) => Ok(make(v)),
        None => Err(lexopt::Error::Custom(
            format!("{} needs {} (usage: {})", spec.name, spec.args, usage(spec)).into(),
        )),
    }
}

/// `sqz NAME [--flag VALUE]… ARGS`, from the table.
pub fn usage(spec: &CommandSpec) -> String {
    let mut line = format!("sqz {}", spec.name);
    for flag in spec.flags {
        line.push_str(&format!(" [--{}", flag.long));
        if let Some(value) = flag.value {
            line.push_str(&format!(" {value}"));
        }
        line.push(']');
        if flag.repeats {
            line.push('…');
        }
    }
    if !spec.args.is_empty() {
        line.push_str(&format!(" {}", spec.args));
    }
    line
}

/// The flag as its help line shows it: `-t, --transport stdio|http`.
fn flag_name(flag: &Flag) -> String {
    let mut name = match flag.short {
        Some(short) => format!("-{short}, --{}", flag.long),
        None => format!("    --{}", flag.long),
    };
    if let Some(value) = flag.value {
        name.push_str(&format!(" {value}"));
    }
    name
}

/// The text of `sqz help` (no topic) or of one command's help.
pub fn help(topic: Option<&CommandSpec>) -> String {
    match topic {
        Some(spec) => command_help(spec),
        None => overview(),
    }
}

fn command_help(spec: &CommandSpec) -> String {
    let mut out = format!("usage: {}\n\n{}\n", usage(spec), spec.summary);
    if !spec.about.is_empty() {
        out.push_str(&format!("{}\n", spec.about));
    }
    out.push_str("\nFlags:\n");
    let flags: Vec<&Flag> = spec.flags.iter().chain([&HELP]).collect();
    let width = flags.iter().map(|f| flag_name(f).len()).max().unwrap_or(0);
    for flag in flags {
        let name = flag_name(flag);
        let again = if flag.repeats { " (repeatable)" } else { "" };
        out.push_str(&format!("  {name:<width$}  {}{again}\n", flag.meaning));
    }
    out
}

fn overview() -> String {
    let mut out = format!(
        "sqz {} — compresses the tool output AI coding agents read; everything stays recoverable.\n\nCommands:\n",
        env!("CARGO_PKG_VERSION")
    );
    for spec in COMMANDS {
        out.push_str(&format!("  {}\n      {}\n", usage(spec), spec.summary));
    }
    for flag in TOP_FLAGS {
        out.push_str(&format!(
            "  sqz --{}\n      {}.\n",
            flag.long,
            capitalized(flag.meaning)
        ));
    }
    out.push_str("\nEnvironment:\n");
    for v in crate::env::VARIABLES {
        out.push_str(&format!("  {:<24}{}", v.name, v.meaning));
        if !v.default.is_empty() {
            out.push_str(&format!(" (default {})", v.default));
        }
        out.push('\n');
    }
    out.push_str("\nRun `sqz help COMMAND` for one command's flags.\n");
    out
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_are_one_sentence_and_flags_unique() {
        for spec in COMMANDS {
            let s = spec.summary;
            assert!(s.ends_with('.') && !s.contains('\n'), "{}: {s}", spec.name);
            assert!(
                !s.trim_end_matches('.').contains(". "),
                "{}: more than one sentence",
                spec.name
            );
            let mut names: Vec<String> = spec.flags.iter().map(|f| f.long.into()).collect();
            names.extend(spec.flags.iter().filter_map(|f| f.short.map(String::from)));
            names.extend(["help".into(), "h".into()]);
            let count = names.len();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), count, "{}: a flag twice", spec.name);
        }
    }

    #[test]
    fn the_only_flag_names_every_client() {
        let only = SETUP_FLAGS.iter().find(|f| f.long == "only").unwrap();
        let listed: Vec<&str> = only
            .meaning
            .rsplit(": ")
            .next()
            .unwrap()
            .split(' ')
            .collect();
        assert_eq!(listed, crate::setup::CLIENTS);
    }
}
