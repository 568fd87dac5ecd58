//! Conversion throughput on one core: XSpace bytes to Arrow batches, and
//! Arrow batches to Parquet bytes with the writer properties `convert`
//! uses, per table (and per column with `XPROF_SQL_BENCH_COLUMNS=1`).
//! Inputs: the bundled real JAX profile and a synthetic TPU-shaped file
//! generated on demand (not committed).
//!
//! Compare against the committed baseline with `benches/baseline.sh
//! compare` (benches/README.md).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use xprof_sql::convert::reader::{ConvertOptions, TraceSource};
use xprof_sql::convert::sink::{CountingSink, MemorySink};
use xprof_sql::convert::xspace::convert;
use xprof_sql::format::Table;
use xprof_sql::format::dataset::{WriteOptions, writer_properties};
use xprof_sql::format::table_file::TableFileWriter;
use xprof_testdata::write_large_tpu;

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

/// Parquet bytes of `batches` (all of one table), written with the
/// properties `convert` uses for `table`: through the dataset's writer
/// (`TableFileWriter`, dictionary columns keep their indices) or, to
/// compare, through arrow-rs' `ArrowWriter`, which interns every row's
/// string again.
fn encode(table: Table, batches: &[arrow::record_batch::RecordBatch], arrow_writer: bool) -> usize {
    let props = writer_properties(table, &WriteOptions::default());
    let schema = batches[0].schema();
    if arrow_writer {
        let mut out = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.close().unwrap();
        return out.len();
    }
    let mut w = TableFileWriter::try_new(Vec::new(), schema, props).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.into_inner().unwrap().len()
}

/// Target 3 of issue 12: Parquet encoding of `events` and `event_args`,
/// and with `XPROF_SQL_BENCH_COLUMNS=1` of each of their columns alone
/// (where the dictionary columns' per-value hashing shows). The
/// `…/arrow_writer` benches are the same input through arrow-rs' writer.
fn bench_encode(c: &mut Criterion) {
    let mut synthetic = Vec::new();
    write_large_tpu(&mut synthetic, 32 << 20, 200).unwrap();
    let mut sink = MemorySink::default();
    convert(&synthetic, &source(), &ConvertOptions::default(), &mut sink).unwrap();
    let mut g = c.benchmark_group("arrow_to_parquet_synthetic_tpu_32MiB");
    g.sample_size(10);
    for table in [Table::Events, Table::EventArgs] {
        let batches = &sink.tables[&table];
        g.throughput(Throughput::Elements(sink.rows(table) as u64));
        g.bench_function(table.name(), |b| {
            b.iter(|| encode(table, black_box(batches), false))
        });
        g.bench_function(format!("{}/arrow_writer", table.name()), |b| {
            b.iter(|| encode(table, black_box(batches), true))
        });
    }
    if std::env::var_os("XPROF_SQL_BENCH_COLUMNS").is_some() {
        for table in [Table::Events, Table::EventArgs] {
            let batches = &sink.tables[&table];
            let schema = batches[0].schema();
            for (i, field) in schema.fields().iter().enumerate() {
                let one: Vec<_> = batches.iter().map(|b| b.project(&[i]).unwrap()).collect();
                let name = format!("{}.{}", table.name(), field.name());
                g.bench_function(&name, |b| b.iter(|| encode(table, black_box(&one), false)));
                if matches!(
                    field.data_type(),
                    arrow::datatypes::DataType::Dictionary(..)
                ) {
                    g.bench_function(format!("{name}/arrow_writer"), |b| {
                        b.iter(|| encode(table, black_box(&one), true))
                    });
                }
            }
        }
    }
    g.finish();
}

criterion_group!(benches, bench_decode, bench_encode);
criterion_main!(benches);
