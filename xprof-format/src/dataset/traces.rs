//! The traces a dataset holds, read from its `traces` files.

use std::fs::File;
use std::path::Path;

use arrow::record_batch::RecordBatch;

use super::table_files;
use crate::error::{FormatError, Result};
use crate::schema::Table;

/// One trace already in a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    /// `traces.trace_id`.
    pub trace_id: i32,
    /// `traces.run`.
    pub run: Option<String>,
    /// `traces.host`.
    pub host: String,
}

/// The traces of a dataset (its `traces` files), by trace id.
pub fn traces(dataset: &Path) -> Result<Vec<TraceEntry>> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::Int32Type;
    let mut entries = Vec::new();
    for path in table_files(dataset, Table::Traces)? {
        for batch in read_columns(&path, &["trace_id", "run", "host"])? {
            let ids = batch.column(0).as_primitive::<Int32Type>();
            let text = |c: usize, i: usize| -> Option<String> {
                let col = batch.column(c);
                if col.is_null(i) {
                    return None;
                }
                arrow::compute::cast(&col.slice(i, 1), &arrow::datatypes::DataType::Utf8)
                    .ok()
                    .map(|a| a.as_string::<i32>().value(0).to_string())
            };
            for i in 0..batch.num_rows() {
                entries.push(TraceEntry {
                    trace_id: ids.value(i),
                    run: text(1, i),
                    host: text(2, i).unwrap_or_default(),
                });
            }
        }
    }
    entries.sort_by_key(|e| e.trace_id);
    Ok(entries)
}

/// The named columns of a Parquet file, in that order.
fn read_columns(path: &Path, columns: &[&str]) -> Result<Vec<RecordBatch>> {
    let parquet_err = |source| FormatError::Parquet {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(|source| FormatError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(parquet_err)?;
    let schema = builder.parquet_schema();
    let mut indices = Vec::new();
    for name in columns {
        let idx = (0..schema.num_columns())
            .find(|i| schema.column(*i).name() == *name)
            .ok_or_else(|| FormatError::Layout {
                path: path.to_path_buf(),
                why: format!("no column {name}"),
            })?;
        indices.push(idx);
    }
    let mask = parquet::arrow::ProjectionMask::leaves(schema, indices.iter().copied());
    let reader = builder.with_projection(mask).build().map_err(parquet_err)?;
    let mut batches = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|source| FormatError::Arrow {
            table: "traces",
            source,
        })?;
        // The projection keeps the file's column order; put it in `columns`'.
        let order: Vec<usize> = columns
            .iter()
            .map(|n| batch.schema().index_of(n).expect("projected"))
            .collect();
        batches.push(batch.project(&order).map_err(|source| FormatError::Arrow {
            table: "traces",
            source,
        })?);
    }
    Ok(batches)
}

/// The trace ids already in a dataset (from its `traces` files).
pub fn trace_ids(dataset: &Path) -> Result<Vec<i32>> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::Int32Type;
    let mut ids = Vec::new();
    for path in table_files(dataset, Table::Traces)? {
        let file = File::open(&path).map_err(|source| FormatError::Io {
            path: path.clone(),
            source,
        })?;
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|source| FormatError::Parquet {
                path: path.clone(),
                source,
            })?;
        for batch in reader {
            let batch = batch.map_err(|source| FormatError::Arrow {
                table: "traces",
                source,
            })?;
            let col = batch.column(0).as_primitive::<Int32Type>();
            ids.extend(
                (0..col.len())
                    .filter(|i| col.is_valid(*i))
                    .map(|i| col.value(i)),
            );
        }
    }
    ids.sort_unstable();
    Ok(ids)
}
