//! Writes a large synthetic TPU-shaped XSpace for the memory and speed
//! benchmarks (benches/README.md, issue 3 target 3). The input is synthetic:
//! every plane follows the documented TPU names (`Steps`, `XLA Modules`,
//! `XLA Ops`, `Async XLA Ops`, `_counters_`), one plane after another, so
//! the generator's own memory stays near one plane's size.
//!
//! cargo run --release --example make_synthetic -- OUT.xplane.pb SIZE_MIB [STEPS_PER_PLANE]

use std::io::{BufWriter, Write};

use xprof_testdata::write_large_tpu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: make_synthetic OUT.xplane.pb SIZE_MIB [STEPS_PER_PLANE]";
    let out = args.next().ok_or(usage)?;
    let mib: u64 = args.next().ok_or(usage)?.parse()?;
    let steps: usize = match args.next() {
        Some(s) => s.parse()?,
        None => 2000,
    };
    let tmp = format!("{out}.tmp");
    let mut w = BufWriter::new(std::fs::File::create(&tmp)?);
    let written = write_large_tpu(&mut w, mib << 20, steps)?;
    w.flush()?;
    drop(w);
    std::fs::rename(&tmp, &out)?;
    println!(
        "{out}: {:.1} MiB, {steps} steps of 64 ops per TPU plane",
        written as f64 / 1048576.0
    );
    Ok(())
}
