//! Where conversion time goes, phase by phase, on one file:
//! decode only (rows counted, batches dropped), decode into memory, and
//! decode + Parquet. Used for the profiling notes in benches/README.md.
//!
//! cargo run --release --example convert_phases -- FILE.xplane.pb
//! (`PHASE=decode` for the decode alone; `xprof-convert`'s `decode_only`
//! example times that phase with other batch sizes too)

use std::time::Instant;

use xprof_sql::convert::input;
use xprof_sql::convert::reader::{ConvertOptions, TraceSource};
use xprof_sql::convert::sink::{CountingSink, MemorySink, ParquetSink, TableSink};
use xprof_sql::convert::xspace::convert;
use xprof_sql::format::Table;
use xprof_sql::format::dataset::WriteOptions;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: convert_phases FILE")?;
    let bytes = input::open(path.as_ref())?;
    let mib = bytes.len() as f64 / 1048576.0;
    let src = TraceSource {
        trace_id: 0,
        path: path.clone().into(),
        run: None,
        host: "h".into(),
    };
    let opts = ConvertOptions::default();
    if std::env::var("PHASE").as_deref() == Ok("decode") {
        let mut s = CountingSink::default();
        let t = Instant::now();
        let reader = xprof_sql::convert::registry::detect(&src.path, &bytes)?;
        xprof_sql::convert::registry::convert(reader, &bytes, &src, &opts, &mut s)?;
        println!(
            "decode only (pages released): {:.3} s, {} rows",
            t.elapsed().as_secs_f64(),
            s.rows
        );
        return Ok(());
    }
    for _ in 0..2 {
        let t = Instant::now();
        let mut s = CountingSink::default();
        convert(&bytes, &src, &opts, &mut s)?;
        let d = t.elapsed().as_secs_f64();
        println!(
            "decode+normalize to Arrow: {d:.3} s  {:.0} MiB/s  ({} rows)",
            mib / d,
            s.rows
        );
    }
    let t = Instant::now();
    let mut m = MemorySink::default();
    convert(&bytes, &src, &opts, &mut m)?;
    println!("to memory: {:.3} s", t.elapsed().as_secs_f64());
    for t_ in [Table::Events, Table::EventArgs] {
        let batches = &m.tables[&t_];
        let dir = tempfile::tempdir()?;
        let t = Instant::now();
        let mut w = ParquetSink::create(dir.path(), "p", WriteOptions::default())?;
        for b in batches {
            w.write(t_, b.clone())?;
        }
        w.finish()?;
        println!(
            "parquet {}: {:.3} s ({} rows)",
            t_.name(),
            t.elapsed().as_secs_f64(),
            m.rows(t_)
        );
    }
    Ok(())
}
