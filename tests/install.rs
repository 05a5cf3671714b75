//! `install.sh` end to end, run by `sh` against release assets served from a loopback HTTP
//! server: a good install (twice), a corrupted asset, an unknown architecture, `--uninstall`.

mod common;

use common::Scratch;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Serves the files of `dir` over HTTP on loopback, for as long as the test runs.
fn serve(dir: PathBuf) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut writer = stream.try_clone().unwrap();
            let mut reader = BufReader::new(stream);
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
            }
            let name = first
                .split_whitespace()
                .nth(1)
                .unwrap_or("/")
                .trim_start_matches('/');
            let _ = match std::fs::read(dir.join(name)) {
                Ok(body) if !name.is_empty() && !name.contains("..") => write!(
                    writer,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .and_then(|()| writer.write_all(&body)),
                _ => writer.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                ),
            };
        }
    });
    port
}

/// The release assets for this machine: the sqz just built, under its release name, and its
/// checksum file in the `sha256sum` format `cargo xtask dist` writes.
fn assets(s: &Scratch, corrupt: bool) -> PathBuf {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x86_64",
        "aarch64" => "aarch64",
        other => panic!("no release name for {other}"),
    };
    let os = if cfg!(target_os = "macos") {
        "apple-darwin"
    } else {
        "unknown-linux-musl"
    };
    let name = format!("sqz-{arch}-{os}");
    let dir = s.dir.join(if corrupt { "bad-release" } else { "release" });
    std::fs::create_dir_all(&dir).unwrap();
    let binary = std::fs::read(env!("CARGO_BIN_EXE_sqz")).unwrap();
    let sum = common::sha256_hex(&binary);
    let mut served = binary;
    if corrupt {
        let last = served.len() - 1;
        served[last] ^= 0xff;
    }
    std::fs::write(dir.join(&name), served).unwrap();
    std::fs::write(
        dir.join(format!("{name}.sha256")),
        format!("{sum}  {name}\n"),
    )
    .unwrap();
    dir
}

fn install(s: &Scratch, port: u16, args: &[&str], path_prefix: Option<&Path>) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
    let path = match path_prefix {
        Some(p) => format!("{}:/usr/bin:/bin", p.display()),
        None => "/usr/bin:/bin".to_string(),
    };
    Command::new("sh")
        .arg(script)
        .args(args)
        .env_clear()
        .env("HOME", s.dir.join("home"))
        .env("PATH", path)
        .env("SQZ_DOWNLOAD_URL", format!("http://127.0.0.1:{port}"))
        .output()
        .expect("run sh install.sh")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_installer_checks_installs_again_and_uninstalls() {
    let s = Scratch::new("install");
    let port = serve(assets(&s, false));
    let bin = s.dir.join("home/.local/bin/sqz");
    for _ in 0..2 {
        let out = install(&s, port, &[], None);
        let said = text(&out);
        assert!(out.status.success(), "{said}");
        assert!(said.contains("is not on your PATH"), "{said}");
        assert!(said.contains("sqz init"), "{said}");
        let version = Command::new(&bin).arg("--version").output().unwrap();
        assert!(String::from_utf8_lossy(&version.stdout).starts_with("sqz "));
    }
    assert!(s.dir.join("home/.local/bin/sqz-mcp").exists());
    let out = install(&s, port, &["--uninstall"], None);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!bin.exists());
    let again = install(&s, port, &["--uninstall"], None);
    assert!(text(&again).contains("nothing to remove"));
}

#[test]
fn a_corrupted_asset_installs_nothing() {
    let s = Scratch::new("install-bad");
    let port = serve(assets(&s, true));
    let out = install(&s, port, &[], None);
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("checksum mismatch"), "{said}");
    assert!(!s.dir.join("home/.local/bin/sqz").exists());
}

#[test]
fn an_unknown_architecture_is_refused_by_name() {
    let s = Scratch::new("install-arch");
    let port = serve(assets(&s, false));
    // A `uname` that reports a machine sqz is not built for.
    let fake = s.dir.join("fake-bin");
    std::fs::create_dir_all(&fake).unwrap();
    let uname = fake.join("uname");
    std::fs::write(
        &uname,
        "#!/bin/sh\nif [ \"$1\" = -m ]; then echo sparc64; else echo Linux; fi\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&uname, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = install(&s, port, &[], Some(&fake));
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("sparc64"), "{said}");
    assert!(!s.dir.join("home/.local/bin/sqz").exists());
}
