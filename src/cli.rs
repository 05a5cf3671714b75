//! Argument parsing on lexopt: one parse function per subcommand, each filling a plain struct.
//! Nothing here does I/O; a usage error is one line and exit status 2.

use lexopt::prelude::*;
use std::ffi::OsString;
use std::path::PathBuf;

pub enum Command {
    Compress(Compress),
    Expand { reference: String },
    Tokens { file: Option<PathBuf> },
    Pin { hash: String, pinned: bool },
    Forget { hash: String },
    Reset { all: bool },
    Demo,
    Hook { client: String },
    Resume,
    Recall { query: String },
    PrintOpencodePlugin,
    Init(Setup),
    Uninstall(Setup),
    Doctor { global: bool, fix: bool },
    Mcp(Mcp),
    McpProxy(crate::mcp::proxy::ProxyOptions),
    Help { topic: Option<String> },
    Version,
}

#[derive(Default)]
pub struct Compress {
    pub label: Option<String>,
    pub no_cache: bool,
    pub text: Option<String>,
}

/// The flags of `sqz mcp`.
#[derive(Default)]
pub struct Mcp {
    pub http: bool,
    pub port: u16,
    pub allow: Vec<PathBuf>,
}

/// The flags of `sqz init` and `sqz uninstall`.
#[derive(Default)]
pub struct Setup {
    pub global: bool,
    pub only: Vec<String>,
    pub skip: Vec<String>,
    pub dry_run: bool,
}

/// One subcommand's help: usage line and description.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("compress", "sqz compress [--cmd LABEL] [--no-cache] [--no-abbrev] [TEXT]",
     "Compress stdin (or TEXT) for an agent. Output goes to stdout, one [sqz] header to stderr.\n  --cmd LABEL   the command that produced the output (picks a formatter)\n  --no-cache    no references, nothing stored; only lossless stages run\n  --no-abbrev   accepted for compatibility; sqz never abbreviates phrases\nA final line __SQZ_EXIT_<code>__ is stripped and becomes sqz's exit status."),
    ("expand", "sqz expand REF",
     "Print the original bytes behind a reference: a unique hash prefix, a whole §ref:…§ token,\nor HASH:La-b for lines a to b. Exit 0 found, 1 none, 2 ambiguous or malformed, 3 store error."),
    ("tokens", "sqz tokens [FILE]", "Print the approximate cl100k token count of FILE or stdin."),
    ("pin", "sqz pin HASH", "Exempt a stored entry from freshness checks: its references stay valid."),
    ("unpin", "sqz unpin HASH", "Undo sqz pin."),
    ("forget", "sqz forget HASH", "Delete one stored entry."),
    ("reset", "sqz reset [--all]", "Delete every stored entry; with --all also the event history and metadata."),
    ("hook", "sqz hook CLIENT",
     "The hook protocol for a client. precompact: mark everything served so far as no longer in\ncontext (Claude Code PreCompact), so no earlier output is referenced again.\nclaude: Claude Code PreToolUse on Bash; rewrites a command so its output is compressed.\nclaude-post: Claude Code PostToolUse on Bash; compresses output the rewrite left alone.\ngemini: Gemini CLI BeforeTool on run_shell_command. copilot: Copilot CLI preToolUse.\nopencode: {\"command\": …} in, {\"command\": …} out, for the OpenCode plugin.\nA hook never blocks: on anything unexpected the command runs as written."),
    ("recall", "sqz recall QUERY",
     "Full-text search (BM25) over everything sqz served: the best 10 entries, each with its\nlabel, age, §ref:HASH§ (for sqz expand) and a snippet. Exit 0 with hits, 1 without."),
    ("resume", "sqz resume",
     "Print a short guide to what sqz served recently, with the sqz expand command for each, so an\nagent can get it back after a compaction (Claude Code SessionStart, source compact)."),
    ("print-opencode-plugin", "sqz print-opencode-plugin",
     "Print the OpenCode plugin (save as ~/.config/opencode/plugins/sqz.ts); it asks\nsqz hook opencode about each bash command."),
    ("init", "sqz init [--global] [--only C,…] [--skip C,…] [--dry-run]",
     "Configure the agents found under HOME to use sqz (hooks, allow rules, MCP, guidance).\n  --global      user-level files under HOME instead of the current project\n  --only C,…    just these clients: claude gemini copilot opencode codex kiro cursor windsurf\n                cline zed (configured even when not found)\n  --skip C,…    not these clients\n  --dry-run     print what would be written, write nothing\nExisting files are merged, never replaced; running it again changes nothing."),
    ("uninstall", "sqz uninstall [--global] [--only C,…] [--skip C,…] [--dry-run]",
     "Remove exactly what sqz init added, leaving everything else."),
    ("doctor", "sqz doctor [--global] [--fix]",
     "Report per client: found, tier, configured, duplicate or stale hooks, missing allow rules,\nMCP registration, sqz on PATH and the last compression. --fix runs init where needed."),
    ("mcp", "sqz mcp [--transport stdio|http] [--port N] [--allow PATH]…",
     "The MCP server: newline-delimited JSON-RPC on stdio (or Streamable HTTP on 127.0.0.1:N at /mcp).\nTools: sqz_read_file, sqz_grep, sqz_list_dir, sqz_recall, expand, compress, passthrough.\n  --transport T  stdio (default) or http\n  --port N       the HTTP port (implies --transport http; default 3000)\n  --allow PATH   let the file tools read under PATH too (repeatable); by default they stay\n                 inside the working directory and the client's MCP roots\nAlso reached as sqz-mcp. Runs until end of input."),
    ("mcp proxy", "sqz mcp proxy [--lazy-tools] [--no-desc] [--no-cache] -- CMD ARGS…",
     "Run the stdio MCP server CMD behind sqz: successful text results are compressed (repeats\nbecome refs), tool descriptions compacted, and sqz_expand added.\n  --lazy-tools  one-sentence descriptions plus a sqz_tool_help tool with the full text\n  --no-desc     leave tool descriptions as they are\n  --no-cache    store nothing, no refs; only lossless compression"),
    ("demo", "sqz demo", "Run the main job on bundled sample outputs in a throwaway store."),
    ("help", "sqz help [COMMAND]", "Show help for sqz or one command."),
];

pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, lexopt::Error> {
    let mut parser = lexopt::Parser::from_args(args);
    let Some(arg) = parser.next()? else {
        return Ok(Command::Help { topic: None });
    };
    match arg {
        Long("version") | Short('V') => Ok(Command::Version),
        Long("help") | Short('h') => Ok(Command::Help { topic: None }),
        Value(word) => {
            let word = word.string()?;
            match word.as_str() {
                "compress" => parse_compress(&mut parser),
                "expand" => one_value(&mut parser, "expand", "REF", |reference| Command::Expand {
                    reference,
                }),
                "tokens" => parse_tokens(&mut parser),
                "pin" => one_value(&mut parser, "pin", "HASH", |hash| Command::Pin {
                    hash,
                    pinned: true,
                }),
                "unpin" => one_value(&mut parser, "unpin", "HASH", |hash| Command::Pin {
                    hash,
                    pinned: false,
                }),
                "forget" => one_value(&mut parser, "forget", "HASH", |hash| Command::Forget {
                    hash,
                }),
                "reset" => parse_reset(&mut parser),
                "init" => parse_setup(&mut parser, "init", Command::Init),
                "uninstall" => parse_setup(&mut parser, "uninstall", Command::Uninstall),
                "doctor" => parse_doctor(&mut parser),
                "demo" => no_args(&mut parser, "demo", Command::Demo),
                "mcp" => parse_mcp(&mut parser),
                "resume" => no_args(&mut parser, "resume", Command::Resume),
                "recall" => one_value(&mut parser, "recall", "QUERY", |query| Command::Recall {
                    query,
                }),
                "print-opencode-plugin" => no_args(
                    &mut parser,
                    "print-opencode-plugin",
                    Command::PrintOpencodePlugin,
                ),
                "hook" => one_value(&mut parser, "hook", "CLIENT", |client| Command::Hook {
                    client,
                }),
                "help" => Ok(Command::Help {
                    topic: parser.next()?.map(|a| match a {
                        Value(v) => v.to_string_lossy().into_owned(),
                        other => format!("{other:?}"),
                    }),
                }),
                _ => Err(lexopt::Error::Custom(
                    format!("unknown command '{word}' (see sqz help)").into(),
                )),
            }
        }
        _ => Err(arg.unexpected()),
    }
}

fn parse_compress(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut c = Compress::default();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("cmd") => c.label = Some(parser.value()?.string()?),
            Long("no-cache") => c.no_cache = true,
            // Accepted for scripts written for the original; sqz never abbreviates phrases.
            Long("no-abbrev") => {}
            Long("help") | Short('h') => {
                return Ok(Command::Help {
                    topic: Some("compress".into()),
                })
            }
            Value(v) if c.text.is_none() => c.text = Some(v.string()?),
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(Command::Compress(c))
}

