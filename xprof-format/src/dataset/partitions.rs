//! A warehouse's partitions: the `KEY=VALUE` folder levels below every
//! table's folder, and the values they take.

use std::path::{Path, PathBuf};

use super::{table_dir, table_files};
use crate::error::{FormatError, Result};
use crate::schema::Table;

/// A column a warehouse is partitioned by: one folder level
/// `KEY=VALUE` under every table's folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum PartitionKey {
    /// The run (`traces.run`): the run folder's name, or the name given.
    Run,
    /// The host (`traces.host`).
    Host,
    /// The UTC day of the capture, `YYYY-MM-DD`: of `traces.start_unix_ns`
    /// where the input records it, else of the run folder's name when it is
    /// a time stamp (`YYYY_MM_DD_HH_MM_SS`, as JAX and TensorFlow name
    /// runs).
    Date,
}

impl PartitionKey {
    /// Every key.
    pub const ALL: [PartitionKey; 3] = [Self::Run, Self::Host, Self::Date];

    /// The key's folder and column name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Host => "host",
            Self::Date => "date",
        }
    }

    /// The key named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Keys written `run,host` (no key twice).
    pub fn parse_list(list: &str) -> std::result::Result<Vec<Self>, String> {
        let mut keys = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let key = Self::from_name(name)
                .ok_or_else(|| format!("unknown partition key {name:?} (use run, host or date)"))?;
            if keys.contains(&key) {
                return Err(format!("partition key {name:?} given twice"));
            }
            keys.push(key);
        }
        if keys.is_empty() {
            return Err("no partition key (use run, host or date)".into());
        }
        Ok(keys)
    }
}

/// Whether `value` can be a partition folder's value as it is: ASCII
/// letters, digits, `.`, `_` and `-`, not starting with `.`. Other
/// characters would be escaped differently by the engines that read the
/// layout (DataFusion's object store, DuckDB, pyarrow), so they are
/// refused rather than written in a form one of them reads back changed.
pub fn is_partition_value(value: &str) -> bool {
    !value.is_empty()
        && !value.starts_with('.')
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The folder below a table's folder for these keys and values:
/// `run=R/host=H`.
pub fn partition_path(values: &[(PartitionKey, String)]) -> PathBuf {
    values
        .iter()
        .map(|(k, v)| format!("{}={v}", k.name()))
        .collect()
}

/// The keys a dataset is partitioned by (empty for a flat dataset, or a
/// folder without files), read from where its files are. Every file of
/// every table must sit below the same keys in the same order, else the
/// layout is refused, naming a file that does not fit.
pub fn partition_keys(dataset: &Path) -> Result<Vec<PartitionKey>> {
    let mut found: Option<(Vec<PartitionKey>, PathBuf)> = None;
    for t in Table::ALL {
        let dir = table_dir(dataset, t);
        for file in table_files(dataset, t)? {
            let rel = file.strip_prefix(&dir).unwrap_or(&file);
            let mut keys = Vec::new();
            let folders: Vec<_> = rel.iter().collect();
            for folder in &folders[..folders.len().saturating_sub(1)] {
                let folder = folder.to_string_lossy();
                let key = folder
                    .split_once('=')
                    .and_then(|(k, _)| PartitionKey::from_name(k))
                    .ok_or_else(|| FormatError::Layout {
                        path: file.clone(),
                        why: format!("folder {folder:?} is not a partition (run=, host= or date=)"),
                    })?;
                keys.push(key);
            }
            match &found {
                None => found = Some((keys, file)),
                Some((first, first_file)) if *first != keys => {
                    return Err(FormatError::Layout {
                        path: dataset.to_path_buf(),
                        why: format!(
                            "files partitioned differently: {} under [{}], {} under [{}]",
                            first_file.display(),
                            key_names(first),
                            file.display(),
                            key_names(&keys)
                        ),
                    });
                }
                Some(_) => {}
            }
        }
    }
    Ok(found.map(|(k, _)| k).unwrap_or_default())
}

/// `run,host`.
pub fn key_names(keys: &[PartitionKey]) -> String {
    keys.iter().map(|k| k.name()).collect::<Vec<_>>().join(",")
}

/// The day `YYYY-MM-DD` (UTC) of a time in ns since the Unix epoch.
pub fn utc_date(unix_ns: i64) -> String {
    let days = unix_ns.div_euclid(86_400 * 1_000_000_000);
    // Days to a civil date (H. Hinnant's algorithm, proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The day `YYYY-MM-DD` of a run folder named as JAX and TensorFlow name
/// them (`2026_12_02_15_04_05`), or `None`.
pub fn run_name_date(run: &str) -> Option<String> {
    let parts: Vec<&str> = run.split('_').collect();
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if parts.len() == 6
        && digits(parts[0], 4)
        && parts[1..].iter().all(|p| digits(p, 2))
        && (1..=12).contains(&parts[1].parse::<u32>().ok()?)
        && (1..=31).contains(&parts[2].parse::<u32>().ok()?)
    {
        Some(format!("{}-{}-{}", parts[0], parts[1], parts[2]))
    } else {
        None
    }
}
