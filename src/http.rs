//! HTTP/1.1 as sqz's two loopback servers speak it (`sqz mcp --transport http` and `sqz
//! proxy`): one request read whole, by `Content-Length` or chunked, under a ceiling; one
//! response written with its length; and the loopback checks on `Host` and `Origin`.

use std::io::{BufRead, Write};

/// Why a request could not be read: the status to answer and a line saying why.
#[derive(Debug)]
pub struct Refused {
    pub status: u16,
    pub message: String,
}

fn bad(message: impl Into<String>) -> Refused {
    Refused {
        status: 400,
        message: message.into(),
    }
}

fn too_large(max: usize) -> Refused {
    Refused {
        status: 413,
        message: format!("sqz: body larger than {max} bytes\n"),
    }
}

const MAX_HEADER_BYTES: usize = 64 * 1024;

#[derive(Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The next request on a connection, its body at most `max_body` bytes; `None` when the
/// client closed the connection between requests.
pub fn read_request(
    reader: &mut impl BufRead,
    max_body: usize,
) -> Result<Option<Request>, Refused> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| bad(format!("sqz: {e}\n")))?;
        if n == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(bad("sqz: connection closed inside the headers\n"))
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
            return Err(bad("sqz: headers too large\n"));
        }
    }
    let head = String::from_utf8(head).map_err(|_| bad("sqz: headers are not UTF-8\n"))?;
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
        request.body = read_chunked(reader, max_body)?;
    } else if let Some(len) = request.header("content-length") {
        let len: usize = len.parse().map_err(|_| bad("sqz: bad Content-Length\n"))?;
        if len > max_body {
            return Err(too_large(max_body));
        }
        request.body = vec![0; len];
        reader
            .read_exact(&mut request.body)
            .map_err(|e| bad(format!("sqz: {e}\n")))?;
    }
    Ok(Some(request))
}

fn read_chunked(reader: &mut impl BufRead, max_body: usize) -> Result<Vec<u8>, Refused> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader
            .read_line(&mut size_line)
            .map_err(|e| bad(format!("sqz: {e}\n")))?;
        let size = usize::from_str_radix(size_line.trim().split(';').next().unwrap_or(""), 16)
            .map_err(|_| bad("sqz: bad chunk size\n"))?;
        if size == 0 {
            let mut trailer = String::new();
            while reader
                .read_line(&mut trailer)
                .map_err(|e| bad(format!("sqz: {e}\n")))?
                > 2
            {
                trailer.clear();
            }
            return Ok(body);
        }
        match body.len().checked_add(size) {
            None => return Err(bad("sqz: chunk size overflows\n")),
            Some(n) if n > max_body => return Err(too_large(max_body)),
            Some(_) => {}
        }
        let start = body.len();
        body.resize(start + size + 2, 0);
        reader
            .read_exact(&mut body[start..])
            .map_err(|e| bad(format!("sqz: {e}\n")))?;
        body.truncate(start + size);
    }
}

/// Writes one response with its length; `extra` is more header lines, each ending in CRLF.
pub fn respond_with(
    out: &mut impl Write,
    status: u16,
    content_type: &str,
    extra: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let allow = if status == 405 { "Allow: POST\r\n" } else { "" };
    write!(
        out,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{allow}{extra}\r\n",
        body.len()
    )?;
    out.write_all(body)?;
    out.flush()
}

/// Writes one response with its length.
pub fn respond(
    out: &mut impl Write,
    status: u16,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    respond_with(out, status, content_type, "", body)
}

/// How much of a refused request is read and dropped before its connection closes.
const DRAIN_LIMIT: u64 = 256 << 20;

/// The next request to serve on a connection to the loopback server on `port`. `None` when
/// the client closed the connection, or when the request was refused (unreadable: 400, too
/// large: 413, a foreign `Host` or `Origin`: 403) and answered here; the connection then
/// ends. What a refused client is still sending is read and dropped first, so it can finish
/// and read the answer instead of meeting a reset connection.
pub fn next_request(
    reader: &mut std::io::BufReader<std::net::TcpStream>,
    writer: &mut std::net::TcpStream,
    max_body: usize,
    port: u16,
) -> std::io::Result<Option<Request>> {
    let (status, why): (u16, Vec<u8>) = match read_request(reader, max_body) {
        Ok(None) => return Ok(None),
        Ok(Some(request)) => match foreign(&request, port) {
            None => return Ok(Some(request)),
            Some(why) => (403, why.to_vec()),
        },
        Err(refused) => (refused.status, refused.message.into_bytes()),
    };
    respond(writer, status, "text/plain", &why)?;
    let _ = writer.shutdown(std::net::Shutdown::Write);
    let _ = std::io::copy(
        &mut std::io::Read::take(reader, DRAIN_LIMIT),
        &mut std::io::sink(),
    );
    Ok(None)
}

/// Why a request to the loopback server on `port` is refused (403), if it is: a `Host` that
/// is not this server, or an `Origin` that is not loopback, so no web page can reach it.
pub fn foreign(request: &Request, port: u16) -> Option<&'static [u8]> {
    if !loopback_host(request.header("host"), port) {
        return Some(b"sqz: Host is not this loopback server\n");
    }
    if request
        .header("origin")
        .is_some_and(|o| !loopback_origin(o))
    {
        return Some(b"sqz: Origin is not loopback\n");
    }
    None
}

/// `Host` names this server: a loopback name, with this port or none.
pub fn loopback_host(host: Option<&str>, port: u16) -> bool {
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
pub fn loopback_origin(origin: &str) -> bool {
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
    fn chunk_sizes_that_overflow_are_refused_not_panicked_on() {
        let mut input: &[u8] = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nfffffffffffffffd\r\n";
        let refused = read_request(&mut input, usize::MAX).unwrap_err();
        assert_eq!(refused.status, 400);
        let mut big: &[u8] = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nfffff\r\n";
        assert_eq!(read_request(&mut big, 1 << 10).unwrap_err().status, 413);
        let mut small: &[u8] = b"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world";
        assert_eq!(read_request(&mut small, 10).unwrap_err().status, 413);
    }

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
