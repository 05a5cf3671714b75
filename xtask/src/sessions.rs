//! `cargo xtask sessions`: the release binary's `sqz discover --replay` on the real sessions
//! kept beside the repository, in `../shared/sessions` (never copied into `fixtures/`).

use std::path::Path;

pub fn run(root: &Path) -> Result<(), String> {
    let sessions = root.join("..").join("shared").join("sessions");
    if !sessions.is_dir() {
        return Err(format!("{} is not a directory", sessions.display()));
    }
    let bin = crate::release_binary(root)?;
    let status = std::process::Command::new(bin)
        .args(["discover", "--replay"])
        .arg(&sessions)
        .status()
        .map_err(|e| format!("cannot run sqz: {e}"))?;
    if !status.success() {
        return Err(format!("sqz discover exited with {status}"));
    }
    Ok(())
}
