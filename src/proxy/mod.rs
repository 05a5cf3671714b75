//! `sqz proxy`: a loopback HTTP endpoint that compresses the tool results in an OpenAI,
//! Anthropic or Google request body. By default it answers with the compressed body and its
//! figures; with `--upstream URL` it sends the compressed request on to a plain-HTTP gateway
//! and streams the answer back as it comes.
//!
//! Cache safety: a block's first compressed form is kept, keyed by its content hash and its
//! place in the conversation, and sent again byte for byte on every later turn; a reference
//! points only at an earlier block of the same request. Since the history only grows, each
//! turn's body begins with the body of the turn before.

pub mod rewrite;

use crate::env::Env;
use crate::error::Error;
use crate::http::{next_request, respond, respond_with, Request};
use crate::store::Store;
use rewrite::{Block, Provider};
use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// Connections served at once; more wait in the queue.
const WORKERS: usize = 8;
/// Connections accepted but not yet served, before accepting waits.
const QUEUE: usize = 64;
/// Decisions kept; past this the oldest are forgotten (a forgotten block is decided again,
/// the same way, since the decision depends on its content and the request alone).
const MEMO_LIMIT: usize = 50_000;
/// How long a connection may sit idle, or a request take to arrive.
const IDLE: Duration = Duration::from_secs(60);

pub struct Options {
    pub port: u16,
    pub upstream: Option<String>,
    pub max_body: usize,
}

/// Where forwarded requests go: `http://HOST[:PORT][/BASE]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    pub host: String,
    pub port: u16,
    pub base: String,
}

impl Upstream {
    pub fn parse(url: &str) -> Result<Upstream, String> {
        if url.starts_with("https://") {
            return Err(format!(
                "--upstream {url}: sqz speaks plain HTTP only; point it at a local gateway that holds the TLS connection"
            ));
        }
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("--upstream {url}: expected http://HOST[:PORT][/PATH]"))?;
        let (authority, base) = match rest.find('/') {
            Some(at) => (&rest[..at], rest[at..].trim_end_matches('/')),
            None => (rest, ""),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() => (
                h,
                p.parse::<u16>()
                    .map_err(|_| format!("--upstream {url}: bad port '{p}'"))?,
            ),
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(format!("--upstream {url}: no host"));
        }
        Ok(Upstream {
            host: host.to_string(),
            port,
            base: base.to_string(),
        })
    }
}

/// What every connection shares: the store and the decisions made so far.
struct State {
    store: Option<Store>,
    env: Env,
    /// `(content hash, position)` → what went out for that block.
    memo: HashMap<(String, String), Option<String>>,
    order: std::collections::VecDeque<(String, String)>,
}

pub fn run(options: Options, env: &Env) -> Result<u8, Error> {
    let upstream = match &options.upstream {
        Some(url) => Some(Upstream::parse(url).map_err(Error::usage)?),
        None => None,
    };
    let listener = TcpListener::bind(("127.0.0.1", options.port))
        .map_err(|e| Error::failed(format!("cannot listen on 127.0.0.1:{}: {e}", options.port)))?;
    let port = listener
        .local_addr()
        .map(|a| a.port())
        .unwrap_or(options.port);
    let (store, notice) = match crate::serve::open_store(env, crate::clock::now_ms()) {
        Ok((store, notice)) => (Some(store), notice),
        Err(e) => (
            None,
            Some(format!("sqz: {e}; tool results are sent unchanged")),
        ),
    };
    if let Some(notice) = notice {
        eprintln!("{notice}");
    }
    match &upstream {
        Some(u) => eprintln!(
            "[sqz] proxy: listening on http://127.0.0.1:{port}, forwarding to http://{}:{}{}",
            u.host, u.port, u.base
        ),
        None => eprintln!("[sqz] proxy: listening on http://127.0.0.1:{port}"),
    }
    let state = Arc::new(Mutex::new(State {
        store,
        env: env.clone(),
        memo: HashMap::new(),
        order: std::collections::VecDeque::new(),
    }));
    let (send, receive) = mpsc::sync_channel::<TcpStream>(QUEUE);
    let receive = Arc::new(Mutex::new(receive));
    for _ in 0..WORKERS {
        let receive = Arc::clone(&receive);
        let state = Arc::clone(&state);
        let upstream = upstream.clone();
        let max_body = options.max_body;
        std::thread::spawn(move || loop {
            let next = receive.lock().unwrap_or_else(|p| p.into_inner()).recv();
            let Ok(stream) = next else { return };
            let _ = stream.set_read_timeout(Some(IDLE));
            let _ = connection(stream, &state, upstream.as_ref(), port, max_body);
        });
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if send.send(stream).is_err() {
            break;
        }
    }
    Ok(0)
}

