"""The ``xprof-sql`` command of the wheel: the same command-line tool as the
Rust binary (``cargo install --path .``), run inside the extension module."""

from __future__ import annotations

import sys


def main() -> None:
    """Runs ``xprof-sql`` with this process's arguments and exits with its
    status."""
    from xprof_sql import _native

    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(_native.cli_main(["xprof-sql", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
