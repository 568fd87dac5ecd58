//! The Parquet writer of one table file: arrow-rs' column writers for
//! most columns, [`DictColumnWriter`] for dictionary strings.
//!
//! It does what `ArrowWriter` does with the same properties (row groups
//! of at most `max_row_group_row_count` rows, the Arrow schema in the
//! footer, page indexes), except that `Dictionary(Int32, Utf8)` columns
//! keep the batches' dictionary indices instead of interning every row's
//! string again (see [`crate::dict_column`]).

use std::io::Write;

use arrow::array::{Array, DictionaryArray};
use arrow::datatypes::{DataType, Int32Type, SchemaRef};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves};
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{KeyValue, ParquetMetaData};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

use crate::dict_column::{self, DictColumnWriter};
use crate::value_rows::{self, ValueRows};

/// One column's writer in the row group being written.
enum ColumnWriter {
    Arrow(Box<ArrowColumnWriter>),
    Dictionary(Box<DictColumnWriter>),
}

/// Writes record batches of one schema to a Parquet file.
pub struct TableFileWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// Per column: written by [`DictColumnWriter`].
    dictionary_columns: Vec<bool>,
    max_row_group_rows: usize,
    /// The row group being written and its rows so far.
    row_group: Option<(Vec<ColumnWriter>, usize)>,
    row_groups: usize,
    /// A write failed part-way: the open row group's columns may hold
    /// different rows, so nothing more is written.
    failed: bool,
    /// The dictionary column whose rows per value go to the footer
    /// ([`value_rows::METADATA_KEY`]), and its counts so far.
    value_rows: Option<(usize, ValueRows)>,
}

impl<W: Write + Send> std::fmt::Debug for TableFileWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableFileWriter")
            .field("row_groups", &self.row_groups)
            .finish_non_exhaustive()
    }
}

