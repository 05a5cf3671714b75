//! `sqz mcp --transport http`: the Streamable HTTP transport on loopback only. Each POST to
//! `/mcp` carries one JSON-RPC message and gets one JSON answer. Requests whose `Host` or
//! `Origin` is not loopback are refused, so a web page cannot reach the server.

use super::rpc::{self, Message};
use super::server::{Options, Server};
use crate::env::Env;
use crate::error::Error;
use crate::http::{next_request, respond, respond_with};
use std::io::BufReader;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

const MAX_BODY_BYTES: usize = 64 << 20;
/// Connections served at once.
const MAX_CONNECTIONS: usize = 64;
/// How long a connection may send nothing before it is closed.
const IDLE: std::time::Duration = std::time::Duration::from_secs(60);

pub fn serve(
    options: &Options,
    env: &Env,
    port: u16,
    token_file: Option<&Path>,
) -> Result<u8, Error> {
    let token = match token_file {
        Some(file) => token_from_file(file)?,
        None => new_token(),
    };
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| Error::failed(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    eprintln!("[sqz] mcp: listening on http://127.0.0.1:{port}/mcp");
    match token_file {
        Some(file) => eprintln!(
            "[sqz] mcp: every request needs 'Authorization: Bearer TOKEN', TOKEN being the content of {}",
            file.display()
        ),
        None => eprintln!("[sqz] mcp: every request needs 'Authorization: Bearer {token}'"),
    }
    let token = Arc::new(format!("Bearer {token}"));
    let server = Arc::new(Mutex::new(
        Server::new(options, env).without_client_requests(),
    ));
    let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        // A connection that sends nothing for a minute is closed, and past the cap new ones
        // are turned away at once, so idle sockets cannot use up the threads.
        let _ = stream.set_read_timeout(Some(IDLE));
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            let _ = respond(
                &mut stream,
                503,
                "text/plain",
                b"sqz: too many connections\n",
            );
            continue;
        }
        let server = Arc::clone(&server);
        let token = Arc::clone(&token);
        let open = Arc::clone(&open);
        std::thread::spawn(move || {
            let _ = connection(stream, &server, port, &token);
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(0)
}

/// Serves requests on one connection until the client closes it.
fn connection(
    stream: TcpStream,
    server: &Mutex<Server>,
    port: u16,
    expected: &str,
) -> std::io::Result<()> {
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    loop {
        let Some(request) = next_request(&mut reader, &mut writer, MAX_BODY_BYTES, port)? else {
            return Ok(());
        };
        // Loopback keeps other machines out, not other users of this one.
        let presented = request.header("authorization").unwrap_or("");
        if !same_secret(presented.as_bytes(), expected.as_bytes()) {
            return respond_with(
                &mut writer,
                401,
                "text/plain",
                "WWW-Authenticate: Bearer\r\n",
                b"sqz: send the token sqz mcp printed as 'Authorization: Bearer TOKEN'\n",
            );
        }
        let path = request.path.split('?').next().unwrap_or("");
        if path != "/mcp" && path != "/" {
            respond(
                &mut writer,
                404,
                "text/plain",
                b"sqz: the MCP endpoint is /mcp\n",
            )?;
            continue;
        }
        if request.method != "POST" {
            respond(
                &mut writer,
                405,
                "text/plain",
                b"sqz: POST one JSON-RPC message to /mcp\n",
            )?;
            continue;
        }
        let body = super::server::trim_line(&request.body);
        let kind = rpc::parse(body);
        let mut answers = server
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .handle_line(body);
        match kind {
            Ok(Message::Request { .. }) | Err(_) => {
                let status = if kind.is_err() { 400 } else { 200 };
                let answer = answers.pop().unwrap_or_default();
                respond(&mut writer, status, "application/json", answer.as_bytes())?;
            }
            // Server-to-client requests need a stream this transport does not open.
            Ok(_) => respond(&mut writer, 202, "text/plain", b"")?,
        }
    }
}

/// 32 random bytes from the system, as hex.
fn new_token() -> String {
    let mut bytes = [0u8; 32];
    let from_system = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .is_ok();
    if !from_system {
        // No /dev/urandom (not a Unix system): the clock, the process and an address, hashed.
        use sha2::Digest;
        let seed = format!(
            "{:?} {} {:p}",
            std::time::SystemTime::now(),
            std::process::id(),
            &bytes
        );
        bytes.copy_from_slice(&sha2::Sha256::digest(seed.as_bytes()));
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The token kept in `file`, or a new one written there, readable by its owner only.
fn token_from_file(file: &Path) -> Result<String, Error> {
    let cannot = |e: std::io::Error| Error::failed(format!("--token-file {}: {e}", file.display()));
    match std::fs::read_to_string(file) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(cannot(e)),
    }
    let token = new_token();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options.open(file).map_err(cannot)?;
    std::io::Write::write_all(&mut f, format!("{token}\n").as_bytes()).map_err(cannot)?;
    Ok(token)
}

/// Equal bytes, compared in time that does not depend on where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for (i, &x) in b.iter().enumerate() {
        diff |= x ^ a.get(i).copied().unwrap_or(0);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"Bearer abc", b"Bearer abc"));
        assert!(!same_secret(b"Bearer abd", b"Bearer abc"));
        assert!(!same_secret(b"Bearer ab", b"Bearer abc"));
        assert!(!same_secret(b"Bearer abcd", b"Bearer abc"));
        assert!(!same_secret(b"", b"Bearer abc"));
        assert_eq!(new_token().len(), 64);
        assert_ne!(new_token(), new_token());
    }
}
