//! `cargo xtask dist`: a static release build. The musl target is used when its standard
//! library is installed; otherwise glibc with a static C runtime, and the name says which.
//! It fails when the binary is not under `MAX_BYTES` (SPEC §2: under 4 MB stripped).

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The size limit of the shipped binary: 4 MB, in decimal bytes.
const MAX_BYTES: usize = 4_000_000;

/// Where cargo puts build output: `CARGO_TARGET_DIR` when set (relative to the workspace, where
/// cargo runs), else `target/`.
pub fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

/// Builds the static release binary; returns its path and whether it is the musl build.
pub fn build_static(root: &Path) -> Result<(PathBuf, bool), String> {
    let musl = "x86_64-unknown-linux-musl";
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim() == musl)
        })
        .unwrap_or(false);
    let target = if installed {
        musl
    } else {
        eprintln!("xtask: the {musl} standard library is not installed (rustup target add {musl}); building a static glibc binary instead");
        "x86_64-unknown-linux-gnu"
    };
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--quiet",
            "--bin",
            "sqz",
            "--target",
            target,
        ])
        .env(
            "RUSTFLAGS",
            "-C target-feature=+crt-static -C relocation-model=static",
        )
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("release build failed".into());
    }
    Ok((
        target_dir(root).join(target).join("release").join("sqz"),
        installed,
    ))
}

pub fn run(root: &Path) -> Result<(), String> {
    let musl = "x86_64-unknown-linux-musl";
    let (built, installed) = build_static(root)?;
    let name = if installed {
        format!("sqz-{musl}")
    } else {
        "sqz-x86_64-unknown-linux-gnu-static".to_string()
    };
    let dist = root.join("dist");
    std::fs::create_dir_all(&dist).map_err(|e| format!("cannot create dist/: {e}"))?;
    let out = dist.join(&name);
    std::fs::copy(&built, &out).map_err(|e| format!("cannot copy {}: {e}", built.display()))?;
    let bytes = std::fs::read(&out).map_err(|e| e.to_string())?;
    std::fs::write(
        dist.join(format!("{name}.sha256")),
        format!("{}  {name}\n", sha256_hex(&bytes)),
    )
    .map_err(|e| e.to_string())?;
    let file = Command::new("file")
        .arg(&out)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    println!(
        "{} ({} bytes, {:.2} MB)",
        out.display(),
        bytes.len(),
        bytes.len() as f64 / 1e6
    );
    if let Ok(file) = file {
        print!("{file}");
        if !file.contains("statically linked") && !file.contains("static-pie linked") {
            return Err("the binary is not statically linked".into());
        }
    }
    if bytes.len() >= MAX_BYTES {
        return Err(format!(
            "{} is {} bytes, not under the limit of {MAX_BYTES} bytes (4 MB)",
            out.display(),
            bytes.len()
        ));
    }
    Ok(())
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
