//! The parts every section of the report is made of: a query's answer
//! read by column name ([`Answer`], [`ask`]), a section of the page
//! ([`Section`]), a chart with its view and SQL ([`figure`]) and a table of
//! an answer ([`table`]).

use std::fmt::Write as _;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type};
use xprof_query::ProfileSession;

use super::svg;

/// Errors of a report: the queries behind it.
pub type Result<T> = std::result::Result<T, xprof_query::QueryError>;

/// One query's answer, read by column name.
pub(super) struct Answer {
    pub(super) batches: Vec<RecordBatch>,
}

impl Answer {
    pub(super) fn rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    fn column(&self, name: &str) -> Vec<Option<arrow::array::ArrayRef>> {
        self.batches
            .iter()
            .map(|b| b.column_by_name(name).cloned())
            .collect()
    }

    /// A column as f64 (NULL and non-numbers as NaN).
    pub(super) fn f64s(&self, name: &str) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.rows());
        for (b, col) in self.batches.iter().zip(self.column(name)) {
            let Some(col) = col else {
                out.extend(std::iter::repeat_n(f64::NAN, b.num_rows()));
                continue;
            };
            match arrow::compute::cast(&col, &DataType::Float64) {
                Ok(c) => {
                    let c = c.as_primitive::<Float64Type>();
                    out.extend(
                        (0..c.len()).map(|i| if c.is_valid(i) { c.value(i) } else { f64::NAN }),
                    );
                }
                Err(_) => out.extend(std::iter::repeat_n(f64::NAN, b.num_rows())),
            }
        }
        out
    }

    /// A column as text (NULL as "").
    pub(super) fn strings(&self, name: &str) -> Vec<String> {
        let mut out = Vec::with_capacity(self.rows());
        for (b, col) in self.batches.iter().zip(self.column(name)) {
            let Some(col) = col else {
                out.extend(std::iter::repeat_n(String::new(), b.num_rows()));
                continue;
            };
            let text = arrow::util::display::ArrayFormatter::try_new(
                col.as_ref(),
                &arrow::util::display::FormatOptions::default(),
            );
            match text {
                Ok(f) => out.extend((0..col.len()).map(|i| {
                    if col.is_valid(i) {
                        f.value(i).to_string()
                    } else {
                        String::new()
                    }
                })),
                Err(_) => out.extend(std::iter::repeat_n(String::new(), b.num_rows())),
            }
        }
        out
    }
}

pub(super) async fn ask(session: &ProfileSession, sql: &str) -> Result<Answer> {
    Ok(Answer {
        batches: session.collect(sql).await?,
    })
}

/// One part of the page.
pub(super) struct Section {
    pub(super) id: &'static str,
    pub(super) title: String,
    /// The views drawn from.
    pub(super) views: Vec<&'static str>,
    pub(super) body: String,
}

/// The unit of a [`table`] column of whole counts (occurrences, ids):
/// shown as the integer, not with three significant digits.
pub(super) const COUNT: &str = "#";

/// The unit of a [`table`] column of file paths: shown with whole folders
/// elided from the middle and the file name whole
/// ([`svg::elide_path`]), the whole path on hover, never cut by the
/// table's column width.
pub(super) const PATH: &str = "path";

/// Characters a [`PATH`] cell shows, its file name whole whatever its
/// length.
const PATH_CHARS: usize = 56;

/// A chart with its view name and SQL.
pub(super) fn figure(view: &str, chart_svg: &str, sql: &str, caption: &str) -> String {
    format!(
        "<figure data-chart=\"{view}\">{chart_svg}<figcaption>{} <span class=\"view\">from <code>{view}</code></span>\
         <details><summary>SQL</summary><pre>{}</pre></details></figcaption></figure>\n",
        svg::escape(caption),
        svg::escape(sql.trim())
    )
}

/// A table of `answer`'s `columns` (header, column name, and the unit
/// of a number column, [`COUNT`] for whole counts, [`PATH`] for a text
/// column of file paths, or `None` for text), under
/// `data-table="<view>"`.
pub(super) fn table(
    view: &str,
    answer: &Answer,
    columns: &[(&str, &str, Option<&str>)],
    sql: &str,
) -> String {
    let mut html = format!("<div class=\"table\" data-table=\"{view}\"><table><thead><tr>");
    for (header, _, _) in columns {
        let _ = write!(html, "<th>{}</th>", svg::escape(header));
    }
    html.push_str("</tr></thead><tbody>");
    let cells: Vec<(Vec<String>, Vec<f64>)> = columns
        .iter()
        .map(|(_, name, _)| (answer.strings(name), answer.f64s(name)))
        .collect();
    for row in 0..answer.rows() {
        html.push_str("<tr>");
        for ((_, name, unit), (text, num)) in columns.iter().zip(&cells) {
            match unit {
                Some(unit) if *unit == PATH => {
                    let _ = write!(
                        html,
                        "<td class=\"path\" data-col=\"{name}\" title=\"{}\">{}</td>",
                        svg::escape(&text[row]),
                        svg::escape(&svg::elide_path(&text[row], PATH_CHARS))
                    );
                }
                Some(unit) => {
                    let shown = if *unit == COUNT && num[row].fract() == 0.0 {
                        format!("{}", num[row])
                    } else {
                        svg::format_si(num[row], unit)
                    };
                    let _ = write!(
                        html,
                        "<td class=\"num\" data-col=\"{name}\" data-value=\"{}\">{}</td>",
                        num[row],
                        svg::escape(&shown)
                    );
                }
                None => {
                    let _ = write!(
                        html,
                        "<td data-col=\"{name}\" title=\"{0}\">{0}</td>",
                        svg::escape(&text[row])
                    );
                }
            }
        }
        html.push_str("</tr>");
    }
    let _ = writeln!(
        html,
        "</tbody></table><details><summary>SQL</summary><pre>{}</pre></details></div>",
        svg::escape(sql.trim())
    );
    html
}

/// Rows of the top-N tables and bar charts.
pub(super) const TOP: usize = 15;

/// A device's name, after its trace's id when the report shows several
/// traces.
pub(super) fn device_label(several: bool, trace_id: f64, name: &str) -> String {
    if several {
        format!("{}: {name}", trace_id as i64)
    } else {
        name.to_string()
    }
}
