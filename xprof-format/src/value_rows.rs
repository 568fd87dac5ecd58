//! Rows per value of one dictionary column, kept in a Parquet file's
//! footer: `event_args`' count of each stat `key`.
//!
//! A query that keeps one stat (`WHERE key = 'step_num'`) reads a small
//! part of `event_args`, but a Parquet scan estimates its rows as the
//! file's: DataFusion planned the join of 760 K `step_num` stats with
//! 50 M events as if both sides were big (benches/README.md, issue 48).
//! The table writer counts the rows of each value as it writes them
//! ([`ValueRows::count`]) and stores the counts under [`METADATA_KEY`]
//! ([`ValueRows::encode`]); `xprof-query` reads them back
//! ([`crate::dataset::rows_by_key`]) to estimate such a scan.
//!
//! The encoding is text, one value per line: the row count, a tab, the
//! value with `\`, tab and newline escaped (`\\`, `\t`, `\n`). NULL values
//! are not counted.

use std::collections::BTreeMap;

use arrow::array::{Array, AsArray, DictionaryArray};
use arrow::datatypes::Int32Type;

/// The footer key of `event_args`' rows per `key`.
pub const METADATA_KEY: &str = "xprof_sql.rows_by_key";

/// Rows per value of one column, as written so far.
#[derive(Debug, Clone, Default)]
pub struct ValueRows {
    rows: BTreeMap<String, u64>,
    /// Per dictionary index: its rows in the batch being counted (zero
    /// between batches), and the indices the batch used.
    per_index: Vec<u32>,
    used: Vec<u32>,
}

/// Equal when they count the same rows per value.
impl PartialEq for ValueRows {
    fn eq(&self, other: &Self) -> bool {
        self.rows == other.rows
    }
}

impl Eq for ValueRows {}

impl ValueRows {
    /// No rows counted yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the rows of `column`: one count per dictionary index used,
    /// then one map update per index used. Work and memory follow the
    /// indices the rows use, not the dictionary's length (a batch may
    /// carry a converter's whole string table).
    pub fn count(&mut self, column: &DictionaryArray<Int32Type>) {
        let strings = column.values().as_string::<i32>();
        if self.per_index.len() < strings.len() {
            self.per_index.resize(strings.len(), 0);
        }
        self.used.clear();
        let keys = column.keys();
        for (row, &index) in keys.values().iter().enumerate() {
            if keys.is_valid(row) {
                let slot = &mut self.per_index[index as usize];
                if *slot == 0 {
                    self.used.push(index as u32);
                }
                *slot += 1;
            }
        }
        for &index in &self.used {
            let index = index as usize;
            let rows = std::mem::take(&mut self.per_index[index]);
            if strings.is_valid(index) {
                let value = strings.value(index);
                match self.rows.get_mut(value) {
                    Some(total) => *total += u64::from(rows),
                    None => {
                        self.rows.insert(value.to_string(), u64::from(rows));
                    }
                }
            }
        }
    }

    /// The rows of `value` (0 when never seen).
    pub fn rows_of(&self, value: &str) -> u64 {
        self.rows.get(value).copied().unwrap_or(0)
    }

    /// Every value and its rows, by value.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.rows.iter().map(|(v, r)| (v.as_str(), *r))
    }

    /// The rows of all values.
    pub fn total(&self) -> u64 {
        self.rows.values().sum()
    }

    /// The footer text (see the module documentation).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        for (value, rows) in &self.rows {
            out.push_str(&rows.to_string());
            out.push('\t');
            for c in value.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\t' => out.push_str("\\t"),
                    '\n' => out.push_str("\\n"),
                    c => out.push(c),
                }
            }
            out.push('\n');
        }
        out
    }

    /// Reads [`ValueRows::encode`]'s text; `None` when it is not that.
    pub fn decode(text: &str) -> Option<Self> {
        let mut rows = BTreeMap::new();
        for line in text.split_terminator('\n') {
            let (count, escaped) = line.split_once('\t')?;
            let count: u64 = count.parse().ok()?;
            let mut value = String::with_capacity(escaped.len());
            let mut chars = escaped.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    value.push(match chars.next()? {
                        '\\' => '\\',
                        't' => '\t',
                        'n' => '\n',
                        _ => return None,
                    });
                } else {
                    value.push(c);
                }
            }
            *rows.entry(value).or_insert(0) += count;
        }
        Some(Self {
            rows,
            ..Self::default()
        })
    }
}