impl<W: Write + Send> TableFileWriter<W> {
    /// A writer of `schema`'s batches to `sink` under `props`.
    pub fn try_new(sink: W, schema: SchemaRef, props: WriterProperties) -> Result<Self> {
        let max_row_group_rows = props.max_row_group_row_count().unwrap_or(usize::MAX).max(1);
        let (file, factory) =
            ArrowWriter::try_new(sink, schema.clone(), Some(props))?.into_serialized_writer()?;
        let descriptors = file.schema_descr();
        if descriptors.num_columns() != schema.fields().len() {
            return Err(ParquetError::General(
                "nested columns are not supported by the table writer".into(),
            ));
        }
        let props = file.properties();
        let dictionary_columns = schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, field)| {
                let path = descriptors.column(i).path().clone();
                matches!(field.data_type(), DataType::Dictionary(k, v)
                    if **k == DataType::Int32 && **v == DataType::Utf8)
                    && props.dictionary_enabled(&path)
                    && dict_column::supports(props.compression(&path))
            })
            .collect();
        Ok(Self {
            file,
            factory,
            schema,
            dictionary_columns,
            max_row_group_rows,
            row_group: None,
            row_groups: 0,
            failed: false,
            value_rows: None,
        })
    }

    /// Counts the rows of each value of `column`, a
    /// `Dictionary(Int32, Utf8)` column, and writes the counts to the
    /// footer under [`value_rows::METADATA_KEY`] ([`crate::value_rows`]).
    pub fn with_rows_by_value(mut self, column: &str) -> Result<Self> {
        let index = self
            .schema
            .index_of(column)
            .map_err(|_| ParquetError::General(format!("no column {column} to count rows by")))?;
        if !matches!(self.schema.field(index).data_type(), DataType::Dictionary(k, v)
            if **k == DataType::Int32 && **v == DataType::Utf8)
        {
            return Err(ParquetError::General(format!(
                "column {column} is not a dictionary of strings"
            )));
        }
        self.value_rows = Some((index, ValueRows::new()));
        Ok(self)
    }

    fn start_row_group(&mut self) -> Result<(Vec<ColumnWriter>, usize)> {
        let arrow_writers = self.factory.create_column_writers(self.row_groups)?;
        let descriptors = self.file.schema_descr();
        let props = self.file.properties();
        let writers = arrow_writers
            .into_iter()
            .enumerate()
            .map(|(i, writer)| {
                Ok(if self.dictionary_columns[i] {
                    ColumnWriter::Dictionary(Box::new(DictColumnWriter::new(
                        descriptors.column(i),
                        props,
                    )?))
                } else {
                    ColumnWriter::Arrow(Box::new(writer))
                })
            })
            .collect::<Result<_>>()?;
        Ok((writers, 0))
    }

    /// Appends a batch, closing row groups as they fill. After an error
    /// the writer is spent: later writes and closing fail too, rather
    /// than finish a file without the rows of the failed row group.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.check_not_failed()?;
        let written = self.write_batch(batch);
        self.failed = written.is_err();
        written?;
        if let Some((index, counts)) = &mut self.value_rows {
            // `write_batch` checked the schema: the column is a dictionary.
            if let Some(column) = batch
                .column(*index)
                .as_any()
                .downcast_ref::<DictionaryArray<Int32Type>>()
            {
                counts.count(column);
            }
        }
        Ok(())
    }

    /// Puts the counts of [`TableFileWriter::with_rows_by_value`] in the
    /// footer's key-value metadata.
    fn append_value_rows(&mut self) {
        if let Some((_, counts)) = self.value_rows.take() {
            self.file.append_key_value_metadata(KeyValue::new(
                value_rows::METADATA_KEY.to_string(),
                counts.encode(),
            ));
        }
    }

    fn check_not_failed(&self) -> Result<()> {
        if self.failed {
            return Err(ParquetError::General(
                "an earlier write to this file failed".into(),
            ));
        }
        Ok(())
    }

    fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.schema().fields() != self.schema.fields() {
            return Err(ParquetError::General(
                "batch schema differs from the file's".into(),
            ));
        }
        let mut offset = 0;
        while offset < batch.num_rows() {
            let (mut writers, rows) = match self.row_group.take() {
                Some(group) => group,
                None => self.start_row_group()?,
            };
            let take = (self.max_row_group_rows - rows).min(batch.num_rows() - offset);
            let slice = batch.slice(offset, take);
            for ((writer, field), column) in writers
                .iter_mut()
                .zip(self.schema.fields())
                .zip(slice.columns())
            {
                match writer {
                    ColumnWriter::Arrow(w) => {
                        for leaf in compute_leaves(field, column)? {
                            w.write(&leaf)?;
                        }
                    }
                    ColumnWriter::Dictionary(w) => {
                        let array = column
                            .as_any()
                            .downcast_ref::<DictionaryArray<Int32Type>>()
                            .ok_or_else(|| {
                                ParquetError::General(format!(
                                    "column {} is not a dictionary",
                                    field.name()
                                ))
                            })?;
                        w.write(array)?;
                    }
                }
            }
            offset += take;
            let rows = rows + take;
            if rows == self.max_row_group_rows {
                self.flush_row_group(writers)?;
            } else {
                self.row_group = Some((writers, rows));
            }
        }
        Ok(())
    }

    fn flush_row_group(&mut self, writers: Vec<ColumnWriter>) -> Result<()> {
        let mut row_group = self.file.next_row_group()?;
        for writer in writers {
            match writer {
                ColumnWriter::Arrow(w) => w.close()?.append_to_row_group(&mut row_group)?,
                ColumnWriter::Dictionary(w) => {
                    let (bytes, close) = w.close()?;
                    row_group.append_column(&bytes, close)?;
                }
            }
        }
        row_group.close()?;
        self.row_groups += 1;
        Ok(())
    }

    fn finish_row_group(&mut self) -> Result<()> {
        match self.row_group.take() {
            Some((writers, rows)) if rows > 0 => self.flush_row_group(writers),
            _ => Ok(()),
        }
    }

    /// Writes the last row group and the footer.
    pub fn close(mut self) -> Result<ParquetMetaData> {
        self.check_not_failed()?;
        self.finish_row_group()?;
        self.append_value_rows();
        self.file.close()
    }

    /// Writes the last row group and the footer, and returns the sink.
    pub fn into_inner(mut self) -> Result<W> {
        self.check_not_failed()?;
        self.finish_row_group()?;
        self.append_value_rows();
        self.file.into_inner()
    }
}
