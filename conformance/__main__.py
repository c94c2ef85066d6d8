"""``python -m conformance``: run the suite, and the tools around its reports.

::

    python -m conformance [pytest and suite options]     run the cases (against the reference
                                                          unless a harness is named)
    python -m conformance baseline REPORT.json            print a baseline of the run's failures
    python -m conformance matrix A.json B.json -o OUT     write an HTML page comparing harnesses
    python -m conformance matrix A.json B.json --format text|md
                                                          print the comparison (harnesses as
                                                          columns, areas as rows)
    python -m conformance replay REPORT_OR_TRACE CASE_ID  run one case again, the same way, traced

A run writes nothing into the directory it was started from: pytest's cache is off, temporary
workspaces live in a directory removed afterwards, and hypothesis keeps its files elsewhere.
Bad input to a subcommand is one line naming the file and what is wrong, and exit status 4.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from typing import Final

# The cases are collected from the installed package whatever the implementer's pytest
# configuration says about test discovery.
_BASE: Final = (
    "-p",
    "conformance.plugin",
    "-p",
    "no:cacheprovider",
    "-o",
    "python_files=test_*.py",
    "-o",
    "python_classes=Test*",
    "-o",
    "python_functions=test_*",
    "--pyargs",
    "conformance.cases",
)
USAGE_ERROR: Final = 4


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    commands = {"baseline": _baseline, "matrix": _matrix, "replay": _replay}
    if args and args[0] in commands:
        try:
            return commands[args[0]](args[1:])
        except ValueError as exc:
            print(f"ERROR: {exc}", file=sys.stderr)
            return USAGE_ERROR
    return run(args)


def run(args: Sequence[str]) -> int:
    """Run the suite with pytest; temporary directories are removed afterwards."""
    import pytest  # noqa: PLC0415 - imported late so the package is not rewritten-too-early

    own_temp = None
    extra: list[str] = []
    if not any(a == "--basetemp" or a.startswith("--basetemp=") for a in args):
        own_temp = tempfile.mkdtemp(prefix="conformance-run-")
        extra = ["--basetemp", own_temp]
    try:
        return int(pytest.main([*_BASE, *extra, *args]))
    finally:
        if own_temp is not None:
            shutil.rmtree(own_temp, ignore_errors=True)


def _baseline(args: list[str]) -> int:
    from conformance.baseline import make_baseline  # noqa: PLC0415
    from conformance.encoding import json_text  # noqa: PLC0415
    from conformance.report import load_report  # noqa: PLC0415

    if len(args) != 1:
        raise ValueError(
            "usage: python -m conformance baseline REPORT.json > conformance-baseline.json"
        )
    print(json_text(make_baseline(load_report(args[0])), indent=2))
    return 0


def _matrix(args: list[str]) -> int:
    from conformance.report import load_report, matrix  # noqa: PLC0415

    usage = "usage: python -m conformance matrix A.json B.json … [-o OUT] [--format html|text|md]"
    fmt, output, reports = "html", None, []
    rest = iter(args)
    for arg in rest:
        if arg in ("-o", "--format"):
            value = next(rest, None)
            if value is None:
                raise ValueError(f"{arg} needs a value; {usage}")
            if arg == "-o":
                output = value
            else:
                fmt = value
        elif arg.startswith("--format="):
            fmt = arg.split("=", 1)[1]
        else:
            reports.append(arg)
    if fmt not in matrix.FORMATS:
        raise ValueError(f"--format {fmt!r} does not exist; choose one of html, text, md")
    if not reports:
        raise ValueError(f"matrix: name at least one JSON report; {usage}")
    if fmt == "html":
        if output is None:
            raise ValueError(f"the HTML matrix is written to a file: give -o OUT; {usage}")
        matrix.write(reports, output)
        print(f"wrote {output} ({len(reports)} harnesses)")
        return 0
    text = matrix.summary([load_report(path) for path in reports], fmt)
    if output is None:
        sys.stdout.write(text)
    else:
        with open(output, "w", encoding="utf-8") as out:
            out.write(text)
        print(f"wrote {output} ({len(reports)} harnesses)")
    return 0


def _replay(args: list[str]) -> int:
    if len(args) < 2:
        raise ValueError(
            "usage: python -m conformance replay REPORT.json|TRACE.jsonl CASE_ID [options]"
        )
    source, case_id, rest = args[0], args[1], args[2:]
    recorded = _recorded_args(source)
    kept = [a for a in recorded if a not in ("--conformance-case",)]
    return run([*kept, "--conformance-case", case_id, "-v", *rest])


def _recorded_args(source: str) -> list[str]:
    """The harness options a report or a trace recorded."""
    try:
        with open(source, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ValueError(f"{source}: cannot be read: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("run"), dict):
        recorded = data["run"].get("args", [])
    else:
        first = text.splitlines()[0] if text else ""
        try:
            header = json.loads(json.loads(first)["line"])
            recorded = header["args"]
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{source}: neither a conformance report nor a trace") from None
    if not isinstance(recorded, list) or not all(isinstance(a, str) for a in recorded):
        raise ValueError(f"{source}: the recorded run options are malformed")
    return recorded


if __name__ == "__main__":
    sys.exit(main())
