"""``python -m conformance``: run the suite, and the tools around its reports.

::

    python -m conformance [pytest and suite options]     run the cases (against the reference
                                                          unless a harness is named)
    python -m conformance baseline REPORT.json            print a baseline of the run's failures
    python -m conformance matrix A.json B.json -o OUT     write an HTML page comparing harnesses
    python -m conformance matrix A.json B.json --format text|md
                                                          print the comparison (harnesses as
                                                          columns, areas as rows)
    python -m conformance replay REPORT_OR_TRACE CASE_ID  run one case again with the recorded
                                                          options, verbose

A run writes nothing into the directory it was started from: pytest's cache lives under the
user's cache directory (one per harness, so ``--lf`` and ``--ff`` work), temporary workspaces
live in a directory removed afterwards, and hypothesis keeps its files elsewhere. It reads no
pytest configuration of the caller's project (``conformance/run.ini`` is its only ini file); its
own settings come from ``[tool.harness-conformance]`` (``conformance.settings``).
Bad input to a subcommand is one line naming the file and what is wrong, and exit status 4.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import itertools
import json
import os
import shlex
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path
from typing import Final, Protocol

import conformance

USAGE: Final = """\
usage: python -m conformance [options]                     run the cases (against the reference
                                                            harness unless one is named)
       python -m conformance COMMAND [--help] ...

commands:
  baseline REPORT.json            print a baseline of a run's failures (known failures)
  matrix A.json [B.json …] -o OUT write an HTML page comparing harnesses
  replay REPORT|TRACE CASE_ID     run one case again with the recorded options, verbose

common options (all of pytest's work too; listed below):
  --harness MODULE:ATTR | --harness-cmd CMD | --harness-mcp CMD   the harness under test
  --conformance-report PATH, --conformance-report-md PATH, --junitxml PATH   reports
  --conformance-baseline FILE     known failures are expected, only new ones fail the run
  --conformance-list-cases [--format markdown|json]   print the cases (honours -k and
                                  --conformance-case) and run nothing
  --conformance-config FILE       the suite's settings (default: [tool.harness-conformance]
                                  in pyproject.toml)
  --version                       the suite's, the spec's and the protocol's versions
