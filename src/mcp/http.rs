//! `sqz mcp --transport http`: the Streamable HTTP transport on loopback only. Each POST to
//! `/mcp` carries one JSON-RPC message and gets one JSON answer. Requests whose `Host` or
//! `Origin` is not loopback are refused, so a web page cannot reach the server.

use super::rpc::{self, Message};
use super::server::{Options, Server};
use crate::env::Env;
use crate::error::Error;
use crate::http::{foreign, read_request, respond};
use std::io::BufReader;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

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

/// Serves requests on one connection until the client closes it.
fn connection(stream: TcpStream, server: &Mutex<Server>, port: u16) -> std::io::Result<()> {
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    loop {
        let request = match read_request(&mut reader, MAX_BODY_BYTES) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(()),
            Err(why) => {
                return respond(
                    &mut writer,
                    why.status,
                    "text/plain",
                    why.message.as_bytes(),
                )
            }
        };
        if let Some(why) = foreign(&request, port) {
            return respond(&mut writer, 403, "text/plain", why);
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
