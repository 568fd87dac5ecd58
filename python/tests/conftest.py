"""Shared fixtures: the repository's committed profiles and the CLI the
answers are compared with (``XPROF_SQL_CLI``, else the release build in
``CARGO_TARGET_DIR`` or ``target/``)."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pyarrow.parquet as pq
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

# Real captures of four formats: JAX on CPU (XSpace), JAX on GPU (XSpace),
# PyTorch Kineto (Chrome trace JSON), Triton Proton (tree profile).
JAX_CPU = ROOT / "examples" / "data" / "jax_cpu_mlp.xplane.pb"
JAX_GPU = FIXTURES / "gpu" / "jax_gpu.xplane.pb"
KINETO = FIXTURES / "gpu" / "torch_kineto.json"
PROTON_TREE = FIXTURES / "gpu" / "proton_tree.hatchet"
JAX_STEPS = FIXTURES / "xspace" / "jax_cpu_mlp_5steps_w128.xplane.pb"


def _cli_path() -> pathlib.Path:
    if "XPROF_SQL_CLI" in os.environ:
        return pathlib.Path(os.environ["XPROF_SQL_CLI"])
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "xprof-sql"


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    path = _cli_path()
    if not path.exists():
        pytest.fail(f"the xprof-sql CLI is not built at {path} (cargo build --release, or set XPROF_SQL_CLI)")
    return path


@pytest.fixture(scope="session")
def cli_query(cli, tmp_path_factory):
    """The CLI's answer to SQL over inputs, as a pyarrow table (through
    ``--format parquet``, so types are compared exactly)."""
    out_dir = tmp_path_factory.mktemp("cli")
    counter = iter(range(1 << 30))

    def run(inputs: list[pathlib.Path], sql: str):
        out = out_dir / f"answer{next(counter)}.parquet"
        subprocess.run(
            [str(cli), "query", *map(str, inputs), "-e", sql, "--format", "parquet", "-o", str(out)],
            check=True,
            capture_output=True,
        )
        return pq.read_table(out)

    return run