"""
COMMAND_USAGE: Final = {
    "baseline": "usage: python -m conformance baseline REPORT.json > conformance-baseline.json\n\n"
    "Print a baseline (JSON) of the failures a JSON report records, keyed by case and level.\n"
    "The report must be of a complete run of the whole suite (not -x, -k or --lf).",
    "matrix": "usage: python -m conformance matrix A.json [B.json …] -o matrix.html\n"
    "       python -m conformance matrix A.json [B.json …] --format text|md [-o OUT]\n\n"
    "Write one HTML page comparing the JSON reports of several harnesses, or print (or write\n"
    "to OUT) the same comparison as text or Markdown: harnesses as columns, areas as rows.",
    "replay": "usage: python -m conformance replay REPORT.json|TRACE.jsonl CASE_ID [options]\n\n"
    "Run one case again with the harness options the report or trace recorded, verbose; extra\n"
    "options are added. Relative files, a module:attr harness and the words of a harness\n"
    "command are found where the recorded run started or, if that directory is gone, beside\n"
    "the report (a file not there: where the replay starts); so are the files its settings\n"
    "named, at the same place from that start. The settings of the directory the replay\n"
    "starts in are not read: the recorded options alone decide the outcome.",
}
USAGE_ERROR: Final = 4
RUN_INI: Final = Path(conformance.__file__).parent / "run.ini"
ROOT: Final = Path(conformance.__file__).parent.parent
_BASE: Final = ("-p", "conformance.plugin", "-c", str(RUN_INI), "--rootdir", str(ROOT),
                "--pyargs", "conformance.cases")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    commands: dict[str, Callable[[list[str]], int]] = {
        "baseline": _baseline,
        "matrix": _matrix,
        "replay": _replay,
    }
    if args and args[0] in commands:
        if any(a in ("-h", "--help") for a in args[1:]):
            print(COMMAND_USAGE[args[0]])
            return 0
        try:
            return commands[args[0]](args[1:])
        except ValueError as exc:
            print(f"ERROR: {exc}", file=sys.stderr)
            return USAGE_ERROR
    if "--version" in args or "-V" in args:
        print(version_text())
        return 0
    if any(a in ("-h", "--help") for a in args):
        print(USAGE)
        sys.stdout.flush()
    from conformance.settings import SettingsError  # noqa: PLC0415

    try:
        return run(args)
    except SettingsError as exc:  # the suite's settings, before pytest starts
        print(f"ERROR: {exc}", file=sys.stderr)
        return USAGE_ERROR


def version_text() -> str:
    """``--version``: what a bug report needs to name."""
    from conformance.harness.contract import PROTOCOL_VERSION  # noqa: PLC0415
    from conformance.rules import spec_version  # noqa: PLC0415

    return (
        f"harness-conformance {conformance.__version__} (SPEC.md {spec_version()}, "
        f"protocol {PROTOCOL_VERSION})"
    )


def run(args: Sequence[str], *, settings_here: bool = True) -> int:
    """Run the suite with pytest; temporary directories are removed afterwards.

    ``settings_here``: read the settings of the directory the run starts in (a replay does
    not: it runs the recorded options, wherever it is started).
    """
    _RUN_STARTED.append(True)
    if hasattr(signal, "SIGTERM") and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, BeforeTheRun())
    import pytest  # noqa: PLC0415 - imported late so the package is not rewritten-too-early

    from conformance import settings  # noqa: PLC0415
    from conformance.report import output_problem  # noqa: PLC0415

    args = list(args)
    explicit = _take_value(args, "--conformance-config")
    try:
        found = (
            settings.read(Path.cwd(), explicit) if settings_here or explicit else settings.Found()
        )
    except settings.SettingsError as exc:
        if not any(a in ("-h", "--help") for a in args):
            raise
        # The help is what a user reads to fix the setting: shown whole, the problem noted.
        print(f"NOTE: {exc}", file=sys.stderr)
        found = settings.Found()
    for note in found.notes:
        print(f"NOTE: {note}", file=sys.stderr)
    if found.module_path is not None:
        _importable_from(found.module_path)
    extra = found.args()
    listing = _take_value(args, "--format")  # without a listing, the plugin refuses it
    if listing is not None:
        if listing not in settings.LIST_FORMATS:
            known = ", ".join(settings.LIST_FORMATS)
            raise settings.SettingsError(
                f"--format {listing!r} does not exist; choose one of {known}"
            )
        extra += ["--conformance-list-format", listing]
    for junit in _values(args, ("--junitxml", "--junit-xml")):  # pytest's, checked at its end
        problem = output_problem(junit)
        if problem is not None:
            raise settings.SettingsError(f"--junitxml {junit}: {problem}")
    own_temp = None
    if not any(a == "--basetemp" or a.startswith("--basetemp=") for a in args):
        own_temp = tempfile.mkdtemp(prefix="conformance-run-")
        extra += ["--basetemp", own_temp]
    if not _names(args, "-p", "no:cacheprovider") and not _names(args, "-o", "cache_dir"):
        extra += ["-o", f"cache_dir={cache_dir(args, found.overrides)}"]
    stdout = sys.stdout
    if "--conformance-list-cases" in args:
        sys.stdout = sys.stderr  # pytest's own lines; the listing alone goes to stdout
    usage = _one_line_usage()
    try:
        code = int(pytest.main([*_BASE, *extra, *args], plugins=[usage]))
    except KeyboardInterrupt:
        if not _plugin_reported():  # pytest let it through before its session ended
            _report_not_started(args)
        raise
    finally:
        sys.stdout = stdout
        if own_temp is not None:
            shutil.rmtree(own_temp, ignore_errors=True)
    if code == INTERRUPTED and not _plugin_reported():
        # pytest caught it itself, before its session could end (a signal in configure).
        _report_not_started(args)
    elif code == USAGE_ERROR and not _plugin_reported() and not _lists(args):
        # Bad input ends the run before it starts; the reports still say so, or a CI job that
        # uploads them would show an earlier run's results as this one's.
        read = [*_values(args, INPUTS), *(found.overrides.get(k, "") for k in _INPUT_INIS)]
        _report_not_started(
            args, f"the run did not start: {usage.error or 'bad input'}", spare=read
        )
    return code


INPUTS: Final = ("--conformance-baseline", "--conformance-wording", "--harness-mcp-map")
"""The options naming a file the run reads: never written, even where a report is asked."""

_INPUT_INIS: Final = ("conformance_baseline", "conformance_wording")


def _lists(args: Sequence[str]) -> bool:
    """Whether the run only lists the cases (it writes no report when it works either)."""
    return any(a in ("--collect-only", "--co", "--conformance-list-cases") for a in args)


def _importable_from(directory: str) -> None:
    """A Python harness named in a settings file is found beside it, from any subdirectory.

    Here (in process) and in the harness's child, which inherits ``PYTHONPATH``; the
    directory comes after the one the run starts in, as ``python -m`` would look.
    """
    sys.path.insert(1, directory)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (os.environ.get("PYTHONPATH", ""), directory) if p
    )


def _report_not_started(
    args: Sequence[str],
    reason: str = "the run was interrupted before it started",
    spare: Sequence[str] = (),
) -> None:
    """The reports a run asked for, when it ended before pytest's session started: interrupted,
    or stopped by bad input.

    They are always written (docs/protocol.md), here with no case and that reason; never over
    a file in ``spare`` (one the run reads: bad input may be a report named as a baseline).
    """
    from conformance.report import Report, markdown  # noqa: PLC0415
    from conformance.rules import spec_version  # noqa: PLC0415

    report = Report(
        suite={"name": "harness-conformance", "version": conformance.__version__},
        spec=spec_version(),
    )
    report.incomplete(reason)
    writers: dict[str, Callable[[str], None]] = {
        "--conformance-report": report.write,
        "--conformance-report-md": lambda to: markdown.write(report, to),
    }
    for option, write in writers.items():
        for path in _values(args, (option,)):
            if any(_same_file(path, read) for read in spare if read):
                continue
            with contextlib.suppress(OSError):  # a place checked only once pytest starts
                write(path)


def _same_file(one: str, other: str) -> bool:
    """Whether two paths name one file (or would, once made)."""
    return os.path.realpath(one) == os.path.realpath(other)


def cache_dir(args: Sequence[str], overrides: Mapping[str, str] | None = None) -> Path:
    """pytest's cache for a run: under the user's cache directory, one per harness.

    The harness is the one the command line names, else the one the suite's settings name
    (``overrides``, as ``conformance.settings`` gives them), keyed as if typed as an option:
    ``harness = "m:h"`` in pyproject.toml shares its cache with ``--harness m:h``.
    """
    from conformance import settings  # noqa: PLC0415

    # Each harness option as a pair, however it was spelled: ``--harness=m:h`` and
    # ``--harness m:h`` share one cache, so ``--lf`` finds the last run's failures.
    chosen = [a for a in args if a == "--conformance-in-process"]
    for flag in HARNESS_OPTIONS:
        for given in _values(args, (flag,)):
            chosen += [flag, given]
    chosen += [v for a, v in itertools.pairwise(args) if a == "-o" and v.startswith(_HARNESS_INI)]
    if not any(a.startswith(("--harness", *_HARNESS_INI)) for a in chosen):
        for ini, option in SETTINGS_HARNESS.items():
            value = (overrides or {}).get(ini)
            if value:
                chosen += [option, value]
    key = hashlib.sha256("\0".join(chosen).encode()).hexdigest()[:16] if chosen else "reference"
    return settings.user_cache_dir() / "pytest" / key


HARNESS_OPTIONS: Final = ("--harness", "--harness-cmd", "--harness-mcp", "--harness-mcp-map")
"""The options that choose the harness (or how it is reached), each part of the cache's key."""
SETTINGS_HARNESS: Final = {"conformance_harness": "--harness",
                           "conformance_harness_cmd": "--harness-cmd"}  # fmt: skip
