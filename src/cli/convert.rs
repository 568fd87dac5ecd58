//! `xprof-sql convert`: profiles to a Parquet dataset or warehouse, with
//! progress bars and a summary on standard error.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use crate::convert::many::{self, ConvertSettings, Layout};
use crate::format::dataset::{PartitionKey, WriteOptions};

use crate::cli::progress::ConvertProgress;
use crate::cli::{AnyResult, peak_memory_note};

/// `convert`'s arguments.
#[derive(clap::Args)]
pub struct ConvertArgs {
    /// Profile files, run folders or log folders.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Dataset folder; converting into an existing one adds traces.
    #[arg(short = 'o', long = "output", required = true)]
    output: PathBuf,
    /// Run to convert in a log folder (default: the latest).
    #[arg(long)]
    run: Option<String>,
    /// A warehouse: hive-style folders `TABLE/run=R/host=H/` by these
    /// keys (any of run, host, date, comma-separated, in folder order).
    #[arg(long, value_name = "KEYS", value_parser = parse_partition_keys)]
    partition_by: Option<PartitionKeys>,
    /// Convert a run the dataset holds already again, replacing it
    /// (else refused: no run is held twice).
    #[arg(long)]
    replace: bool,
    /// The run name to record (`traces.run`, the `run=` folder) for
    /// every input, instead of its run folder's name.
    #[arg(long, value_name = "NAME")]
    run_name: Option<String>,
    /// ZSTD level of the Parquet files.
    #[arg(long, default_value_t = 1)]
    zstd_level: i32,
    /// Files converted at once (default: the number of cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress on standard error.
    #[arg(short, long)]
    quiet: bool,
    /// Read every input as this format instead of detecting it (a reader
    /// name: xspace, chrome_trace, mosaic_gpu, proton_tree, llo_dump).
    #[arg(long, value_name = "FORMAT", value_parser = crate::cli::parse_input_format)]
    input_format: Option<crate::cli::InputFormat>,
}

/// `--partition-by run,host`: one value holding the keys in order.
#[derive(Clone)]
struct PartitionKeys(Vec<PartitionKey>);

fn parse_partition_keys(s: &str) -> Result<PartitionKeys, String> {
    PartitionKey::parse_list(s).map(PartitionKeys)
}

/// `convert`: the inputs into the dataset, with bars at a terminal and,
/// unless `--quiet`, one line per trace written and the throughput.
pub fn convert(args: ConvertArgs) -> AnyResult<()> {
    let ConvertArgs {
        inputs,
        output,
        run,
        partition_by,
        replace,
        run_name,
        zstd_level,
        threads,
        quiet,
        input_format,
    } = args;
    let keys = partition_by.map(|k| k.0).unwrap_or_default();
    let settings = ConvertSettings {
        run,
        run_name,
        layout: Layout::partitioned(keys).replacing(replace),
        write: WriteOptions {
            zstd_level,
            ..Default::default()
        },
        threads,
        format: input_format.map(|r| r.name()),
    };
    // Files of a rank folder that are not traces are skipped: each named.
    for input in &inputs {
        for (file, why) in crate::convert::discover::skipped_files(input) {
            eprintln!("warning: {}: skipped: {why}", file.display());
        }
    }
    // Set once the files are found, before any is converted.
    let mut start = Instant::now();
    let mut total = 0u64;
    let mut bars: Option<std::sync::Arc<ConvertProgress>> = None;
    let converted = many::convert_inputs(&inputs, &output, &settings, |files| {
        start = Instant::now();
        total = files
            .iter()
            .filter_map(|f| std::fs::metadata(&f.path).ok())
            .map(|m| m.len())
            .sum();
        bars = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let names = files
                .iter()
                .map(|f| {
                    let name = f.path.file_name().unwrap_or(f.path.as_os_str());
                    name.to_string_lossy().into_owned()
                })
                .collect();
            let inflated = files
                .iter()
                .flat_map(|f| crate::convert::discover::trace_files(&f.path))
                .map(|path| crate::convert::input::inflated_len(&path).unwrap_or(0))
                .sum();
            ConvertProgress::new(names, Some(inflated))
        });
        bars.as_ref().map(ConvertProgress::callback)
    });
    if let Some(bars) = &bars {
        bars.clear();
    }
    let converted = converted?;
    if !quiet {
        for c in &converted {
            eprintln!(
                "trace {} {} ({}): {} planes, {} lines, {} events, {} event stats",
                c.trace_id,
                c.file.host,
                c.file.path.display(),
                c.summary.planes,
                c.summary.lines,
                c.summary.events,
                c.summary.event_stats
            );
            for w in &c.summary.warnings {
                eprintln!("  warning: {w}");
            }
        }
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "wrote {} ({:.1} MiB in {:.2} s, {:.0} MiB/s{})",
            output.display(),
            total as f64 / 1048576.0,
            secs,
            total as f64 / 1048576.0 / secs.max(1e-9),
            peak_memory_note()
        );
    }
    Ok(())
}
