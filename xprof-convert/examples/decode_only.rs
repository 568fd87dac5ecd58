//! Decode one profile into Arrow batches that are counted and dropped,
//! `RUNS` times (default 5), printing each run's time and the median: the
//! decode-only figure of benches/README.md (issue 12, target 2). It needs
//! only this crate, so a change to the decoder rebuilds in seconds, not
//! the minutes DataFusion's crates take.
//!
//! cargo run --release -p xprof-convert --example decode_only -- FILE [BATCH_ROWS]

use std::time::Instant;

use xprof_convert::input;
use xprof_convert::reader::{ConvertOptions, TraceSource};
use xprof_convert::registry;
use xprof_convert::sink::CountingSink;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: decode_only FILE [BATCH_ROWS]")?;
    let mut opts = ConvertOptions::default();
    if let Some(n) = args.next() {
        opts.batch_rows = n.parse()?;
    }
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let src = TraceSource {
        trace_id: 0,
        path: path.clone().into(),
        run: None,
        host: "h".into(),
    };
    let mut times = Vec::new();
    for _ in 0..runs {
        // Opened anew each run: the decoder releases the pages it is done with.
        let bytes = input::open(path.as_ref())?;
        let mib = bytes.len() as f64 / 1048576.0;
        let mut sink = CountingSink::default();
        let t = Instant::now();
        let r = registry::detect(&src.path, &bytes)?;
        registry::convert(r, &bytes, &src, &opts, &mut sink)?;
        let s = t.elapsed().as_secs_f64();
        println!("{s:.3} s  {:.0} MiB/s  {} rows", mib / s, sink.rows);
        times.push(s);
    }
    times.sort_by(f64::total_cmp);
    println!("median {:.3} s", times[times.len() / 2]);
    Ok(())
}
