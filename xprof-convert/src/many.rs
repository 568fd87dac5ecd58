//! Converting many files: one trace per file, files in parallel.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use xprof_format::FormatError;
use xprof_format::dataset::{self, PartitionKey, WriteOptions};

use crate::conversion::{ConvertOptions, Progress, Summary, TraceSource};
use crate::discover::{self, ProfileFile};
use crate::error::{ConvertError, Result};
use crate::input;
use crate::registry;
use crate::sink::{MemorySink, ParquetSink, TableSink};

/// Converts one file into `sink` as trace `trace_id`, with the reader of
/// its format.
pub fn convert_file(
    file: &ProfileFile,
    trace_id: i32,
    options: &ConvertOptions,
    sink: &mut dyn TableSink,
) -> Result<Summary> {
    let bytes = input::open(&file.path)?;
    let reader = match options.format {
        Some(name) => registry::reader_named(name).ok_or_else(|| ConvertError::UnknownFormat {
            path: file.path.clone(),
            why: format!("no reader is named {name:?}"),
        })?,
        None => registry::detect(&file.path, &bytes)?,
    };
    let source = TraceSource {
        trace_id,
        path: file.path.clone(),
        run: file.run.clone(),
        host: file.host.clone(),
    };
    let summary = registry::convert(reader, &bytes, &source, options, sink)?;
    if let Some(progress) = &options.progress {
        let total = bytes.len() as u64;
        progress(Progress {
            file: 0,
            bytes_done: total,
            bytes_total: total,
        });
    }
    Ok(summary)
}

/// `options` for the `index`th file of a batch: its progress reports
/// carry that index.
fn for_file(options: &ConvertOptions, index: usize) -> ConvertOptions {
    let mut for_file = options.clone();
    if let Some(progress) = options.progress.clone() {
        for_file.progress = Some(std::sync::Arc::new(move |at: Progress| {
            progress(Progress { file: index, ..at })
        }));
    }
    for_file
}

/// Runs `f` over `items` on up to `threads` threads; results in item order.
/// The first error is returned once the running items finish.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(usize, &T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let threads = threads.clamp(1, items.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<R>>>> =
        Mutex::new((0..items.len()).map(|_| None).collect());
    let failed = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= items.len() || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let r = f(i, &items[i]);
                    if r.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    results.lock().expect("no panic holds the lock")[i] = Some(r);
                }
            });
        }
    });
    let results = results.into_inner().expect("no panic holds the lock");
    let mut out = Vec::with_capacity(items.len());
    for r in results.into_iter().flatten() {
        out.push(r?);
    }
    Ok(out)
}

/// Threads to use: the machine's parallelism.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// One converted trace.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The input.
    pub file: ProfileFile,
    /// Its trace id.
    pub trace_id: i32,
    /// What was converted.
    pub summary: Summary,
    /// Parquet files written (empty for memory conversion).
    pub written: Vec<PathBuf>,
}

/// How [`convert_to_warehouse`] lays out and grows a dataset.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Layout {
    /// Hive-style partition folders, in this order (`run=R/host=H`);
    /// empty for a flat dataset.
    pub partition_by: Vec<PartitionKey>,
    /// Convert a run that is in the dataset already again, replacing its
    /// traces (else that is refused).
    pub replace: bool,
}

impl Layout {
    /// Partitioned by `keys`.
    pub fn partitioned(keys: Vec<PartitionKey>) -> Self {
        Self {
            partition_by: keys,
            replace: false,
        }
    }

    /// With [`Layout::replace`] set to `replace`.
    pub fn replacing(mut self, replace: bool) -> Self {
        self.replace = replace;
        self
    }
}

/// Converts `files` into the Parquet dataset `dir`, one part per file,
/// with trace ids from `first_trace_id` (default 0) and after those
/// already in `dir`. All or nothing: each part appears whole or not at
/// all, and when any file fails the parts of the others are removed (and
/// `dir` too when this call created it), so a dataset never holds half of
/// a batch.
pub fn convert_to_dataset(
    files: &[ProfileFile],
    dir: &Path,
    options: &ConvertOptions,
    write: &WriteOptions,
    threads: usize,
    first_trace_id: Option<i32>,
) -> Result<Vec<Converted>> {
    convert_into(
        files,
        dir,
        options,
        write,
        threads,
        first_trace_id,
        &Layout::default(),
    )
}

/// [`convert_to_dataset`] with a [`Layout`]: a warehouse partitioned
/// hive-style, to which runs are added.
///
/// Refused before anything is converted: a `dir` holding files laid out
/// by other keys; an input without a run (or whose run or host is not a
/// plain folder name, [`dataset::is_partition_value`]) when partitioning
/// by it; a run and host that `dir` (or the batch) holds already, unless
/// [`Layout::replace`], in which case the old traces' files are removed
/// once the new ones are written.
pub fn convert_to_warehouse(
    files: &[ProfileFile],
    dir: &Path,
    options: &ConvertOptions,
    write: &WriteOptions,
    threads: usize,
    layout: &Layout,
) -> Result<Vec<Converted>> {
    convert_into(files, dir, options, write, threads, None, layout)
}

