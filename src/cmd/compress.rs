//! `sqz compress`: read stdin, strip the exit trailer, let the engine decide, write the store
//! in one transaction, then print. It never fails: on any problem the agent gets the original
//! output and the original exit status, with at most one line of reason on stderr.

use crate::cli::Compress;
use crate::clock::now_ms;
use crate::engine::trailer;
use crate::env::Env;
use crate::error::{Error, Result};
use std::borrow::Cow;
use std::io::{IsTerminal, Read, Write};

pub fn run(args: &Compress, env: &Env) -> Result<u8> {
    let label = args.label.clone().unwrap_or_else(|| env.cmd_label.clone());
    let ceiling = (env.max_input_mb as usize) << 20;
    let input = match &args.text {
        Some(text) => text.clone().into_bytes(),
        None => {
            interrupt::catch();
            match read_bounded(ceiling) {
                Ok(Input::Whole(bytes)) => bytes,
                Ok(Input::Oversized(head)) => {
                    return Ok(stream_oversized(head, args.trap, ceiling, env) as u8)
                }
                Ok(Input::Interrupted(read, signal)) => {
                    // Killed mid-command: what was read goes out as it came, and sqz ends
                    // the way the signal asks.
                    super::io::write_stdout(&read);
                    interrupt::die_of(signal)
                }
                Err(e) => return Err(Error::failed(format!("cannot read stdin: {e}"))),
            }
        }
    };
    let (body, exit_code) = if args.text.is_some() {
        (Cow::Borrowed(&input[..]), None)
    } else if args.trap {
        trailer::strip_trapped(&input)
    } else {
        let (body, code) = trailer::strip(&input);
        (Cow::Borrowed(body), code)
    };
    let code = exit_code.unwrap_or(0);
    let no_cache = args.no_cache || env.no_dedup;

    let (mut store, store_problem) = crate::serve::open_store_for_compress(env, now_ms());
    if store.is_none() && store_problem.is_none() && body.len() > SANDBOXED_MAX_BYTES {
        // A sandbox kept sqz from any store, so only lossless changes could run, and their
        // denser text would only put more tokens into the window the client cuts it to.
        super::io::write_stdout(&body);
        return Ok(code as u8);
    }
    let served = crate::serve::compress(&label, &body, store.as_mut(), no_cache, env, now_ms());
    emit(&served.stdout, served.header.as_deref(), env);
    // Errors always print; the informational passthrough reason is silenced by SQZ_QUIET.
    for problem in store_problem.into_iter().chain(served.notice) {
        eprintln!("{problem}");
    }
    // Nothing saved, nothing said: an agent pays for every stderr line, so why the input went
    // out unchanged is told only to a person at a terminal.
    if let (Some(reason), true) = (served.reason, tells_a_person(env)) {
        eprintln!("[sqz] passed through unchanged: {reason}");
    }
    // A signal that came after the reading: the output is out, and sqz ends as it asks.
    if let Some(signal) = interrupt::caught() {
        interrupt::die_of(signal);
    }
    Ok(code as u8)
}

/// The longest output served with no store when a sandbox denies one. Codex, the client that
/// sandboxes commands, cuts a command's output to 10,000 bytes for a model it has no metadata
/// for, and to 10,000 of its 4-byte tokens otherwise: below this it shows the whole output.
const SANDBOXED_MAX_BYTES: usize = 10_000;

/// Whether stderr is a person's terminal rather than an agent's pipe.
fn tells_a_person(env: &Env) -> bool {
    !env.quiet && std::io::stderr().is_terminal()
}

fn emit(stdout: &[u8], header: Option<&str>, env: &Env) {
    super::io::write_stdout(stdout);
    if let (Some(header), false) = (header, env.quiet) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{header}");
    }
}

enum Input {
    Whole(Vec<u8>),
    /// More than the ceiling: the bytes read so far; the rest is still on stdin.
    Oversized(Vec<u8>),
    /// SIGTERM, SIGINT or SIGHUP arrived while reading: the bytes read so far, and the signal.
    Interrupted(Vec<u8>, i32),
}