"""The settings that name a harness, and the option each stands for."""
_HARNESS_INI: Final = tuple(f"{ini}=" for ini in SETTINGS_HARNESS)


def _one_line(message: str) -> str:
    """pytest's usage error (its usage line, the error, its ini file and rootdir) as one line."""
    if not message.startswith("usage:"):
        return message
    for line in message.splitlines():
        _, marker, error = line.partition(": error: ")
        if marker:
            return f"{error}; python -m conformance --help lists the options"
    return message


class _Usage(Protocol):
    """The run's usage plugin, as ``run`` reads it afterwards."""

    error: str | None


def _one_line_usage() -> _Usage:
    """A plugin for this run: pytest's own option errors (a bad value, an unknown option) in
    one line, as the suite's own bad input is; pytest's would name ``pytest.main()``, then
    the suite's ini file and rootdir on lines of their own."""
    import pytest  # noqa: PLC0415

    class OneLineUsage:
        error: str | None = None
        """The line pytest prints for the run's bad input, kept for its reports."""

        def pytest_addoption(self, parser: pytest.Parser) -> None:
            parser.prog = "python -m conformance"  # pytest's part of --help names the command

        @pytest.hookimpl(wrapper=True)
        def pytest_cmdline_parse(self) -> Generator[None, pytest.Config, pytest.Config]:
            try:
                return (yield)
            except pytest.UsageError as exc:
                self.error = _one_line(str(exc))
                raise pytest.UsageError(self.error) from None

        @pytest.hookimpl(wrapper=True)
        def pytest_cmdline_main(self) -> Generator[None, object, object]:
            try:
                return (yield)
            except pytest.UsageError as exc:  # the suite's own checks, as the session starts
                self.error = "; ".join(str(arg) for arg in exc.args)
                raise

    return OneLineUsage()


