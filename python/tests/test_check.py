"""``xprof_sql.check`` returns what ``xprof-sql check --format json``
prints, and the CLI's ``--junit`` file is read by an independent JUnit
reader (``junitparser``) with the same verdicts."""

from __future__ import annotations

import json
import subprocess

import junitparser

import xprof_sql
from conftest import FIXTURES, ROOT

BASE = FIXTURES / "xspace" / "jax_cpu_mlp_5steps_w128.xplane.pb"
NOW = FIXTURES / "xspace" / "jax_cpu_mlp_5steps_w512.xplane.pb"
READY = ROOT / "examples" / "checks" / "ready.sql"


def _without_seconds(doc):
    for rule in doc["rules"]:
        rule.pop("seconds")
    return doc


def test_check_returns_the_clis_document(cli):
    params = {"max_slowdown_pct": "5", "min_base_us": "100"}
    got = xprof_sql.check(NOW, READY, baseline=BASE, params=params)
    out = subprocess.run(
        [str(cli), "check", str(NOW), "--baseline", str(BASE), "--rules", str(READY),
         "--set", "max_slowdown_pct=5", "--set", "min_base_us=100", "--format", "json"],
        capture_output=True, text=True,
    )
    want = json.loads(out.stdout)
    assert out.returncode == want["exit_code"] == got["exit_code"] == 1
    assert _without_seconds(got) == _without_seconds(want)
    regressions = next(r for r in got["rules"] if r["name"] == "op_regressions")
    assert regressions["status"] == "fail" and regressions["rows"] >= 3
    assert all(row["delta_pct"] > 5 and row["base_us"] >= 100 for row in regressions["evidence"])


def test_junit_file_reads_back_with_the_verdicts(cli, tmp_path):
    rules = tmp_path / "rules.sql"
    rules.write_text(
        "-- check: ops_ran\nSELECT 1 WHERE (SELECT count(*) FROM hlo_stats) = 0;\n"
        "-- check: slow_ops\n-- no op over 1 us\nSELECT hlo_op FROM hlo_stats WHERE total_self_time_us > 1;\n"
        "-- check: broken\nSELECT * FROM no_such_table;\n"
    )
    junit = tmp_path / "junit.xml"
    out = subprocess.run(
        [str(cli), "check", str(BASE), "--rules", str(rules), "--junit", str(junit)],
        capture_output=True, text=True,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    xml = junitparser.JUnitXml.fromfile(str(junit))
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    assert (suite.tests, suite.failures, suite.errors) == (3, 1, 1)
    cases = {case.name: case for case in suite}
    assert set(cases) == {"ops_ran", "slow_ops", "broken"}
    assert cases["ops_ran"].is_passed
    [failure] = cases["slow_ops"].result
    assert isinstance(failure, junitparser.Failure)
    slow = xprof_sql.open(BASE).sql("SELECT count(*) AS n FROM hlo_stats WHERE total_self_time_us > 1")
    assert failure.message.startswith(f"{slow.column('n')[0].as_py()} failing rows")
    [error] = cases["broken"].result
    assert isinstance(error, junitparser.Error)
    assert "rules.sql:6: rule broken" in error.message


def test_check_is_read_only_unless_trusted_and_keeps_its_own_parameters(tmp_path):
    import pytest

    rules = tmp_path / "rules.sql"
    rules.write_text("-- check: rows\nSELECT value FROM range(3);\n")
    # As `xprof-sql check`: a rule may not call `range` unless trusted.
    plain = xprof_sql.check(BASE, rules)
    rule = plain["rules"][0]
    assert rule["status"] == "error" and "read-only" in rule["error"], rule
    trusted = xprof_sql.check(BASE, rules, trust_rules=True)
    assert trusted["rules"][0]["status"] == "fail" and trusted["rules"][0]["rows"] == 3
    for name in ("current", "baseline"):
        with pytest.raises(ValueError, match="is set by check itself"):
            xprof_sql.check(BASE, rules, params={name: "999"})
