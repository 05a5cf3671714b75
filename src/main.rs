//! The `sqz` binary: install the panic hook, parse arguments, run the command, print its error
//! once as `sqz: MESSAGE` and exit with its status.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    // Invoked as `sqz-mcp`, the binary is `sqz mcp`, so configs written for it keep working.
    let as_mcp = args
        .next()
        .is_some_and(|a| std::path::Path::new(&a).file_name() == Some("sqz-mcp".as_ref()));
    let args = as_mcp.then(|| "mcp".into()).into_iter().chain(args);
    sqz::fault::install_hook();
    let run = || {
        sqz::cli::parse(args)
            .map_err(|e| sqz::error::Error::usage(e.to_string()))
            .and_then(|command| sqz::cmd::run(command, &sqz::env::Env::from_process()))
    };
    // A panic no command caught is still one line (the hook only records its report).
    let result = sqz::fault::catch(run).unwrap_or_else(|report| {
        Err(sqz::error::Error::new(
            101,
            format!("internal error: {report}"),
        ))
    });
    match result {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("sqz: {e}");
            ExitCode::from(e.code)
        }
    }
}
