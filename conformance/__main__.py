"""``python -m conformance [pytest args]``: run the packaged conformance cases.

With no arguments it runs every case against the reference harness and prints the report.
Any pytest option works (``-k REM-001``, ``-x``, ``--junitxml``), plus the suite's own
(``--harness``, ``--conformance-report``, ``--conformance-snapshots``, …; see ``--help``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# The cases are collected from the installed package whatever the implementer's pytest
# configuration says about test discovery.
_BASE = (
    "-p",
    "conformance.plugin",
    "-o",
    "python_files=test_*.py",
    "-o",
    "python_classes=Test*",
    "-o",
    "python_functions=test_*",
    "--pyargs",
    "conformance.cases",
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite; returns pytest's exit status."""
    import pytest  # noqa: PLC0415 - imported late so the package is not rewritten-too-early

    args = list(sys.argv[1:] if argv is None else argv)
    return int(pytest.main([*_BASE, *args]))


if __name__ == "__main__":
    sys.exit(main())