/// Reads stdin into one buffer, a read at a time so a signal is noticed between reads. A file
/// on stdin is read into a buffer of its size; a pipe's buffer grows as it fills and is cut to
/// what it holds at the end.
fn read_bounded(ceiling: usize) -> std::io::Result<Input> {
    const READ: usize = 1 << 16;
    let mut stdin = std::io::stdin().lock();
    // The byte past the end lets the last read see the end without growing the buffer.
    let size = file_size(&stdin).map_or(0, |size| size.min(ceiling as u64 + 1) as usize + 1);
    let mut buf = Vec::with_capacity(size);
    loop {
        if let Some(signal) = interrupt::caught() {
            interrupt::drain_waiting(&mut stdin, &mut buf);
            return Ok(Input::Interrupted(buf, signal));
        }
        if buf.len() == buf.capacity() {
            buf.reserve(READ);
        }
        // Read straight into the buffer's spare room, zeroed a read's worth at a time.
        let len = buf.len();
        buf.resize(len + (buf.capacity() - len).min(READ), 0);
        match stdin.read(&mut buf[len..]) {
            Ok(0) => {
                buf.truncate(len);
                buf.shrink_to_fit();
                return Ok(Input::Whole(buf));
            }
            Ok(n) => buf.truncate(len + n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => buf.truncate(len),
            Err(e) => return Err(e),
        }
        if buf.len() > ceiling {
            return Ok(Input::Oversized(buf));
        }
    }
}

/// The size of the file on stdin, when stdin is a regular file.
fn file_size(stdin: &impl std::os::fd::AsFd) -> Option<u64> {
    let file = std::fs::File::from(stdin.as_fd().try_clone_to_owned().ok()?);
    let meta = file.metadata().ok()?;
    meta.is_file().then_some(meta.len())
}

/// SIGTERM, SIGINT and SIGHUP while `sqz compress` reads: an agent's timeout or a user's
/// Ctrl-C ends the command and sqz with it, and the output read so far must still reach the
/// agent. The handler only notes the signal; the read it interrupts returns, and the reader
/// writes what it holds and then dies of the same signal.
mod interrupt {
    use std::sync::atomic::{AtomicI32, Ordering};

    static CAUGHT: AtomicI32 = AtomicI32::new(0);
    const SIGNALS: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

    extern "C" fn note(signal: i32) {
        CAUGHT.store(signal, Ordering::SeqCst);
    }

    /// Installs the handler, without SA_RESTART, so a blocked read returns.
    pub fn catch() {
        for signal in SIGNALS {
            // SAFETY: a zeroed sigaction is valid; the handler only stores to an atomic.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = note as extern "C" fn(i32) as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }

    /// Adds what is already waiting in the pipe (the killed command's last lines) without
    /// waiting for more.
    pub fn drain_waiting(stdin: &mut impl std::io::Read, buf: &mut Vec<u8>) {
        // SAFETY: fcntl on the process's own stdin descriptor.
        unsafe {
            let flags = libc::fcntl(0, libc::F_GETFL);
            if flags < 0 || libc::fcntl(0, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
                return;
            }
        }
        let mut chunk = vec![0u8; 1 << 16];
        while let Ok(n) = stdin.read(&mut chunk) {
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
    }

    pub fn caught() -> Option<i32> {
        match CAUGHT.load(Ordering::SeqCst) {
            0 => None,
            signal => Some(signal),
        }
    }

    /// Ends the process as `signal` would have, so the shell sees the same status.
    pub fn die_of(signal: i32) -> ! {
        // SAFETY: restoring the default action and raising a signal are plain libc calls.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
        std::process::exit(128 + signal)
    }
}

/// Streams an input over the ceiling straight through, holding back only enough bytes to
/// strip a final exit trailer, so it is never held in memory twice. Under `--trap` a marker
/// line seen on the way is held back with what follows it (up to the ceiling again), since
/// background output may come after the trailer.
fn stream_oversized(head: Vec<u8>, trap: bool, ceiling: usize, env: &Env) -> i32 {
    let mut out = std::io::stdout().lock();
    let mut pending = head;
    let mut chunk = vec![0u8; 1 << 16];
    let mut stdin = std::io::stdin().lock();
    let mut broken = false;
    let (mut scanned, mut marker_at): (usize, Option<usize>) = (0, None);
    loop {
        // A trailer may be followed by any number of line breaks: those are held back too.
        let breaks = pending
            .iter()
            .rev()
            .take_while(|b| matches!(b, b'\n' | b'\r'))
            .count();
        let mut hold = trailer::MAX_TRAILER_LEN + breaks;
        if trap {
            // Only the bytes not searched yet, and a trailer's length before them.
            let from = scanned.saturating_sub(trailer::MAX_TRAILER_LEN);
            if let Some(marker) = trailer::last_marker_line(&pending, from) {
                marker_at = Some(marker.start);
            }
            scanned = pending.len();
            if let Some(start) = marker_at {
                // The marker line, the line break before it, and all that came after.
                let held = pending.len() - start.saturating_sub(2);
                if held <= ceiling {
                    hold = hold.max(held);
                } else {
                    marker_at = None;
                }
            }
        }
        if pending.len() > hold {
            let cut = pending.len() - hold;
            if !broken && out.write_all(&pending[..cut]).is_err() {
                broken = true;
            }
            pending.drain(..cut);
            scanned -= cut.min(scanned);
            marker_at = marker_at.map(|start| start - cut);
        }
        match stdin.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => pending.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let (body, code) = if trap {
        trailer::strip_trapped(&pending)
    } else {
        let (body, code) = trailer::strip(&pending);
        (Cow::Borrowed(body), code)
    };
    if !broken {
        let _ = out.write_all(&body).and_then(|()| out.flush());
    }
    if tells_a_person(env) {
        eprintln!(
            "[sqz] passed through unchanged: larger than {} MiB (SQZ_MAX_INPUT_MB)",
            env.max_input_mb
        );
    }
    code.unwrap_or(0)
}
