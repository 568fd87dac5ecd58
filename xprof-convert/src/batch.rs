//! Converting many files: one trace per file, files in parallel.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use xprof_format::dataset::{self, WriteOptions};

use crate::error::Result;
use crate::input::{self, ProfileFile};
use crate::reader::{self, ConvertOptions, Progress, Summary, TraceSource};
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
    let reader = reader::detect(&file.path, &bytes)?;
    let source = TraceSource {
        trace_id,
        path: file.path.clone(),
        run: file.run.clone(),
        host: file.host.clone(),
    };
    let summary = reader::convert(reader, &bytes, &source, options, sink)?;
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
        let written = sink.finish()?;
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
    let folders: std::collections::BTreeSet<&Path> =
        finished.iter().filter_map(|f| f.parent()).collect();
    for folder in folders {
        // Fails, as it should, when earlier conversions left files there.
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