def _names(args: Sequence[str], flag: str, value: str) -> bool:
    """Whether ``args`` hold ``flag VALUE…`` or ``flagVALUE…`` (no arguments hold nothing)."""
    pairs = itertools.pairwise([*args, ""])
    return any(a == flag and b.startswith(value) for a, b in pairs) or f"{flag}{value}" in args


def _values(args: Sequence[str], flags: tuple[str, ...]) -> list[str]:
    """The values given to any of ``flags``, as ``flag VALUE`` or ``flag=VALUE``."""
    found = [b for a, b in itertools.pairwise(args) if a in flags]
    return found + [a.split("=", 1)[1] for a in args if a.startswith(tuple(f"{f}=" for f in flags))]


def _take_value(args: list[str], flag: str) -> str | None:
    """Remove ``flag VALUE`` (or ``flag=VALUE``) from ``args``; return VALUE."""
    for i, arg in enumerate(args):
        if arg == flag:
            if i + 1 == len(args):
                from conformance.settings import SettingsError  # noqa: PLC0415

                raise SettingsError(f"{flag} needs a value")
            value = args[i + 1]
            del args[i : i + 2]
            _once(args, flag)
            return value
        if arg.startswith(flag + "="):
            del args[i]
            _once(args, flag)
            return arg.split("=", 1)[1]
    return None


def _once(args: list[str], flag: str) -> None:
    """A flag taken out of ``args`` must not be there again: pytest would call the second
    one an unrecognized argument, though ``--help`` lists it."""
    if any(arg == flag or arg.startswith(flag + "=") for arg in args):
        from conformance.settings import SettingsError  # noqa: PLC0415

        raise SettingsError(f"{flag} is given twice: name one")


def _baseline(args: list[str]) -> int:
    from conformance.baseline import make_baseline  # noqa: PLC0415
    from conformance.encoding import json_text  # noqa: PLC0415
    from conformance.report import load_report  # noqa: PLC0415

    if len(args) != 1:
        raise ValueError(
            "usage: python -m conformance baseline REPORT.json > conformance-baseline.json"
        )
    report = load_report(args[0])
    if report.get("complete") is False:
        # Its cases not run would be listed as known, without their failures: the next
        # complete run would fail on every one of those, and call no entry stale.
        not_run = sum(1 for c in report["cases"] if c.get("outcome") == "not-run")
        raise ValueError(
            f"{args[0]}: the run was cut short ({report.get('reason')}; {not_run} not run): "
            "make the baseline from a complete run"
        )
    selected = report.get("selected")
    if isinstance(selected, dict):
        # It would know only the cases it ran: every other case's failures would count as
        # new since the baseline, and never fail a run.
        raise ValueError(
            f"{args[0]}: the run chose {selected.get('cases', '?')} of "
            f"{selected.get('of', '?')} cases (-k, -m, --conformance-case or --lf): "
            "make the baseline from a run of the whole suite"
        )
    print(json_text(make_baseline(report), indent=2))
    return 0


