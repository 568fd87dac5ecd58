"""SQL over accelerator profiles, as Arrow tables.

``xprof_sql`` opens profiles from the XLA/XProf world (XSpace
``*.xplane.pb``), Chrome-trace JSON (PyTorch Kineto, JAX, Triton Proton),
Proton trees and TPU LLO data, normalizes them into one set of tables, and
answers SQL over them with Apache DataFusion. Results are ``pyarrow``
tables handed over through the Arrow C data interface (no copy), so they
go straight to pandas, Polars, DuckDB or DataFusion-Python::

    import xprof_sql
    s = xprof_sql.open("profile.xplane.pb")
    s.sql("SELECT * FROM hlo_stats ORDER BY total_self_time_ps DESC LIMIT 10").to_pandas()

The tables, columns and views are those of the ``xprof-sql`` command-line
tool (``docs/schema.md``, ``docs/analyses.md``). Errors are
:class:`InputError` (with the file ``path`` and byte ``offset``),
:class:`QueryError` and :class:`ReadOnlyError`; Ctrl-C cancels a running
query.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from . import _native
from ._native import Error, InputError, QueryError, ReadOnlyError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "Error",
    "InputError",
    "QueryError",
    "ReadOnlyError",
    "Session",
    "Batches",
    "TableProvider",
    "open",
    "convert",
    "check",
    "__version__",
]

__version__: str = _native.__version__

Batches = _native.Batches
TableProvider = _native.ExportedTable

PathLike = str | os.PathLike[str]

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


def _parse_size(size: int | str | None) -> int | None:
    """Bytes from an int or a size people write: ``"512M"``, ``"2G"``, ``"1.5GiB"``."""
    if size is None or isinstance(size, int):
        if isinstance(size, int) and size <= 0:
            raise ValueError(f"memory_limit must be positive, not {size}")
        return size
    m = _SIZE.match(size)
    if not m:
        raise ValueError(f"memory_limit: not a size: {size!r} (e.g. 512M, 2G)")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    return int(float(m.group(1)) * scale)


class Session:
    """Opened profiles and the SQL over them. Made by :func:`open`.

    The tables (``events``, ``tracks``, ``devices``, …) and views
    (``hlo_stats``, ``kernel_stats``, ``step_stats``, …) are in the default
    schema; :meth:`tables` and :meth:`views` list them.
    """

    def __init__(self, native: Any) -> None:
        self._native = native

    def sql(self, query: str) -> pa.Table:
        """Runs one SQL statement and returns its result as a ``pyarrow.Table``.

        The batches are handed over through the Arrow C data interface,
        without a copy. For results larger than memory use
        :meth:`sql_batches`. Ctrl-C cancels the query (KeyboardInterrupt).

        Raises:
            QueryError: the statement does not plan or fails while running.
            ReadOnlyError: a read-only session refused it.
            InputError: an input read while running it is invalid.
        """
        return self._native.sql(query)

    def sql_batches(self, query: str) -> Batches:
        """Runs one SQL statement and returns an iterator of ``pyarrow.RecordBatch``.

        Batches are produced as they are pulled: memory holds one batch
        (and the query's own state), not the whole result. The iterator's
        ``schema`` is the result's schema; ``close()`` stops the query.
        ``pyarrow.RecordBatchReader.from_batches(it.schema, it)`` makes a
        reader of it.
        """
        return self._native.sql_batches(query)

    def tables(self) -> list[str]:
        """The names of the tables (not the views)."""
        return [n for n, kind in self._native.catalog() if kind == "table"]

    def views(self) -> list[str]:
        """The names of the views: the analyses and the diff helpers (not
        the helper views whose names start with ``_``, the views' private
        parts, as ``xprof-sql schema`` lists them)."""
        return [
            n for n, kind in self._native.catalog() if kind == "view" and not n.startswith("_")
        ]

    def schema(self, name: str) -> pa.Schema:
        """The Arrow schema of a table or view.

        A table's fields carry their documentation as field metadata
        ``b"doc"`` (the text of ``docs/schema.md``).

        Raises:
            KeyError: no table or view has this name.
        """
        return self._native.schema(name)

    def table_provider(self, name: str) -> TableProvider:
        """A table or view for another DataFusion engine.

        The returned object implements ``__datafusion_table_provider__``, so
        DataFusion-Python registers it::

            ctx = datafusion.SessionContext()
            ctx.register_table("events", session.table_provider("events"))

        Raises:
            KeyError: no table or view has this name.
        """
        return self._native.table_provider(name)

    def opened(self) -> list[tuple[str, int]]:
        """``(path, trace_id)`` of every opened trace."""
        return self._native.opened()

    def __repr__(self) -> str:
        return f"<xprof_sql.Session {len(self.opened())} traces>"


def open(  # noqa: A001 - the package's entry point, as in ``pyarrow.parquet``/``duckdb``
    *inputs: PathLike,
    memory_limit: int | str | None = None,
    threads: int | None = None,
    read_only: bool = False,
    timeout: float | None = None,
    run: str | None = None,
) -> Session:
    """Opens profiles for SQL.

    Args:
        inputs: files (``*.xplane.pb``, ``*.trace.json.gz``, Proton
            ``*.hatchet``, …), run folders, log folders (the latest run, or
            ``run``), Parquet datasets and warehouses written by
            :func:`convert` or ``xprof-sql convert``. Several inputs become
            several traces of the same tables.
        memory_limit: bytes (or ``"2G"``) the queries may hold; larger
            sorts and joins spill to disk.
        threads: threads a query uses (default: the cores).
        read_only: refuse statements that write or read paths.
        timeout: seconds one statement may take.
        run: the run to open in a log folder.

    Raises:
        InputError: an input is missing or not a valid profile (its
            ``path`` and ``offset`` say where).
    """
    if not inputs:
        raise ValueError("open() needs at least one input")
    native = _native.Session(
        [os.fspath(i) for i in inputs],
        memory_limit=_parse_size(memory_limit),
        threads=threads,
        read_only=read_only,
        timeout=timeout,
        run=run,
    )
    return Session(native)


def check(
    inputs: PathLike | Iterable[PathLike],
    rules: PathLike | Iterable[PathLike],
    *,
    baseline: PathLike | Iterable[PathLike] | None = None,
    params: dict[str, Any] | None = None,
    evidence: int = 5,
    memory_limit: int | str | None = None,
    threads: int | None = None,
    run: str | None = None,
    trust_rules: bool = False,
) -> dict[str, Any]:
    """Runs rules files of SQL checks over profiles, as ``xprof-sql check``.

    Each rule (``-- check: NAME`` above a query) must return no rows; the
    rows it returns are the evidence of its failure. ``${NAME}`` in a rule
    is replaced by ``params[NAME]``; ``${current}`` and ``${baseline}`` are
    the trace ids of ``inputs`` and ``baseline`` (docs/analyses.md); a
    ``params`` entry of either name raises ``ValueError``. Each rule is one
    query, run read-only (no ``read_profile``, ``range``), as its rules may
    come from a pull request; ``trust_rules=True`` lifts that, as
    ``--trust-rules``.

    Returns the document ``xprof-sql check --format json`` prints: ``rules``
    (each with ``name``, ``file``, ``line``, ``description``, ``status``
    ``"pass"``/``"fail"``/``"error"``, ``rows``, ``evidence`` (row dicts),
    ``error`` and ``seconds``), the counts ``passed``, ``failed``,
    ``errors`` and the CLI's ``exit_code`` (0, 1 or 2).

    Raises:
        QueryError: a rules file does not parse (its file and line say
            where).
        InputError: an input is missing or not a valid profile.
    """
    import json

    def paths(p: PathLike | Iterable[PathLike] | None) -> list[str]:
        if p is None:
            return []
        if isinstance(p, (str, bytes, os.PathLike)):
            return [os.fspath(p)]  # type: ignore[list-item]
        return [os.fspath(x) for x in p]  # type: ignore[misc]

    text = _native.check(
        paths(inputs),
        paths(rules),
        baseline=paths(baseline),
        params=[(str(k), str(v)) for k, v in (params or {}).items()],
        evidence=evidence,
        memory_limit=_parse_size(memory_limit),
        threads=threads,
        run=run,
        trust_rules=trust_rules,
    )
    result: dict[str, Any] = json.loads(text)
    return result


class _PlainProgress:
    """A progress line on stderr where tqdm is not installed."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.shown = -1

    def update_to(self, done: int) -> None:
        percent = 100 * done // max(self.total, 1)
        if percent // 10 != self.shown // 10 or done >= self.total:
            self.shown = percent
            print(
                f"\rconverting: {percent:3d}% ({done / 1048576:.1f} of {self.total / 1048576:.1f} MiB)",
                end="" if done < self.total else "\n",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        pass


def _progress_bar(total: int) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _PlainProgress(total)
    bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc="converting")

    def update_to(done: int) -> None:
        bar.update(done - bar.n)

    bar.update_to = update_to  # type: ignore[attr-defined]
    return bar


def convert(
    inputs: PathLike | Iterable[PathLike],
    out: PathLike,
    partition_by: str | list[str] | None = None,
    *,
    run: str | None = None,
    run_name: str | None = None,
    replace: bool = False,
    threads: int | None = None,
    progress: bool | Callable[[int, int], None] = True,
) -> list[dict[str, Any]]:
    """Converts profiles to a Parquet dataset (one folder per table).

    Args:
        inputs: what :func:`open` takes.
        out: the dataset folder; new traces are added to an existing one.
        partition_by: ``"run,host"`` (any of ``run``, ``host``, ``date``)
            writes a warehouse: ``out/events/run=R/host=H/…``.
        run: the run to convert in a log folder.
        run_name: the run name to record (default: the run folder's).
        replace: convert a run already in the warehouse again.
        threads: files converted in parallel (default: the cores).
        progress: a progress bar (tqdm where installed, else a line on
            stderr); ``False`` for none; or a callable
            ``progress(bytes_done, bytes_total)``.

    Returns:
        One dict per trace written: ``path``, ``trace_id``, ``host``,
        ``run``, ``events``, ``warnings``.

    Raises:
        InputError: an input is missing or invalid; nothing is left
            half-written in ``out``.
    """
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    paths = [os.fspath(i) for i in inputs]
    if isinstance(partition_by, list):
        partition_by = ",".join(partition_by)
    callback = None
    bar = None
    if progress:
        done_by_file: dict[int, int] = {}
        total_by_file: dict[int, int] = {}

        def callback(file: int, files: int, done: int, total: int) -> None:
            nonlocal bar
            done_by_file[file] = done
            total_by_file[file] = total
            all_done = sum(done_by_file.values())
            # Files not started yet are unknown; count what is known.
            all_total = sum(total_by_file.values())
            if callable(progress):
                progress(all_done, all_total)
                return
            if bar is None:
                bar = _progress_bar(all_total)
            bar.total = all_total
            bar.update_to(all_done)

    try:
        return _native.convert(
            paths,
            os.fspath(out),
            partition_by=partition_by,
            run=run,
            run_name=run_name,
            replace=replace,
            threads=threads,
            progress=callback,
        )
    finally:
        if bar is not None:
            bar.close()


