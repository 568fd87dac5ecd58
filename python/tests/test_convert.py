"""convert() writes what `xprof-sql convert` writes, with progress and
clear errors."""

from __future__ import annotations

import subprocess

import pyarrow.dataset as pads
import pytest

import xprof_sql
from conftest import JAX_CPU, JAX_GPU, KINETO


def test_convert_writes_a_dataset_that_answers_as_the_raw_input(tmp_path):
    calls = []
    written = xprof_sql.convert([JAX_GPU, KINETO], tmp_path / "ds", progress=lambda done, total: calls.append((done, total)))
    assert [w["trace_id"] for w in written] == [0, 1]
    assert all(w["events"] > 0 for w in written)
    assert calls and calls[-1][0] == calls[-1][1] > 0
    q = "SELECT trace_id, count(*) AS n, sum(dur_ps) AS d FROM events GROUP BY 1 ORDER BY 1"
    assert xprof_sql.open(tmp_path / "ds").sql(q).equals(xprof_sql.open(JAX_GPU, KINETO).sql(q))


def test_partition_by_writes_a_warehouse(tmp_path, cli):
    logs = tmp_path / "logs"
    for run, src in [("r1", JAX_CPU), ("r2", JAX_GPU)]:
        (logs / run).mkdir(parents=True)
        (logs / run / "hostA.xplane.pb").write_bytes(src.read_bytes())
    xprof_sql.convert([logs / "r1", logs / "r2"], tmp_path / "wh", partition_by=["run", "host"], progress=False)
    assert (tmp_path / "wh" / "events" / "run=r1" / "host=hostA").is_dir()
    assert (tmp_path / "wh" / "events" / "run=r2" / "host=hostA").is_dir()
    # pyarrow reads the partition columns; the session answers the same.
    ev = pads.dataset(tmp_path / "wh" / "events", format="parquet", partitioning="hive").to_table()
    by_run = xprof_sql.open(tmp_path / "wh").sql("SELECT run, count(*) AS n FROM events GROUP BY run ORDER BY run")
    assert by_run.column("run").to_pylist() == ["r1", "r2"]
    assert sum(by_run.column("n").to_pylist()) == ev.num_rows
    # The same run again is refused unless replace=True.
    with pytest.raises(xprof_sql.InputError, match="r1"):
        xprof_sql.convert(logs / "r1", tmp_path / "wh", partition_by="run,host", progress=False)
    xprof_sql.convert(logs / "r1", tmp_path / "wh", partition_by="run,host", replace=True, progress=False)
    again = xprof_sql.open(tmp_path / "wh").sql("SELECT run, count(*) AS n FROM events GROUP BY run ORDER BY run")
    assert again.equals(by_run)


def test_a_bad_input_leaves_no_output(tmp_path):
    bad = tmp_path / "bad.xplane.pb"
    bad.write_bytes(JAX_CPU.read_bytes()[:1000])
    with pytest.raises(xprof_sql.InputError) as e:
        xprof_sql.convert(bad, tmp_path / "out", progress=False)
    assert e.value.path == str(bad) and e.value.offset is not None
    assert not (tmp_path / "out" / "events").exists() or not any((tmp_path / "out" / "events").iterdir())


def test_the_plain_progress_line_reaches_stderr(tmp_path, capfd, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    xprof_sql.convert(JAX_GPU, tmp_path / "ds")
    err = capfd.readouterr().err
    assert "converting: 100%" in err