fn layout_error(path: &Path, why: String) -> crate::ConvertError {
    FormatError::Layout {
        path: path.to_path_buf(),
        why,
    }
    .into()
}

/// The traces of `dir` that `files` convert again, refusing them unless
/// `layout.replace`; and the checks of `layout` against `dir` and `files`.
fn check_layout(files: &[ProfileFile], dir: &Path, layout: &Layout) -> Result<Vec<i32>> {
    let keys = &layout.partition_by;
    if dir.is_dir() {
        let existing = dataset::partition_keys(dir)?;
        let has_files = !existing.is_empty() || !dataset::trace_ids(dir)?.is_empty();
        if has_files && existing != *keys {
            let how = |k: &[PartitionKey]| {
                if k.is_empty() {
                    "a flat dataset (no --partition-by)".to_string()
                } else {
                    format!("partitioned by {}", dataset::key_names(k))
                }
            };
            return Err(layout_error(
                dir,
                format!(
                    "is {}, not {}: convert into it the way it was written",
                    how(&existing),
                    how(keys)
                ),
            ));
        }
    }
    for f in files {
        for key in keys {
            let value = match key {
                PartitionKey::Run => f.run.as_deref(),
                PartitionKey::Host => Some(f.host.as_str()),
                _ => continue,
            };
            match value {
                None => {
                    return Err(layout_error(
                        &f.path,
                        "has no run (it is not in a run folder); name one with --run-name, or partition by host or date".into(),
                    ));
                }
                Some(v) if !dataset::is_partition_value(v) => {
                    return Err(layout_error(
                        &f.path,
                        format!(
                            "its {} {v:?} cannot be a partition folder (only letters, digits, '.', '_' and '-'): rename it (--run-name for runs) or partition without {}",
                            key.name(),
                            key.name()
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    // A run is one trace per host: the same run and host twice is the
    // same profile converted twice.
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for f in files {
        if let Some(run) = f.run.as_deref() {
            if seen.contains(&(run, f.host.as_str())) {
                return Err(layout_error(
                    &f.path,
                    format!("run {run} host {} is given twice in this batch", f.host),
                ));
            }
            seen.push((run, f.host.as_str()));
        }
    }
    let mut replaced = Vec::new();
    if dir.is_dir() {
        for t in dataset::traces(dir)? {
            let Some(run) = t.run.as_deref() else {
                continue;
            };
            if seen.contains(&(run, t.host.as_str())) {
                if !layout.replace {
                    return Err(layout_error(
                        dir,
                        format!(
                            "holds run {run} host {} already (trace {}); converting it again would hold it twice: pass --replace to replace it",
                            t.host, t.trace_id
                        ),
                    ));
                }
                replaced.push(t.trace_id);
            }
        }
    }
    Ok(replaced)
}

/// The partition folder of a converted file.
fn partition_of(file: &ProfileFile, summary: &Summary, keys: &[PartitionKey]) -> Result<PathBuf> {
    let mut values = Vec::new();
    for key in keys {
        let value = match key {
            PartitionKey::Run => file.run.clone().unwrap_or_default(),
            PartitionKey::Host => file.host.clone(),
            PartitionKey::Date => summary
                .start_unix_ns
                .map(dataset::utc_date)
                .or_else(|| file.run.as_deref().and_then(dataset::run_name_date))
                .ok_or_else(|| {
                    layout_error(
                        &file.path,
                        "has no capture time (no profile start time in the file, and its run folder's name is not a time stamp YYYY_MM_DD_HH_MM_SS): partition by run or host instead".into(),
                    )
                })?,
            _ => continue,
        };
        values.push((*key, value));
    }
    Ok(dataset::partition_path(&values))
}

fn convert_into(
    files: &[ProfileFile],
    dir: &Path,
    options: &ConvertOptions,
    write: &WriteOptions,
    threads: usize,
    first_trace_id: Option<i32>,
    layout: &Layout,
) -> Result<Vec<Converted>> {
    let replaced = check_layout(files, dir, layout)?;
    let created_dir = !dir.exists();
    let after_existing = dataset::trace_ids(dir)?.last().map_or(0, |m| m + 1);
    let first = first_trace_id.unwrap_or(0).max(after_existing);
    let finished: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let converted = parallel_map(files, threads, |i, file| {
        let trace_id = first + i as i32;
        let mut sink = ParquetSink::create(
            dir,
            &dataset::part_name(trace_id, &file.host),
            write.clone(),
        )?;
        let summary = convert_file(file, trace_id, &for_file(options, i), &mut sink)?;
        let subdir = partition_of(file, &summary, &layout.partition_by)?;
        let written = sink.finish_in(&subdir)?;
        finished
            .lock()
            .expect("no panic holds the lock")
            .extend(written.iter().cloned());
        Ok(Converted {
            file: file.clone(),
            trace_id,
            summary,
            written,
        })
    });
    if converted.is_err() {
        let finished = finished.into_inner().expect("no panic holds the lock");
        remove_parts(dir, &finished, created_dir);
    } else if !replaced.is_empty() {
        // The new traces are in place: the ones they replace go.
        dataset::remove_traces(dir, &replaced)?;
    }
    converted
}

/// Undoes a failed batch: removes the part files it finished, then the
/// table folders left empty, and `dir` itself when the batch created it.
/// Best effort: the conversion's own error is what the caller reports.
fn remove_parts(dir: &Path, finished: &[PathBuf], created_dir: bool) {
    for file in finished {
        let _ = std::fs::remove_file(file);
    }
    if created_dir {
        let _ = std::fs::remove_dir_all(dir);
        return;
    }
    let mut folders: std::collections::BTreeSet<&Path> = std::collections::BTreeSet::new();
    for file in finished {
        // The partition folders and the table folder, up to `dir`.
        let mut folder = file.parent();
        while let Some(f) = folder.filter(|f| *f != dir && f.starts_with(dir)) {
            folders.insert(f);
            folder = f.parent();
        }
    }
    // Deepest first; fails, as it should, where earlier conversions left
    // files.
    for folder in folders.into_iter().rev() {
        let _ = std::fs::remove_dir(folder);
    }
}

/// Converts `files` into memory, trace ids from `first_trace_id`.
pub fn convert_to_memory(
    files: &[ProfileFile],
    first_trace_id: i32,
    options: &ConvertOptions,
    threads: usize,
) -> Result<(MemorySink, Vec<Converted>)> {
    let parts = parallel_map(files, threads, |i, file| {
        let trace_id = first_trace_id + i as i32;
        let mut sink = MemorySink::default();
        let summary = convert_file(file, trace_id, &for_file(options, i), &mut sink)?;
        Ok((
            sink,
            Converted {
                file: file.clone(),
                trace_id,
                summary,
                written: Vec::new(),
            },
        ))
    })?;
    let mut all = MemorySink::default();
    let mut converted = Vec::new();
    for (sink, c) in parts {
        all.extend(sink);
        converted.push(c);
    }
    Ok((all, converted))
}

/// What converting inputs into a dataset is asked besides the inputs and
/// the dataset folder: `xprof-sql convert`'s options and the arguments of
/// the Python package's `convert`, read by [`convert_inputs`].
#[derive(Debug, Clone, Default)]
pub struct ConvertSettings {
    /// The run to convert in a log folder (`None`: the latest).
    pub run: Option<String>,
    /// The run name recorded for every input (`traces.run`, the `run=`
    /// folder) instead of its run folder's name.
    pub run_name: Option<String>,
    /// How the dataset is laid out and grown.
    pub layout: Layout,
    /// The Parquet writer's options.
    pub write: WriteOptions,
    /// Files converted at once (`None`: [`default_threads`]).
    pub threads: Option<usize>,
    /// The name of the reader of every file (`--input-format`); `None`:
    /// detected per file.
    pub format: Option<&'static str>,
}

/// The progress callback of a conversion.
pub type ProgressCallback = std::sync::Arc<dyn Fn(Progress) + Send + Sync>;

/// Converts `inputs` (profile files, run folders, log folders) into the
/// dataset `dir` as `settings` say: finds their files
/// ([`discover::discover`], in `settings.run` of a log folder), names every
/// file's run `settings.run_name` when given, and converts them with
/// [`convert_to_warehouse`]. `progress` is handed the files found before
/// any is converted and returns the conversion's progress callback (e.g.
/// bars labelled by the files), or `None`.
pub fn convert_inputs<P: AsRef<Path>>(
    inputs: &[P],
    dir: &Path,
    settings: &ConvertSettings,
    progress: impl FnOnce(&[ProfileFile]) -> Option<ProgressCallback>,
) -> Result<Vec<Converted>> {
    let mut files = Vec::new();
    for i in inputs {
        files.extend(discover::discover(i.as_ref(), settings.run.as_deref())?);
    }
    discover::retain_one_file_per_trace(&mut files, |f| &f.path);
    if let Some(name) = &settings.run_name {
        for f in &mut files {
            f.run = Some(name.clone());
        }
    }
    let options = ConvertOptions {
        progress: progress(&files),
        format: settings.format,
        ..ConvertOptions::default()
    };
    let threads = settings.threads.unwrap_or_else(default_threads);
    convert_to_warehouse(
        &files,
        dir,
        &options,
        &settings.write,
        threads,
        &settings.layout,
    )
}
