//! The `sqz` binary: parse arguments, dispatch to the command, map the result to an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Invoked as `sqz-mcp`, the binary is `sqz mcp`, so configs written for it keep working.
    let invoked_as = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .map(|n| n.to_os_string());
    args[0] = "mcp".into();
    let args = if invoked_as.is_some_and(|n| n == "sqz-mcp") {
        args
    } else {
        args.split_off(1)
    };
    let code = match sqz::cli::parse(args) {
        Ok(command) => sqz::cmd::run(command, &sqz::env::Env::from_process()),
        Err(e) => {
            eprintln!("sqz: {e}");
            2
        }
    };
    ExitCode::from(code as u8)
}
