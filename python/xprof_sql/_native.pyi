"""Type stubs of the Rust extension (python/src/lib.rs). Use the
documented API of ``xprof_sql`` rather than this module."""

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

__version__: str

class Error(Exception): ...

class InputError(Error):
    path: str | None
    offset: int | None

class QueryError(Error): ...
class ReadOnlyError(QueryError): ...

class Batches(Iterator[pa.RecordBatch]):
    @property
    def schema(self) -> pa.Schema: ...
    def __iter__(self) -> Batches: ...
    def __next__(self) -> pa.RecordBatch: ...
    def close(self) -> None: ...

class ExportedTable:
    def __datafusion_table_provider__(self, session: Any) -> Any: ...

class Session:
    def __init__(
        self,
        inputs: list[str],
        memory_limit: int | None = None,
        threads: int | None = None,
        read_only: bool = False,
        timeout: float | None = None,
        run: str | None = None,
    ) -> None: ...
    def sql(self, query: str) -> pa.Table: ...
    def sql_batches(self, query: str) -> Batches: ...
    def catalog(self) -> list[tuple[str, str]]: ...
    def schema(self, name: str) -> pa.Schema: ...
    def table_provider(self, name: str) -> ExportedTable: ...
    def opened(self) -> list[tuple[str, int]]: ...

def convert(
    inputs: list[str],
    out: str,
    partition_by: str | None = None,
    run: str | None = None,
    run_name: str | None = None,
    replace: bool = False,
    threads: int | None = None,
    progress: Callable[[int, int, int, int], None] | None = None,
) -> list[dict[str, Any]]: ...
def table_docs() -> list[tuple[str, str]]: ...
def check(
    inputs: list[str],
    rules: list[str],
    baseline: list[str] = ...,
    params: list[tuple[str, str]] = ...,
    evidence: int = 5,
    memory_limit: int | None = None,
    threads: int | None = None,
    run: str | None = None,
    trust_rules: bool = False,
) -> str:
    """Runs rules files over profiles; the JSON document of `xprof-sql check --format json`."""
    ...
def cli_main(argv: list[str]) -> int:
    """Runs the xprof-sql command line (argv[0] is the program name); returns its exit status."""
    ...