def _matrix(args: list[str]) -> int:
    from conformance.report import (  # noqa: PLC0415
        load_report,
        matrix,
        output_problem,
        plural,
        write_text,
    )

    usage = "usage: python -m conformance matrix A.json B.json … [-o OUT] [--format html|text|md]"
    fmt, output, reports = "html", None, []
    given: set[str] = set()
    rest = iter(args)
    for arg in rest:
        name, equals, joined = arg.partition("=")
        if name not in ("-o", "--format"):
            reports.append(arg)
            continue
        value = joined if equals else next(rest, None)
        if value is None:
            raise ValueError(f"{name} needs a value; {usage}")
        if name in given:  # the last would win silently: a page written where nobody looks
            raise ValueError(f"{name} is given twice; {usage}")
        given.add(name)
        if name == "-o":
            output = value
        else:
            fmt = value
    if fmt not in matrix.FORMATS:
        raise ValueError(f"--format {fmt!r} does not exist; choose one of html, text, md")
    if not reports:
        raise ValueError(f"matrix: name at least one JSON report; {usage}")
    if fmt == "html" and output is None:
        raise ValueError(f"the HTML matrix is written to a file: give -o OUT; {usage}")
    problem = None if output is None else output_problem(output, beside=True)
    if problem is not None:
        raise ValueError(f"-o {output}: {problem}")
    for index, report in enumerate(reports):
        if (again := _one_of(report, reports[:index])) is not None:
            raise ValueError(f"matrix: {report} is the report {again} again; name each once")
    if output is not None and (read := _one_of(output, reports)) is not None:
        raise ValueError(f"-o {output}: is the report {read}, which the matrix reads")
    try:
        if fmt == "html":
            assert output is not None
            matrix.write(reports, output)
        else:
            loaded = [load_report(path) for path in reports]
            text = matrix.summary(loaded, fmt, matrix.source_names(reports))
            if output is None:
                sys.stdout.write(text)
                return 0
            write_text(output, text)
    except OSError as exc:  # checked above, so the disk changed since (full?)
        raise ValueError(f"-o {output}: cannot be written: {exc.strerror or exc}") from None
    print(f"wrote {output} ({len(reports)} {plural('report', len(reports))})")
    return 0


def _one_of(output: str, reports: list[str]) -> str | None:
    """The report among ``reports`` that ``output`` names (by any spelling or link), or None."""
    for report in reports:
        with contextlib.suppress(OSError):
            if os.path.samefile(output, report):
                return report
    return None


FILE_OPTIONS: Final = ("--conformance-wording", "--harness-mcp-map", "--conformance-snapshots")
HARNESS_RECORDS: Final = ("--harness", "--harness-cmd", "--harness-mcp", "-p")
"""What a recorded run names its harness with (``-p``: a plugin whose hook hands it over)."""
COMMAND_OPTIONS: Final = ("--harness-cmd", "--harness-mcp")


