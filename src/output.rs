//! Writing query results: an aligned table, CSV (with a header row), JSON
//! (an array of objects), Markdown, `column = value` lines, or Parquet.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::SendableRecordBatchStream;
use futures_util::StreamExt;

/// Output formats of `xprof-sql query`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// An aligned text table.
    Table,
    /// CSV with a header row.
    Csv,
    /// A JSON array of objects.
    Json,
    /// Parquet (needs an output file).
    Parquet,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// One `column = value` line per value, rows separated by a blank
    /// line (sqlite's `.mode line`).
    Line,
}

/// Dictionary columns become their value type (CSV and JSON writers and
/// most readers want plain strings).
pub fn plain_schema(schema: &Schema) -> SchemaRef {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                DataType::Dictionary(_, v) => Field::new(f.name(), (**v).clone(), f.is_nullable()),
                _ => f.as_ref().clone(),
            })
            .collect::<Vec<_>>(),
    ))
}

/// `batch` with dictionary columns cast to their value type.
pub fn plain_batch(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = plain_schema(batch.schema().as_ref());
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                cast(c, f.data_type())
            }
        })
        .collect::<std::result::Result<Vec<ArrayRef>, _>>()?;
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// Writes `stream` as a text table of at most `max_rows` rows, reading the
/// rest only to count it (memory holds the rows shown, not the result).
/// A capped table ends with `N rows (M shown)`, as DuckDB's shell does.
/// Returns the rows read.
pub async fn write_table_capped(
    mut stream: SendableRecordBatchStream,
    out: &mut dyn Write,
    max_rows: usize,
) -> Result<usize> {
    let mut rows = 0;
    let mut shown = Vec::new();
    while let Some(b) = stream.next().await {
        let b = b?;
        let keep = max_rows.saturating_sub(rows).min(b.num_rows());
        if keep > 0 {
            shown.push(plain_batch(&b.slice(0, keep))?);
        }
        rows += b.num_rows();
    }
    if shown.is_empty() {
        shown.push(RecordBatch::new_empty(plain_schema(
            stream.schema().as_ref(),
        )));
    }
    writeln!(
        out,
        "{}",
        arrow::util::pretty::pretty_format_batches(&shown)?
    )?;
    if rows > max_rows {
        writeln!(out, "{rows} rows ({max_rows} shown)")?;
    }
    Ok(rows)
}

/// Streams `stream` to `out` in `format`; Parquet goes to `parquet_path`
/// (written to a temporary name, renamed when complete). Returns the rows
/// written.
pub async fn write_stream(
    mut stream: SendableRecordBatchStream,
    format: OutputFormat,
    out: &mut dyn Write,
    parquet_path: Option<&Path>,
) -> Result<usize> {
    let mut rows = 0;
    match format {
        OutputFormat::Table => return write_table_capped(stream, out, usize::MAX).await,
        OutputFormat::Csv => {
            let mut w = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut *out);
            let mut any = false;
            while let Some(b) = stream.next().await {
                let b = plain_batch(&b?)?;
                rows += b.num_rows();
                w.write(&b)?;
                any = true;
            }
            if !any {
                w.write(&RecordBatch::new_empty(plain_schema(
                    stream.schema().as_ref(),
                )))?;
            }
        }
        OutputFormat::Json => {
            let mut w = arrow::json::ArrayWriter::new(&mut *out);
            while let Some(b) = stream.next().await {
                let b = plain_batch(&b?)?;
                rows += b.num_rows();
                w.write(&b)?;
            }
            // An empty result is `[]` too: the writer opens the array
            // when it finishes if no row did.
            w.finish()?;
            writeln!(out)?;
        }
        OutputFormat::Markdown | OutputFormat::Line => {
            let schema = stream.schema();
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            if format == OutputFormat::Markdown {
                let header: Vec<String> = names.iter().map(|n| markdown_cell(n)).collect();
                writeln!(out, "| {} |", header.join(" | "))?;
                writeln!(out, "|{}", "---|".repeat(names.len()))?;
            }
            let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
            let options = arrow::util::display::FormatOptions::default();
            while let Some(b) = stream.next().await {
                let b = b?;
                let formatters = b
                    .columns()
                    .iter()
                    .map(|c| arrow::util::display::ArrayFormatter::try_new(c.as_ref(), &options))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                for row in 0..b.num_rows() {
                    if format == OutputFormat::Markdown {
                        let cells: Vec<String> = formatters
                            .iter()
                            .map(|f| markdown_cell(&f.value(row).to_string()))
                            .collect();
                        writeln!(out, "| {} |", cells.join(" | "))?;
                    } else {
                        if rows + row > 0 {
                            writeln!(out)?;
                        }
                        for (name, f) in names.iter().zip(&formatters) {
                            writeln!(out, "{name:>width$} = {}", f.value(row))?;
                        }
                    }
                }
                rows += b.num_rows();
            }
        }
        OutputFormat::Parquet => {
            let path = parquet_path.ok_or_else(|| {
                DataFusionError::Plan("--format parquet needs an output file (-o FILE)".into())
            })?;
            // Written whole or not at all, never over a device or through a
            // symbolic link (`OutputFile`).
            let file = crate::query::output_file::OutputFile::create(path)
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            let mut w = parquet::arrow::ArrowWriter::try_new(file, stream.schema(), None)?;
            let mut n = 0;
            while let Some(b) = stream.next().await {
                let b = b?;
                n += b.num_rows();
                w.write(&b)?;
            }
            w.into_inner()?
                .commit()
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            rows = n;
        }
    }
    Ok(rows)
}

/// A Markdown table cell: `|` escaped, line breaks as `<br>`.
fn markdown_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', "<br>")
}
