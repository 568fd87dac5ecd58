//! The shell's line editor at a terminal: rustyline's helper with
//! multi-line SQL (a statement is read until its closing `;`), tab
//! completion of the catalog's tables, views and columns, of SQL keywords
//! and of the dot-commands of [`super::command`], and the history file.

use std::collections::BTreeSet;
use std::path::PathBuf;

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Helper};

use super::command;
use super::statement::statement_complete;

/// SQL words completed as typed (in the case of the typed prefix).
const KEYWORDS: &[&str] = &[
    "AND",
    "AS",
    "ASC",
    "BETWEEN",
    "BY",
    "CASE",
    "CAST",
    "COUNT",
    "DESC",
    "DESCRIBE",
    "DISTINCT",
    "ELSE",
    "END",
    "EXPLAIN",
    "FROM",
    "GROUP",
    "HAVING",
    "IN",
    "INNER",
    "IS",
    "JOIN",
    "LEFT",
    "LIKE",
    "LIMIT",
    "NOT",
    "NULL",
    "ON",
    "OR",
    "ORDER",
    "OVER",
    "PARTITION",
    "SELECT",
    "SUM",
    "THEN",
    "UNION",
    "USING",
    "WHEN",
    "WHERE",
    "WITH",
];

/// Completion, validation and (no) highlighting for the shell's editor.
pub struct ShellHelper {
    /// Table, view and column names of the session's catalog.
    names: BTreeSet<String>,
}

impl ShellHelper {
    /// A helper completing `names` (tables, views, columns).
    pub fn new(names: impl IntoIterator<Item = String>) -> Self {
        Self {
            names: names.into_iter().collect(),
        }
    }

    /// Adds names, e.g. after `.open` brought more tables.
    pub fn extend(&mut self, names: impl IntoIterator<Item = String>) {
        self.names.extend(names);
    }

    /// The start of the word ending at `pos` and its candidates.
    fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<Pair>) {
        let before = &line[..pos];
        let start = before
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &before[start..];
        let pair = |s: &str| Pair {
            display: s.to_string(),
            replacement: s.to_string(),
        };
        if start == 0 && word.starts_with('.') {
            let found = command::completions().into_iter();
            let found = found.filter(|c| c.starts_with(word));
            return (0, found.map(pair).collect());
        }
        // `t.col`: complete the column part only.
        let (start, word) = match word.rfind('.') {
            Some(dot) => (start + dot + 1, &word[dot + 1..]),
            None => (start, word),
        };
        if word.is_empty() {
            return (start, Vec::new());
        }
        let lower = word.to_ascii_lowercase();
        let mut found: Vec<Pair> = self
            .names
            .iter()
            .filter(|n| n.to_ascii_lowercase().starts_with(&lower))
            .map(|n| pair(n))
            .collect();
        let upper = word.chars().all(|c| !c.is_lowercase());
        found.extend(
            KEYWORDS
                .iter()
                .filter(|k| k.starts_with(&word.to_ascii_uppercase()))
                .map(|k| {
                    if upper {
                        pair(k)
                    } else {
                        pair(&k.to_ascii_lowercase())
                    }
                }),
        );
        (start, found)
    }
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        Ok(self.candidates(line, pos))
    }
}

impl Validator for ShellHelper {
    /// A line is done when it is a dot-command, empty, or SQL ending in
    /// `;` (outside strings and comments); else Enter starts a new line of
    /// the same statement.
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        let input = ctx.input().trim();
        Ok(
            if input.is_empty() || input.starts_with('.') || statement_complete(input) {
                ValidationResult::Valid(None)
            } else {
                ValidationResult::Incomplete
            },
        )
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

impl Helper for ShellHelper {}

/// Where the shell keeps its history: `$XPROF_SQL_HISTORY`, else
/// `~/.xprof_sql_history` (`None` when neither can be named).
pub fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("XPROF_SQL_HISTORY") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".xprof_sql_history"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(helper: &ShellHelper, line: &str) -> (usize, Vec<String>) {
        let (start, found) = helper.candidates(line, line.len());
        (start, found.into_iter().map(|p| p.replacement).collect())
    }

    #[test]
    fn completes_names_keywords_columns_after_a_dot_and_commands() {
        let helper =
            ShellHelper::new(["events", "event_args", "hlo_stats", "ts_ps"].map(String::from));
        assert_eq!(
            complete(&helper, "SELECT * FROM eve"),
            (14, vec!["event_args".into(), "events".into()])
        );
        assert_eq!(complete(&helper, "select e.ts"), (9, vec!["ts_ps".into()]));
        assert_eq!(complete(&helper, "sel"), (0, vec!["select".into()]));
        assert_eq!(complete(&helper, "SEL"), (0, vec!["SELECT".into()]));
        assert_eq!(complete(&helper, ".ta"), (0, vec![".tables".into()]));
        assert_eq!(complete(&helper, "SELECT "), (7, vec![]));
        assert_eq!(complete(&helper, "x = 'é"), (5, vec![]));
    }
}
