//! The `xprof-sql` command: SQL over profiles, an interactive shell,
//! conversion to Parquet, a look inside XSpace files, and the schema.
//!
//! The command line lives in the library ([`xprof_sql::run_cli`]), so that
//! the Python wheel's `xprof-sql` command runs the same code: this file
//! hands it the process's arguments.

use std::process::ExitCode;

fn main() -> ExitCode {
    let status = xprof_sql::run_cli(std::env::args_os());
    ExitCode::from(u8::try_from(status).unwrap_or(1))
}
