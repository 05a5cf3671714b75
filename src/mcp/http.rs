//! `sqz mcp --transport http`: the Streamable HTTP transport on loopback only. Each POST to
//! `/mcp` carries one JSON-RPC message and gets one JSON answer. Requests whose `Host` or
//! `Origin` is not loopback are refused, so a web page cannot reach the server.

use super::rpc::{self, Message};
use super::server::{Options, Server};
use crate::env::Env;
use crate::error::Error;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

const MAX_HEADER_BYTES: usize = 64 * 1024;
const MAX_BODY_BYTES: usize = 64 << 20;

pub fn serve(options: &Options, env: &Env, port: u16) -> Result<u8, Error> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| Error::failed(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    eprintln!("[sqz] mcp: listening on http://127.0.0.1:{port}/mcp");
    let server = Arc::new(Mutex::new(
        Server::new(options, env).without_client_requests(),
    ));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let server = Arc::clone(&server);
        std::thread::spawn(move || {
            let _ = connection(stream, &server, port);
        });
    }
    Ok(0)
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Serves requests on one connection until the client closes it.
fn connection(stream: TcpStream, server: &Mutex<Server>, port: u16) -> std::io::Result<()> {
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    loop {
        let request = match read_request(&mut reader) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(()),
            Err(why) => return respond(&mut writer, 400, "text/plain", why.as_bytes()),
        };
        if !loopback_host(request.header("host"), port) {
            return respond(
                &mut writer,
                403,
                "text/plain",
                b"sqz: Host is not this loopback server\n",
            );
        }
        if request
            .header("origin")
            .is_some_and(|o| !loopback_origin(o))
        {
            return respond(
                &mut writer,
                403,
                "text/plain",
                b"sqz: Origin is not loopback\n",
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

fn read_request(reader: &mut impl BufRead) -> Result<Option<Request>, String> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("sqz: {e}\n"))?;
        if n == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err("sqz: connection closed inside the headers\n".into())
            };
        }
        if line == b"\r\n" || line == b"\n" {
            if head.is_empty() {
                continue;
            }
            break;
        }
        head.extend_from_slice(&line);
        if head.len() > MAX_HEADER_BYTES {
            return Err("sqz: headers too large\n".into());
        }
    }
    let head = String::from_utf8(head).map_err(|_| "sqz: headers are not UTF-8\n".to_string())?;
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or("").split_whitespace();
    let (method, path) = (
        first.next().unwrap_or("").to_string(),
        first.next().unwrap_or("").to_string(),
    );
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if request
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        request.body = read_chunked(reader)?;
    } else if let Some(len) = request.header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| "sqz: bad Content-Length\n".to_string())?;
        if len > MAX_BODY_BYTES {
            return Err("sqz: body too large\n".into());
        }
        request.body = vec![0; len];
        reader
            .read_exact(&mut request.body)
            .map_err(|e| format!("sqz: {e}\n"))?;
    }
    Ok(Some(request))
}

fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader
            .read_line(&mut size_line)
            .map_err(|e| format!("sqz: {e}\n"))?;
        let size = usize::from_str_radix(size_line.trim().split(';').next().unwrap_or(""), 16)
            .map_err(|_| "sqz: bad chunk size\n".to_string())?;
        if size == 0 {
            let mut trailer = String::new();
            while reader
                .read_line(&mut trailer)
                .map_err(|e| format!("sqz: {e}\n"))?
                > 2
            {
                trailer.clear();
            }
            return Ok(body);
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err("sqz: body too large\n".into());
        }
        let start = body.len();
        body.resize(start + size + 2, 0);
        reader
            .read_exact(&mut body[start..])
            .map_err(|e| format!("sqz: {e}\n"))?;
        body.truncate(start + size);
    }
}

fn respond(
    out: &mut impl Write,
    status: u16,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        _ => "Method Not Allowed",
    };
    let allow = if status == 405 { "Allow: POST\r\n" } else { "" };
    write!(
        out,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{allow}\r\n",
        body.len()
    )?;
    out.write_all(body)?;
    out.flush()
}

/// `Host` names this server: a loopback name, with this port or none.
fn loopback_host(host: Option<&str>, port: u16) -> bool {
    let Some(host) = host else { return false };
    let (name, host_port) = match host.rsplit_once(':') {
        Some((name, p)) if !name.ends_with(':') && p.bytes().all(|b| b.is_ascii_digit()) => {
            (name, Some(p))
        }
        _ => (host, None),
    };
    matches!(name, "127.0.0.1" | "localhost" | "[::1]")
        && host_port.is_none_or(|p| p.parse() == Ok(port))
}

/// An `Origin` on a loopback name, any port.
fn loopback_origin(origin: &str) -> bool {
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .unwrap_or("");
    let name = match rest.rsplit_once(':') {
        Some((name, p)) if p.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => rest,
    };
    matches!(name, "127.0.0.1" | "localhost" | "[::1]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_origin_checks() {
        assert!(loopback_host(Some("127.0.0.1:8080"), 8080));
        assert!(loopback_host(Some("localhost"), 8080));
        assert!(loopback_host(Some("[::1]:8080"), 8080));
        assert!(!loopback_host(Some("localhost:9"), 8080));
        assert!(!loopback_host(Some("evil.example:8080"), 8080));
        assert!(!loopback_host(None, 8080));
        assert!(loopback_origin("http://localhost:3000"));
        assert!(!loopback_origin("https://evil.example"));
        assert!(!loopback_origin("http://localhost.evil.example"));
    }
}