fn parse_mcp(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut m = Mcp {
        port: 3000,
        ..Mcp::default()
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Value(v) if v == "proxy" => return parse_proxy(parser),
            Long("transport") | Short('t') => match parser.value()?.string()?.as_str() {
                "stdio" => m.http = false,
                "http" | "sse" | "streamable-http" => m.http = true,
                other => {
                    return Err(lexopt::Error::Custom(
                        format!("unknown transport '{other}' (stdio or http)").into(),
                    ))
                }
            },
            Long("port") | Short('p') => {
                m.port = parser.value()?.parse()?;
                m.http = true;
            }
            Long("allow") => m.allow.push(PathBuf::from(parser.value()?)),
            Long("version") | Short('V') => return Ok(Command::Version),
            Long("help") | Short('h') => {
                return Ok(Command::Help {
                    topic: Some("mcp".into()),
                })
            }
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(Command::Mcp(m))
}

fn parse_proxy(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut p = crate::mcp::proxy::ProxyOptions {
        lazy_tools: false,
        no_desc: false,
        no_cache: false,
        command: Vec::new(),
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Long("lazy-tools") => p.lazy_tools = true,
            Long("no-desc") => p.no_desc = true,
            Long("no-cache") => p.no_cache = true,
            Long("help") | Short('h') => {
                return Ok(Command::Help {
                    topic: Some("mcp proxy".into()),
                })
            }
            // The upstream command and everything after it, flags included, as written.
            Value(program) => {
                p.command.push(program);
                p.command.extend(parser.raw_args()?);
                break;
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if p.command.is_empty() {
        return Err(lexopt::Error::Custom(
            "mcp proxy needs the upstream command (usage: sqz mcp proxy [--lazy-tools] [--no-desc] [--no-cache] -- CMD ARGS…)".into(),
        ));
    }
    Ok(Command::McpProxy(p))
}

fn parse_tokens(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut file = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Long("help") | Short('h') => {
                return Ok(Command::Help {
                    topic: Some("tokens".into()),
                })
            }
            Value(v) if file.is_none() => file = Some(PathBuf::from(v)),
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(Command::Tokens { file })
}

fn parse_reset(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut all = false;
    while let Some(arg) = parser.next()? {
        match arg {
            Long("all") => all = true,
            Long("help") | Short('h') => {
                return Ok(Command::Help {
                    topic: Some("reset".into()),
                })
            }
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(Command::Reset { all })
}

fn parse_setup(
    parser: &mut lexopt::Parser,
    command: &str,
    make: fn(Setup) -> Command,
) -> Result<Command, lexopt::Error> {
    let mut s = Setup::default();
    let list = |v: String| -> Vec<String> {
        v.split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty())
            .collect()
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Long("global") => s.global = true,
            Long("only") => s.only.extend(list(parser.value()?.string()?)),
            Long("skip") => s.skip.extend(list(parser.value()?.string()?)),
            Long("dry-run") => s.dry_run = true,
            Long("help") | Short('h') => {
                return Ok(Command::Help {
                    topic: Some(command.into()),
                })
            }
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(make(s))
}

fn parse_doctor(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let (mut global, mut fix) = (false, false);
    while let Some(arg) = parser.next()? {
        match arg {
            Long("global") => global = true,
            Long("fix") => fix = true,
            Long("help") | Short('h') => {
                return Ok(Command::Help {
                    topic: Some("doctor".into()),
                })
            }
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(Command::Doctor { global, fix })
}

fn no_args(
    parser: &mut lexopt::Parser,
    command: &str,
    then: Command,
) -> Result<Command, lexopt::Error> {
    match parser.next()? {
        None => Ok(then),
        Some(Long("help") | Short('h')) => Ok(Command::Help {
            topic: Some(command.into()),
        }),
        Some(arg) => Err(arg.unexpected()),
    }
}

/// Exactly one positional value, e.g. the HASH of `sqz pin HASH`, handed to `make`.
fn one_value(
    parser: &mut lexopt::Parser,
    command: &str,
    name: &str,
    make: impl FnOnce(String) -> Command,
) -> Result<Command, lexopt::Error> {
    let mut value = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Long("help") | Short('h') => {
                return Ok(Command::Help {
                    topic: Some(command.into()),
                })
            }
            Value(v) if value.is_none() => value = Some(v.string()?),
            _ => return Err(arg.unexpected()),
        }
    }
    match value {
        Some(v) => Ok(make(v)),
        None => Err(lexopt::Error::Custom(
            format!("{command} needs {name} (usage: sqz {command} {name})").into(),
        )),
    }
}

/// The text of `sqz help` or `sqz help COMMAND`.
pub fn help(topic: Option<&str>) -> Option<String> {
    if let Some(topic) = topic {
        let (_, usage, about) = COMMANDS.iter().find(|(name, _, _)| *name == topic)?;
        return Some(format!("usage: {usage}\n\n{about}\n"));
    }
    let mut out = format!(
        "sqz {} — compresses the tool output AI coding agents read; everything stays recoverable.\n\nCommands:\n",
        env!("CARGO_PKG_VERSION")
    );
    for (_, usage, about) in COMMANDS {
        let first = about.lines().next().unwrap_or("");
        out.push_str(&format!("  {usage}\n      {first}\n"));
    }
    out.push_str("  sqz --version\n      Print the version.\n\nEnvironment:\n");
    for v in crate::env::VARIABLES {
        out.push_str(&format!(
            "  {:<24}{} (default {})\n",
            v.name, v.meaning, v.default
        ));
    }
    out.push_str("\nRun `sqz help COMMAND` for one command's flags.\n");
    Some(out)
}
