//! The SQL functions registered on every profile session, checked against
//! answers computed here independently.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use common::*;
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use xprof_sql::format::Table;
use xprof_sql::query::{OpenOptions, ProfileSession};

/// Union length of intervals, the slow obvious way: mark every unit.
fn union_len(spans: &[(i64, i64)]) -> i64 {
    let mut points: Vec<i64> = spans.iter().flat_map(|(s, e)| *s..*e).collect();
    points.sort_unstable();
    points.dedup();
    points.len() as i64
}

#[tokio::test]
async fn busy_ps_is_the_length_of_the_union_per_group() {
    // Groups of random intervals over several partitions, so partial
    // states are merged; NULL bounds and empty intervals add nothing.
    let mut rng = xprof_testdata::Rng::new(7);
    let mut groups = Vec::new();
    let mut starts = Vec::new();
    let mut ends = Vec::new();
    let mut expected: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for i in 0..4000 {
        let g = rng.range(0, 5);
        let s = rng.range(0, 2000);
        let e = s + rng.range(-5, 60);
        let null = i % 97 == 0;
        groups.push(g);
        starts.push((!null).then_some(s));
        ends.push(Some(e));
        let list = expected.entry(g).or_default();
        if !null && e > s {
            list.push((s, e));
        }
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("g", DataType::Int64, false),
        Field::new("s", DataType::Int64, true),
        Field::new("e", DataType::Int64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(groups)),
            Arc::new(Int64Array::from(starts)),
            Arc::new(Int64Array::from(ends)),
        ],
    )
    .unwrap();
    let parts: Vec<Vec<RecordBatch>> = (0..4).map(|p| vec![batch.slice(p * 1000, 1000)]).collect();
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
    xprof_sql::query::functions::register_all(&ctx);
    ctx.register_table("t", Arc::new(MemTable::try_new(schema, parts).unwrap()))
        .unwrap();
    let out = ctx
        .sql("SELECT g, busy_ps(s, e) AS busy FROM t GROUP BY g ORDER BY g")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let out = arrow::compute::concat_batches(&out[0].schema(), &out).unwrap();
    let got: Vec<(i64, i64)> = i64s(&out, "g")
        .into_iter()
        .zip(i64s(&out, "busy"))
        .map(|(g, b)| (g.unwrap(), b.unwrap()))
        .collect();
    let want: Vec<(i64, i64)> = expected.iter().map(|(g, v)| (*g, union_len(v))).collect();
    assert_eq!(got, want);
    // A group with no interval is NULL.
    let none = ctx
        .sql("SELECT busy_ps(s, e) AS busy FROM t WHERE e < s")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(i64s(&none[0], "busy"), [None]);
}

#[tokio::test]
async fn busy_ps_per_track_on_a_real_profile() {
    let path = cpu_fixture(REAL_CPU[2]);
    let bytes = std::fs::read(&path).unwrap();
    let (sink, _) = convert_bytes(&bytes, &Default::default());
    let ev = table(&sink, Table::Events);
    let mut per_track: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for ((t, s), d) in i64s(&ev, "track_id")
        .into_iter()
        .zip(i64s(&ev, "ts_ps"))
        .zip(i64s(&ev, "dur_ps"))
    {
        let (s, d) = (s.unwrap(), d.unwrap());
        per_track.entry(t.unwrap()).or_default().push((s, s + d));
    }
    // Independent union: sort and sweep (spans are ps, too many to mark).
    let sweep = |v: &mut Vec<(i64, i64)>| union_sweep_len(v);
    let mut s = ProfileSession::new();
    s.open(&[path], &OpenOptions::default()).await.unwrap();
    let out = s
        .sql("SELECT track_id, busy_ps(ts_ps, ts_ps + dur_ps) AS busy FROM events GROUP BY track_id ORDER BY track_id")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let out = arrow::compute::concat_batches(&out[0].schema(), &out).unwrap();
    let got: Vec<(i64, Option<i64>)> = i64s(&out, "track_id")
        .into_iter()
        .map(Option::unwrap)
        .zip(i64s(&out, "busy"))
        .collect();
    let want: Vec<(i64, Option<i64>)> = per_track
        .iter_mut()
        .map(|(t, v)| {
            let has = v.iter().any(|(s, e)| e > s);
            (*t, has.then(|| sweep(v)))
        })
        .collect();
    assert_eq!(got, want);
}

/// (event_id, distance) pairs of a table-function answer, sorted.
async fn id_distance(s: &ProfileSession, sql: &str) -> Vec<(i64, i64)> {
    let out = s.sql(sql).await.unwrap().collect().await.unwrap();
    let mut got: Vec<(i64, i64)> = out
        .iter()
        .flat_map(|b| {
            i64s(b, "event_id")
                .into_iter()
                .zip(i64s(b, "distance"))
                .map(|(e, d)| (e.unwrap(), d.unwrap()))
                .collect::<Vec<_>>()
        })
        .collect();
    got.sort_unstable();
    got
}

