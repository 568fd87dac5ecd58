//! SQL text as statements, by DataFusion's SQL tokenizer: splitting a
//! script at its `;` tokens (`query -e`, `-f`, the shell's `.read`), and
//! whether the shell has read a whole statement.

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Location, Token, Tokenizer};

/// SQL text split into statements at the `;` tokens of DataFusion's SQL
/// tokenizer, so a `;` inside a string, a quoted name or a comment stays
/// where it is. Pieces holding only whitespace and comments are dropped.
/// Text the tokenizer rejects (an unterminated string) is one statement:
/// the planner then reports the error with its position.
pub fn statements(sql: &str) -> Vec<String> {
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize_with_location() else {
        return if sql.trim().is_empty() {
            Vec::new()
        } else {
            vec![sql.to_string()]
        };
    };
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(sql.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    // Locations are 1-based lines and columns counted in characters.
    let offset = |at: Location| -> usize {
        let line = line_starts[(at.line as usize)
            .saturating_sub(1)
            .min(line_starts.len() - 1)];
        sql[line..]
            .char_indices()
            .nth((at.column as usize).saturating_sub(1))
            .map_or(sql.len(), |(i, _)| line + i)
    };
    let mut out = Vec::new();
    let (mut begin, mut has_sql) = (0, false);
    for t in &tokens {
        match &t.token {
            Token::SemiColon => {
                let at = offset(t.span.start);
                if has_sql {
                    out.push(sql[begin..at].to_string());
                }
                (begin, has_sql) = (at + 1, false);
            }
            Token::Whitespace(_) | Token::EOF => {}
            _ => has_sql = true,
        }
    }
    if has_sql {
        out.push(sql[begin..].to_string());
    }
    out
}

/// Whether the shell has read a whole statement: the text tokenizes and
/// its last token other than whitespace and comments is `;`.
pub fn statement_complete(sql: &str) -> bool {
    Tokenizer::new(&GenericDialect {}, sql)
        .tokenize()
        .is_ok_and(|tokens| {
            tokens
                .iter()
                .rev()
                .find(|t| !matches!(t, Token::Whitespace(_) | Token::EOF))
                == Some(&Token::SemiColon)
        })
}

#[cfg(test)]
mod tests {
    use crate::shell::statement::{statement_complete, statements};

    #[test]
    fn statements_split_at_semicolons_outside_strings_names_and_comments() {
        let trimmed = |sql: &str| -> Vec<String> {
            statements(sql)
                .iter()
                .map(|s| s.trim().to_string())
                .collect()
        };
        assert_eq!(
            trimmed("SELECT ';' AS a; SELECT 2"),
            ["SELECT ';' AS a", "SELECT 2"]
        );
        assert_eq!(
            trimmed("SELECT 1; -- it's; a comment\nSELECT \"a;b\" FROM t;"),
            ["SELECT 1", "-- it's; a comment\nSELECT \"a;b\" FROM t"]
        );
        assert_eq!(
            trimmed("SELECT 'it''s; fine' /* ; */ ;;"),
            ["SELECT 'it''s; fine' /* ; */"]
        );
        assert!(statements("/* ; */ -- ;\n  ;").is_empty());
        assert!(statements("   ").is_empty());
        // The planner reports what the tokenizer rejects, so it stays whole.
        assert_eq!(
            statements("SELECT 'open; SELECT 2"),
            ["SELECT 'open; SELECT 2"]
        );
        // Multi-byte text before a split keeps byte offsets right.
        assert_eq!(
            trimmed("SELECT 'µs→ns' AS u; SELECT 3"),
            ["SELECT 'µs→ns' AS u", "SELECT 3"]
        );
    }

    #[test]
    fn the_shell_waits_for_a_closing_semicolon() {
        assert!(statement_complete("SELECT 1;"));
        assert!(statement_complete("SELECT 1; -- done\n"));
        assert!(!statement_complete("SELECT ';'"));
        assert!(!statement_complete("SELECT 'a;\n"));
        assert!(!statement_complete("SELECT 1 -- ;\n"));
    }
}