/// Serves requests on one connection until the client closes it (or one is forwarded).
fn connection(
    stream: TcpStream,
    state: &Mutex<State>,
    upstream: Option<&Upstream>,
    port: u16,
    max_body: usize,
) -> std::io::Result<()> {
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    loop {
        let Some(request) = next_request(&mut reader, &mut writer, max_body, port)? else {
            return Ok(());
        };
        let path = request.path.split('?').next().unwrap_or("");
        if path == "/health" {
            respond(&mut writer, 200, "application/json", b"{\"status\":\"ok\"}")?;
            continue;
        }
        let Some(provider) = Provider::for_path(path) else {
            respond(
                &mut writer,
                404,
                "text/plain",
                b"sqz: POST to /v1/chat/completions, /v1/responses, /v1/messages or .../models/M:generateContent\n",
            )?;
            continue;
        };
        if request.method != "POST" {
            respond(
                &mut writer,
                405,
                "text/plain",
                b"sqz: POST a request body\n",
            )?;
            continue;
        }
        let outcome = compress_body(provider, &request.body, state);
        if let Some(upstream) = upstream {
            let body = outcome
                .as_ref()
                .map_or(&request.body[..], |o| o.body.as_bytes());
            return forward(&request, body, upstream, &mut writer);
        }
        match outcome {
            Some(o) => {
                let answer = o.answer();
                respond_with(
                    &mut writer,
                    200,
                    "application/json",
                    &format!("x-sqz-tokens-saved: {}\r\n", o.saved()),
                    answer.as_bytes(),
                )?;
            }
            // Not JSON, or not a shape sqz knows: the body goes back as it came.
            None => {
                let kind = request.header("content-type").unwrap_or("application/json");
                respond(&mut writer, 200, kind, &request.body)?;
            }
        }
        if request
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"))
        {
            return Ok(());
        }
    }
}

/// A compressed body and its figures.
struct Compressed {
    body: String,
    tokens_in: usize,
    tokens_out: usize,
    counts: rewrite::Counts,
}

impl Compressed {
    fn saved(&self) -> usize {
        self.tokens_in.saturating_sub(self.tokens_out)
    }

    /// The returning mode's answer: the compressed body and its figures.
    fn answer(&self) -> String {
        let pct = (self.saved() as f64 * 1000.0 / self.tokens_in.max(1) as f64).round() / 10.0;
        format!(
            "{{\"compressed_body\":{},\"original_tokens\":{},\"compressed_tokens\":{},\"reduction_pct\":{pct:.1},\"tool_results\":{},\"tool_results_compressed\":{}}}",
            self.body, self.tokens_in, self.tokens_out, self.counts.tool_results, self.counts.compressed
        )
    }
}

/// The body with its tool results compressed; `None` (and a line on stderr) when it is not
/// JSON, holds no tool result of a known shape, or compressing failed: the original then goes
/// on unchanged.
fn compress_body(provider: Provider, body: &[u8], state: &Mutex<State>) -> Option<Compressed> {
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(_) => {
            eprintln!("sqz: proxy: body is not UTF-8; passed on unchanged");
            return None;
        }
    };
    let mut value = match crate::json::parse(text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("sqz: proxy: body is not JSON ({e}); passed on unchanged");
            return None;
        }
    };
    let result = crate::fault::catch(|| {
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        let mut seen: HashSet<String> = HashSet::new();
        let counts = rewrite::rewrite(provider, &mut value, &mut |block: &Block| {
            state.decide(block, &mut seen)
        });
        (counts, value.to_compact())
    });
    let (counts, compressed) = match result {
        Ok(done) => done,
        Err(report) => {
            eprintln!("sqz: proxy: internal error ({report}); passed on unchanged");
            return None;
        }
    };
    if !counts.known {
        eprintln!("sqz: proxy: no list of turns where {provider:?} keeps it; passed on unchanged");
        return None;
    }
    // Always the compact form, changed or not, so every turn's body is written the same way
    // and stays a prefix of the next.
    Some(Compressed {
        tokens_in: crate::tokens::count(text),
        tokens_out: crate::tokens::count(&compressed),
        body: compressed,
        counts,
    })
}