def _replay(args: list[str]) -> int:
    if len(args) < 2:
        raise ValueError(
            "usage: python -m conformance replay REPORT.json|TRACE.jsonl CASE_ID [options]"
        )
    source, case_id, rest = args[0], args[1], args[2:]
    from conformance.harness.objects import HOOK_LABEL  # noqa: PLC0415

    recorded, started, label = _recorded_args(source)
    # An installed plugin's hook records no option: pytest loads the plugin again by itself.
    if not any(arg in HARNESS_RECORDS for arg in recorded) and label != HOOK_LABEL:
        raise ValueError(
            f"{source}: records no harness (--harness, --harness-cmd, --harness-mcp or a -p "
            "plugin's): a replay would test the reference instead"
        )
    # Where the recorded run started, if it is still there; else beside the report (a CI
    # report opened on another machine, its files and harness kept beside it).
    base = Path(started) if started and Path(started).is_dir() else Path(source).resolve().parent
    kept = _resolved(recorded, base, started)
    if started:
        # A module harness named in the settings is found beside them, as the run found it
        # (or, the start gone, as the settings above the report find it); nothing else of
        # those settings applies.
        from conformance import settings  # noqa: PLC0415

        with contextlib.suppress(settings.SettingsError):
            module_path = settings.read(base, None).module_path
            if module_path is not None:
                _importable_from(module_path)
    # A Python harness named module:attr is imported the way the recorded run found it.
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(base) + (os.pathsep + path if path else "")
    sys.path.insert(0, str(base))
    # The recorded run's options alone: this directory's settings (a level, a baseline,
    # expect-fail) would give the case another outcome than the one being replayed.
    return run([*kept, "--conformance-case", case_id, "-v", *rest], settings_here=False)


def _resolved(recorded: list[str], base: Path, started: str | None = None) -> list[str]:
    """The recorded options, with each relative file found where the recorded run found it.

    A harness command's words are found as the run found them (``absolute_words``); a file
    recorded by an absolute path that is gone is looked for where it lay from the recorded
    start (``_moved``).
    """
    from conformance.harness.loading import absolute_words  # noqa: PLC0415

    kept: list[str] = []
    for i, arg in enumerate(recorded):
        if arg == "--conformance-case" or (i and recorded[i - 1] == "--conformance-case"):
            continue
        before, value = (recorded[i - 1] if i else ""), arg
        if before in COMMAND_OPTIONS:
            with contextlib.suppress(ValueError):  # one that does not parse fails as it did
                words = shlex.split(arg)
                found = [
                    _moved(word, started, base) if "/" in word and not word.startswith("-")
                    else word
                    for word in absolute_words(words, str(base))
                ]  # fmt: skip
                value = shlex.join(found) if found != words else arg
        if before in FILE_OPTIONS and os.path.isabs(arg):
            value = _moved(arg, started, base)
        elif before in FILE_OPTIONS:
            # Beside the recorded start (or the report); else where the replay starts.
            here = Path.cwd() / arg
            value = str(here if not (base / arg).exists() and here.exists() else base / arg)
        kept.append(value)
    return kept


def _moved(path: str, started: str | None, base: Path) -> str:
    """An absolute path the recorded run named (its settings name files so) that is gone.

    The checkout moved, or the report is read on another machine: the file is looked for at
    the same place relative to the recorded start, from beside the report and from where the
    replay starts; else the path stays as recorded, and fails as it would.
    """
    if not started or not os.path.isabs(path) or os.path.lexists(path):
        return path
    relative = os.path.relpath(path, started)
    for root in (base, Path.cwd()):
        candidate = os.path.normpath(root / relative)
        if os.path.lexists(candidate):
            return candidate
    return path


