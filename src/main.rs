//! The `sqz` binary: parse arguments, dispatch to the command, map the result to an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = match sqz::cli::parse(std::env::args_os().skip(1)) {
        Ok(command) => sqz::cmd::run(command, &sqz::env::Env::from_process()),
        Err(e) => {
            eprintln!("sqz: {e}");
            2
        }
    };
    ExitCode::from(code as u8)
}