impl State {
    /// What goes out for one block: the decision made for it before, or a new one, kept.
    fn decide(&mut self, block: &Block, seen: &mut HashSet<String>) -> Option<String> {
        let hash = crate::text::hash16(block.text.as_bytes());
        let key = (hash.clone(), block.position.to_string());
        let earlier = !seen.insert(hash.clone());
        if let Some(done) = self.memo.get(&key) {
            return done.clone();
        }
        let decision = if earlier {
            self.reference(&hash, block)
        } else {
            self.compress(block)
        };
        if self.order.len() >= MEMO_LIMIT {
            if let Some(old) = self.order.pop_front() {
                self.memo.remove(&old);
            }
        }
        self.order.push_back(key.clone());
        self.memo.insert(key, decision.clone());
        decision
    }

    /// A repeat of an earlier tool result of this same request, where that is shorter.
    fn reference(&self, hash: &str, block: &Block) -> Option<String> {
        let stand_in = format!(
            "{} [sqz] same output as an earlier tool result above",
            crate::doc::reference::ref_token(hash)
        );
        (crate::tokens::count(&stand_in) < crate::tokens::count(block.text)).then_some(stand_in)
    }

    /// The engine's answer for the block, its original stored, with no reference to anything
    /// served before: it depends on the block alone.
    fn compress(&mut self, block: &Block) -> Option<String> {
        let now = crate::clock::now_ms();
        let served = crate::serve::compress_unreferenced(
            block.label,
            block.text.as_bytes(),
            self.store.as_mut(),
            &self.env,
            now,
        );
        let header = served.header?;
        let mut out = String::from_utf8(served.stdout).ok()?;
        if out == block.text {
            return None;
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
        // The engine's net-win gate has already priced the header in.
        out.push_str(&header);
        Some(out)
    }
}

/// Headers that belong to one connection, not to the request: never passed on.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
];

/// Sends the request with `body` to the upstream and copies its answer back to the client as
/// it arrives, byte for byte, until the upstream closes. An upstream that cannot be reached
/// gets a 502.
fn forward(
    request: &Request,
    body: &[u8],
    upstream: &Upstream,
    client: &mut TcpStream,
) -> std::io::Result<()> {
    let mut up = match TcpStream::connect((upstream.host.as_str(), upstream.port)) {
        Ok(s) => s,
        Err(e) => {
            let message = format!(
                "sqz: cannot reach the upstream {}:{}: {e}\n",
                upstream.host, upstream.port
            );
            return respond(client, 502, "text/plain", message.as_bytes());
        }
    };
    let mut head = format!(
        "{} {}{} HTTP/1.1\r\nHost: {}:{}\r\n",
        request.method, upstream.base, request.path, upstream.host, upstream.port
    );
    for (name, value) in &request.headers {
        let lower = name.to_ascii_lowercase();
        if lower == "host" || HOP_BY_HOP.contains(&lower.as_str()) {
            continue;
        }
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    up.write_all(head.as_bytes())?;
    up.write_all(body)?;
    up.flush()?;
    // The answer, headers and all, as the upstream sends it: an SSE stream goes on chunk by
    // chunk, never gathered whole.
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match up.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        client.write_all(&buf[..n])?;
        client.flush()?;
    }
    let _ = client.shutdown(std::net::Shutdown::Write);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_urls_are_plain_http_only() {
        assert_eq!(
            Upstream::parse("http://127.0.0.1:4000/v1beta/").unwrap(),
            Upstream {
                host: "127.0.0.1".into(),
                port: 4000,
                base: "/v1beta".into()
            }
        );
        assert_eq!(Upstream::parse("http://gateway").unwrap().port, 80);
        assert!(Upstream::parse("https://api.example.com")
            .unwrap_err()
            .contains("plain HTTP"));
        assert!(Upstream::parse("ftp://x").is_err());
    }
}
