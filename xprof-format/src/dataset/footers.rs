//! What a dataset file's footer says, read without its rows: the schema
//! version and the rows per stat key of `event_args`.

use std::fs::File;
use std::path::Path;

use crate::error::{FormatError, Result};
use crate::schema::{SCHEMA_VERSION, SCHEMA_VERSION_KEY};
use crate::value_rows::{self, ValueRows};

/// The value of `key` in the key-value metadata of the Parquet file at
/// `path` (`None`: not there), reading only the file's footer.
pub fn footer_value(path: &Path, key: &str) -> Result<Option<String>> {
    use parquet::file::reader::FileReader;
    let file = File::open(path).map_err(|source| FormatError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let reader = parquet::file::reader::SerializedFileReader::new(file).map_err(|source| {
        FormatError::Parquet {
            path: path.to_path_buf(),
            source,
        }
    })?;
    Ok(reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == key))
        .and_then(|k| k.value.clone()))
}

/// The rows per `key` in the footer of the `event_args` file at `path`
/// ([`crate::value_rows`]); `None` when it has none (written before them)
/// or they do not read.
pub fn rows_by_key(path: &Path) -> Result<Option<ValueRows>> {
    Ok(footer_value(path, value_rows::METADATA_KEY)?.and_then(|text| ValueRows::decode(&text)))
}

/// Checks that a dataset file was written with this build's schema
/// version (its `xprof_sql.schema_version` key-value metadata), reading
/// only the file's footer.
pub fn check_schema_version(path: &Path) -> Result<()> {
    match footer_value(path, SCHEMA_VERSION_KEY)? {
        Some(v) if v == SCHEMA_VERSION.to_string() => Ok(()),
        other => Err(FormatError::SchemaVersion {
            path: path.to_path_buf(),
            found: other.unwrap_or_else(|| "none (not written by xprof-sql)".into()),
            expected: SCHEMA_VERSION,
        }),
    }
}
