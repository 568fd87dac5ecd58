//! The shell's dot-commands: one table, [`DOT_COMMANDS`], gives each its
//! names, its argument and what it does. It drives `.help`
//! ([`help`]), Tab completion ([`completions`]) and reading a typed
//! command ([`DotCommand`]'s `FromStr`); a new dot-command is a variant
//! and a row here, and its action in the shell's loop.

use std::str::FromStr;

/// A dot-command of the shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DotCommand {
    /// `.tables`
    Tables,
    /// `.schema [NAME]`
    Schema,
    /// `.mode MODE`
    Mode,
    /// `.timer on|off`
    Timer,
    /// `.maxrows N`
    MaxRows,
    /// `.read FILE`
    Read,
    /// `.output [FILE]`
    Output,
    /// `.open INPUT`
    Open,
    /// `.help`
    Help,
    /// `.quit`, `.exit`
    Quit,
}

/// One row of [`DOT_COMMANDS`].
#[derive(Debug)]
pub struct DotCommandDef {
    /// The command.
    pub command: DotCommand,
    /// The names it is typed as, the first the main one.
    pub names: &'static [&'static str],
    /// Its argument as `.help` shows it (empty: none).
    pub arg: &'static str,
    /// What it does, for `.help`.
    pub doc: &'static str,
}

const fn def(
    command: DotCommand,
    names: &'static [&'static str],
    arg: &'static str,
    doc: &'static str,
) -> DotCommandDef {
    DotCommandDef {
        command,
        names,
        arg,
        doc,
    }
}

/// Every dot-command, in `.help` order.
pub const DOT_COMMANDS: &[DotCommandDef] = &[
    def(
        DotCommand::Tables,
        &[".tables"],
        "",
        "tables and views of the open profiles",
    ),
    def(
        DotCommand::Schema,
        &[".schema"],
        "[NAME]",
        "columns of a table, SQL of a view; all tables without NAME",
    ),
    def(
        DotCommand::Mode,
        &[".mode"],
        "MODE",
        "table (default), csv, json, markdown or line",
    ),
    def(
        DotCommand::Timer,
        &[".timer"],
        "on|off",
        "print each statement's elapsed time",
    ),
    def(
        DotCommand::MaxRows,
        &[".maxrows"],
        "N",
        "table mode shows at most N rows (default 100; 0: all)",
    ),
    def(
        DotCommand::Read,
        &[".read"],
        "FILE",
        "run the SQL statements in FILE",
    ),
    def(
        DotCommand::Output,
        &[".output"],
        "[FILE]",
        "write results to FILE (created anew); no FILE: back to stdout",
    ),
    def(
        DotCommand::Open,
        &[".open"],
        "INPUT",
        "add a profile (file, run or log folder, dataset) as more traces",
    ),
    def(DotCommand::Help, &[".help"], "", "this list"),
    def(
        DotCommand::Quit,
        &[".quit", ".exit"],
        "",
        "leave (also Ctrl-D)",
    ),
];

/// Width of the usage column of `.help`.
const USAGE_WIDTH: usize = 24;

/// The text of `.help`: one line per command, its usage then what it
/// does.
pub fn help() -> String {
    let lines: Vec<String> = DOT_COMMANDS
        .iter()
        .map(|d| {
            let mut usage = d.names.join("  ");
            if !d.arg.is_empty() {
                usage.push(' ');
                usage.push_str(d.arg);
            }
            format!("{usage:<USAGE_WIDTH$}{}", d.doc)
        })
        .collect();
    lines.join("\n")
}

/// Every name a dot-command is typed as, sorted: what Tab completes after
/// a leading `.`.
pub fn completions() -> Vec<&'static str> {
    let mut names: Vec<&str> = DOT_COMMANDS
        .iter()
        .flat_map(|d| d.names.iter().copied())
        .collect();
    names.sort_unstable();
    names
}

impl FromStr for DotCommand {
    type Err = String;

    /// The command typed as `name` (e.g. `.tables`); an unknown name is an
    /// error pointing at `.help`.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        DOT_COMMANDS
            .iter()
            .find(|d| d.names.contains(&name))
            .map(|d| d.command)
            .ok_or_else(|| format!("unknown command {name}; .help lists them"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_every_command_in_its_columns() {
        assert_eq!(
            help(),
            "\
.tables                 tables and views of the open profiles
.schema [NAME]          columns of a table, SQL of a view; all tables without NAME
.mode MODE              table (default), csv, json, markdown or line
.timer on|off           print each statement's elapsed time
.maxrows N              table mode shows at most N rows (default 100; 0: all)
.read FILE              run the SQL statements in FILE
.output [FILE]          write results to FILE (created anew); no FILE: back to stdout
.open INPUT             add a profile (file, run or log folder, dataset) as more traces
.help                   this list
.quit  .exit            leave (also Ctrl-D)"
        );
    }

    #[test]
    fn completions_and_parsing_come_from_the_same_table() {
        assert_eq!(
            completions(),
            [
                ".exit", ".help", ".maxrows", ".mode", ".open", ".output", ".quit", ".read",
                ".schema", ".tables", ".timer",
            ]
        );
        for name in completions() {
            assert!(name.parse::<DotCommand>().is_ok(), "{name}");
        }
        assert_eq!(".exit".parse(), Ok(DotCommand::Quit));
        assert_eq!(
            ".bogus".parse::<DotCommand>(),
            Err("unknown command .bogus; .help lists them".to_string())
        );
    }
}
