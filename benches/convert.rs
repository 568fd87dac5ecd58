//! Conversion throughput: XSpace bytes to Arrow batches (one core), and to
//! a Parquet dataset. Inputs: the bundled real JAX profile and a synthetic
//! TPU-shaped file generated on demand (not committed).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use xprof_sql::convert::reader::{ConvertOptions, TraceSource};
use xprof_sql::convert::sink::{CountingSink, MemorySink};
use xprof_sql::convert::synthetic::write_large_tpu;
use xprof_sql::convert::xspace::convert;
use xprof_sql::format::Table;

fn source() -> TraceSource {
    TraceSource {
        trace_id: 0,
        path: "bench.xplane.pb".into(),
        run: None,
        host: "bench".into(),
    }
}

fn bench_decode(c: &mut Criterion) {
    let real = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/jax_cpu_mlp.xplane.pb"),
    )
    .unwrap();
    let mut synthetic = Vec::new();
    write_large_tpu(&mut synthetic, 32 << 20, 200).unwrap();
    let mut g = c.benchmark_group("xspace_to_arrow");
    g.sample_size(10);
    for (name, bytes) in [
        ("real_jax_cpu_185KB", &real),
        ("synthetic_tpu_32MiB", &synthetic),
    ] {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut sink = CountingSink::default();
                convert(
                    black_box(bytes),
                    &source(),
                    &ConvertOptions::default(),
                    &mut sink,
                )
                .unwrap();
                black_box(sink.rows)
            })
        });
    }
    g.bench_function("real_jax_cpu_185KB_memory_sink", |b| {
        b.iter(|| {
            let mut sink = MemorySink::default();
            convert(
                black_box(&real),
                &source(),
                &ConvertOptions::default(),
                &mut sink,
            )
            .unwrap();
            black_box(sink.rows(Table::Events))
        })
    });
    g.finish();
}

criterion_group!(benches, bench_decode);
criterion_main!(benches);