def _recorded_args(source: str) -> tuple[list[str], str | None, str]:
    """The harness options a report or a trace recorded, the directory its run started in, and
    how it named its harness."""
    from conformance.report import is_trace_record  # noqa: PLC0415

    try:
        with open(source, encoding="utf-8-sig") as handle:  # a BOM, as some editors save
            text = handle.read()
    except OSError as exc:
        raise ValueError(f"{source}: cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{source}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    not_json = None
    try:
        data = json.loads(text)
    except ValueError as exc:
        data, not_json = None, exc
    if isinstance(data, dict) and "cases" in data and "suite" in data and "failures" not in data:
        run = data.get("run")
        if not isinstance(run, dict) or "args" not in run:
            # A run stopped before it started (bad input, Ctrl-C) records none: it named a
            # harness all the same, and a replay without one would test the reference.
            why = data.get("reason") if data.get("complete") is False else None
            raise ValueError(
                f"{source}: a report that records no run options to replay"
                + (f" ({why})" if isinstance(why, str) and why else "")
            )
        recorded, started, label = run["args"], run.get("cwd"), run.get("harness")
    else:
        first = text.splitlines()[0] if text else ""
        try:
            header = json.loads(json.loads(first)["line"])
            recorded, started = header["args"], header.get("cwd")
            label = header.get("harness")
        except (ValueError, KeyError, TypeError):
            if isinstance(data, dict) and data.get("failures") is not None:
                raise ValueError(
                    f"{source}: is a baseline, not a report or a trace (replay reads the JSON "
                    "report of a run, --conformance-report, or its --conformance-trace)"
                ) from None
            if is_trace_record(first) and json.loads(first)["kind"] == "run":
                raise ValueError(
                    f"{source}: the trace's first line, the run's header, does not hold the "
                    "run's options (args) as JSON"
                ) from None
            if is_trace_record(first):
                raise ValueError(
                    f"{source}: a trace without its first line, the run's header (it holds the "
                    "options to replay)"
                ) from None
            if not_json is not None and text.lstrip().startswith("{"):
                # JSON that does not parse, and no trace's first line: a report cut short.
                raise ValueError(f"{source}: not JSON: {not_json}") from None
            raise ValueError(f"{source}: neither a conformance report nor a trace") from None
    if not isinstance(recorded, list) or not all(isinstance(a, str) for a in recorded):
        raise ValueError(f"{source}: the recorded run options are malformed")
    started = started if isinstance(started, str) else None
    return recorded, started, label if isinstance(label, str) else ""


def console() -> None:
    """``python -m conformance`` and ``harness-conformance``: ``main``, then ``leave``."""
    try:
        code = main()
        # Buffered, stdout may hold the lines pytest wrote after its reader left (pytest then
        # calls the first broken pipe an internal error): flushing finds the reader gone.
        sys.stdout.flush()
    except BrokenPipeError:
        code = _stdout_closed()
    except KeyboardInterrupt:
        if not _RUN_STARTED:  # a subcommand (baseline, matrix): Ctrl-C's status, no traceback
            leave(130)
        if not _plugin_reported():  # else the run said so itself, and wrote its reports
            print("INCOMPLETE: the run was interrupted before it started", file=sys.stderr)
        code = INTERRUPTED
    leave(code)


_RUN_STARTED: list[bool] = []
"""Whether ``run`` was entered (a subcommand's Ctrl-C is not an interrupted run)."""


def _plugin_reported() -> bool:
    """Whether a run in this process reached the point where it writes its reports."""
    plugin = sys.modules.get("conformance.plugin")
    return plugin is not None and bool(plugin.reports_written())


INTERRUPTED: Final = 2
"""pytest's exit status for an interrupted run, also before its session starts."""


class BeforeTheRun:
    """SIGTERM before the run's own handler is in place: an interruption, not a kill.

    Without it a CI cancel in the first half second killed the process (status 143) and left
    its temporary directory; the plugin replaces it once the session starts.
    """

    before_the_run: Final = True

    def __call__(self, signum: int, frame: object) -> None:
        if _plugin_reported():
            return  # the run is over and said what it had to; it ends in a moment anyway
        raise KeyboardInterrupt(f"signal {signum}")


STDOUT_CLOSED: Final = 141
"""The exit status when stdout's reader went away (``| head``): a shell's for SIGPIPE."""


def _stdout_closed() -> int:
    """Whoever read stdout stopped reading: end quietly, as a command in a pipeline does.

    pytest has unconfigured by then (the harness is stopped); what is still buffered for stdout
    goes nowhere instead of raising again as the process ends.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return STDOUT_CLOSED


def leave(code: int) -> None:
    """End the process with ``code``, skipping only the interpreter's own teardown.

    Everything a run leaves is settled when ``main`` returns (pytest has unconfigured, the
    reports are written, the harness and the helper are stopped); what is left is tearing down
    every module and collecting a heap that pytest and hypothesis made big, 0.1-0.2 s of each
    run spent on nothing anyone keeps. The exit handlers still run and the standard streams are
    flushed; with a thread still running that an exit waits for, the ordinary exit does.
    """
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    waited_for = [
        t for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()
    ]
    if run_exit_handlers is None or waited_for:
        sys.exit(code)
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    # What only a finalizer would have done (a temporary file never closed) is skipped too.
    os._exit(code)


if __name__ == "__main__":
    console()
