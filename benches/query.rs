//! Target 4 of issue 3: the three benchmark queries (`benches/queries/*.sql`)
//! on a Parquet dataset of more than 10 M events, in process. DuckDB runs
//! the same files with `benches/duckdb_queries.py`.
//!
//! `$XPROF_SQL_BENCH_QUERIES` names another folder of `.sql` files (the
//! second set, `benches/queries_kineto`, is written against a converted
//! Kineto trace).
//!
//! The dataset is `$XPROF_SQL_BENCH_DATASET` when set, else a synthetic
//! TPU-shaped profile of 512 MiB (13.6 M events, 10 TPU planes; input
//! synthetic, documented names) generated and converted once into the
//! system temp folder (not committed).

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use xprof_sql::convert::discover::{ProfileFile, host_of};
use xprof_sql::convert::many::convert_to_dataset;
use xprof_sql::convert::reader::ConvertOptions;
use xprof_sql::format::dataset::WriteOptions;
use xprof_sql::query::{OpenOptions, ProfileSession};
use xprof_testdata::write_large_tpu;

fn dataset() -> PathBuf {
    if let Ok(p) = std::env::var("XPROF_SQL_BENCH_DATASET") {
        return p.into();
    }
    let root = std::env::temp_dir().join("xprof-sql-bench");
    let out = root.join("tpu_512mib_v1");
    if !out.join("events").exists() {
        std::fs::create_dir_all(&root).unwrap();
        let input = root.join("tpu_512mib.xplane.pb");
        let mut w = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
        write_large_tpu(&mut w, 512 << 20, 20_000).unwrap();
        drop(w);
        let partial = root.join("tpu_512mib_v1.partial");
        let _ = std::fs::remove_dir_all(&partial);
        let files = [ProfileFile {
            host: host_of(&input),
            path: input.clone(),
            run: None,
        }];
        convert_to_dataset(
            &files,
            &partial,
            &ConvertOptions::default(),
            &WriteOptions::default(),
            2,
            None,
        )
        .unwrap();
        std::fs::rename(&partial, &out).unwrap();
        std::fs::remove_file(&input).unwrap();
    }
    out
}

fn bench_queries(c: &mut Criterion) {
    let ds = dataset();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let session = rt.block_on(async {
        let mut s = ProfileSession::new();
        s.open(&[&ds], &OpenOptions::default()).await.unwrap();
        s
    });
    let dir = std::env::var("XPROF_SQL_BENCH_QUERIES").map_or_else(
        |_| Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/queries"),
        PathBuf::from,
    );
    let mut queries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    queries.sort();
    let mut g = c.benchmark_group("queries");
    g.sample_size(10);
    for q in queries {
        let sql = std::fs::read_to_string(&q).unwrap();
        let name = q.file_stem().unwrap().to_string_lossy().into_owned();
        g.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let batches = session.sql(&sql).await.unwrap().collect().await.unwrap();
                    batches.iter().map(|b| b.num_rows()).sum::<usize>()
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_queries);
criterion_main!(benches);