/// `ancestors` and `descendants` on a real CPU profile with nested host
/// events, against the `parent_id` chains walked here from the converted
/// `events` table.
#[tokio::test]
async fn ancestors_and_descendants_follow_parent_id() {
    let path = cpu_fixture(REAL_CPU[2]);
    let bytes = std::fs::read(&path).unwrap();
    let (sink, _) = convert_bytes(&bytes, &Default::default());
    let ev = table(&sink, Table::Events);
    let ids: Vec<i64> = i64s(&ev, "event_id")
        .into_iter()
        .map(Option::unwrap)
        .collect();
    let parent: BTreeMap<i64, Option<i64>> =
        ids.iter().copied().zip(i64s(&ev, "parent_id")).collect();
    let depth: BTreeMap<i64, i64> = ids
        .iter()
        .copied()
        .zip(i64s(&ev, "depth").into_iter().map(Option::unwrap))
        .collect();
    let chain = |id: i64| -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        let mut at = parent[&id];
        while let Some(p) = at {
            out.push((p, out.len() as i64 + 1));
            at = parent[&p];
        }
        out.sort_unstable();
        out
    };
    // The deepest events and the events with the most descendants.
    let mut by_depth = ids.clone();
    by_depth.sort_by_key(|id| std::cmp::Reverse(depth[id]));
    let max_depth = depth[&by_depth[0]];
    assert!(max_depth >= 2, "the fixture nests at least three deep");
    let mut below: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for &id in &ids {
        for (ancestor, distance) in chain(id) {
            below.entry(ancestor).or_default().push((id, distance));
        }
    }
    let mut by_size: Vec<(&i64, &Vec<(i64, i64)>)> = below.iter().collect();
    by_size.sort_by_key(|(id, v)| (std::cmp::Reverse(v.len()), **id));
    let mut s = ProfileSession::new();
    s.open(&[&path], &OpenOptions::default()).await.unwrap();
    for &id in by_depth.iter().take(10) {
        let got = id_distance(
            &s,
            &format!("SELECT event_id, distance FROM ancestors(0, {id})"),
        )
        .await;
        assert_eq!(got, chain(id), "ancestors of {id}");
        assert_eq!(
            got.len() as i64,
            depth[&id],
            "one ancestor per level above {id}"
        );
    }
    for &(&id, want) in by_size.iter().take(10) {
        let mut want: Vec<(i64, i64)> = want.to_vec();
        want.sort_unstable();
        let got = id_distance(&s, &format!("SELECT * FROM descendants(0, {id})")).await;
        assert_eq!(got, want, "descendants of {id}");
    }
    // A leaf has no descendants, a top-level event no ancestors.
    let leaf = by_depth[0];
    assert!(
        id_distance(
            &s,
            &format!("SELECT event_id, distance FROM descendants(0, {leaf})")
        )
        .await
        .is_empty()
    );
    let top = *by_size[0].0;
    assert!(
        id_distance(
            &s,
            &format!("SELECT event_id, distance FROM ancestors(0, {top})")
        )
        .await
        .is_empty()
    );
    // Errors name the function and what is wrong.
    for (sql, message) in [
        ("SELECT * FROM ancestors(0, -5)", "no event -5 in trace 0"),
        ("SELECT * FROM descendants(0)", "takes 2 arguments"),
        (
            "SELECT * FROM ancestors(0, 'x')",
            "must be an integer literal",
        ),
    ] {
        let err = match s.sql(sql).await {
            Ok(df) => df.collect().await.unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(message), "{sql}: {err}");
    }
}

/// `read_profile` opens an input from SQL: its tables have the rows the
/// session's tables have for the same file.
#[tokio::test]
async fn read_profile_opens_an_input_from_sql() {
    let path = cpu_fixture(REAL_CPU[0]);
    let mut s = ProfileSession::new();
    s.open(&[&path], &OpenOptions::default()).await.unwrap();
    let count = |sql: String| {
        let s = &s;
        async move {
            let out = s.sql(&sql).await.unwrap().collect().await.unwrap();
            i64s(&out[0], "n")[0].unwrap()
        }
    };
    let p = path.display();
    for table in ["events", "tracks", "event_args", "devices"] {
        let direct = count(format!("SELECT count(*) AS n FROM {table}")).await;
        let read = count(format!(
            "SELECT count(*) AS n FROM read_profile('{p}', '{table}')"
        ))
        .await;
        assert!(direct > 0, "{table}");
        assert_eq!(read, direct, "{table}");
    }
    let default = count(format!("SELECT count(*) AS n FROM read_profile('{p}')")).await;
    assert_eq!(
        default,
        count("SELECT count(*) AS n FROM events".into()).await
    );
    // The same rows, not only as many: every event's name and time.
    let same = count(format!(
        "SELECT count(*) AS n FROM read_profile('{p}') r JOIN events e \
         ON r.event_id = e.event_id AND r.name = e.name AND r.ts_ps = e.ts_ps AND r.dur_ps = e.dur_ps"
    ))
    .await;
    assert_eq!(same, default);
    for (sql, message) in [
        (
            format!("SELECT * FROM read_profile('{p}', 'nope')"),
            "no table \"nope\"",
        ),
        (
            "SELECT * FROM read_profile('/nonexistent/x.xplane.pb')".to_string(),
            "/nonexistent/x.xplane.pb",
        ),
        (
            "SELECT * FROM read_profile(1)".to_string(),
            "must be a string literal",
        ),
    ] {
        let err = match s.sql(&sql).await {
            Ok(df) => df.collect().await.unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(message), "{sql}: {err}");
    }
}
