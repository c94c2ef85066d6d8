"""Mutation score of the reference: how many small defects the conformance suite catches.

Run: ``python bench/mutation.py [--variant suite|combined|both] [--only PATTERN …]``
(``nox -s mutation``). Not a test: it prints a table and exits non-zero only when mutmut
itself fails.

Two scores, as issue #4 asks:

* **suite** — mutmut over ``reference/`` with the conformance cases alone as the test, run in
  process against the reference (the cases cannot see what a harness does not show: fd walks,
  locks, fsync, worker threads);
* **combined** — the cases plus the project's own in-process tests of the reference.

A survivor is either killed by a new case or test, or listed with a one-line reason in
``bench/mutation-equivalent.txt``. Score = (killed + timed out) / (all − listed equivalent);
"no tests" counts as survived. Each variant runs in a fresh copy of the checkout, so the tree
stays clean.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parent.parent
EQUIVALENT: Final = REPO / "bench" / "mutation-equivalent.txt"
TARGET: Final = 0.90
SUITE_ARGS: Final = [
    "-p", "conformance.plugin", "--conformance-in-process", "-p", "no:cacheprovider",
    "-o", "python_files=test_*.py", "-o", "testpaths=conformance/cases",
    "--hypothesis-profile", "default", "-o", "addopts=",
]  # fmt: skip
# The project's tests that exercise the reference in process (the others start subprocesses,
# which mutmut cannot see into).
IN_PROCESS_TESTS: Final = [
    "tests/test_errors.py", "tests/test_fs_local.py", "tests/test_fs_edges.py",
    "tests/test_tools.py", "tests/test_registry.py", "tests/test_schema.py",
    "tests/test_workspace.py", "tests/test_loop.py", "tests/test_model.py",
    "tests/test_session.py", "tests/test_scenarios.py", "tests/test_reliability.py",
]  # fmt: skip
DO_NOT_MUTATE: Final = ["reference/adapter.py", "reference/__main__.py"]
IGNORE: Final = shutil.ignore_patterns(
    ".git", ".nox", ".venv", "mutants", "__pycache__", ".hypothesis", "docs", "adapters", "examples"
)


def config(variant: str, only: list[str]) -> str:
    """The ``[tool.mutmut]`` table of a variant."""
    selection = ["conformance/cases/"]
    if variant == "combined":
        selection += [test for test in IN_PROCESS_TESTS if (REPO / test).is_file()]
    lines = [
        "[tool.mutmut]",
        'source_paths = ["reference/"]',
        f"do_not_mutate = {DO_NOT_MUTATE!r}".replace("'", '"'),
        f"pytest_add_cli_args_test_selection = {selection!r}".replace("'", '"'),
        'also_copy = ["conformance/", "snapshots/", "SPEC.md"]',
        f"pytest_add_cli_args = {SUITE_ARGS!r}".replace("'", '"'),
    ]
    if only:
        lines.append(f"only_mutate = {only!r}".replace("'", '"'))
    return "\n".join(lines) + "\n"


def prepare(workdir: Path, variant: str, only: list[str]) -> Path:
    """A copy of the checkout whose pyproject.toml carries the variant's mutmut table."""
    work = workdir / variant
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(REPO, work, ignore=IGNORE)
    pyproject = work / "pyproject.toml"
    text = re.sub(r"\n\[tool\.mutmut\]\n(?:[^\[].*\n|\n)*", "\n", pyproject.read_text())
    pyproject.write_text(text.rstrip("\n") + "\n\n" + config(variant, only))
    return work


def results(work: Path) -> dict[str, str]:
    """Mutant name → status, from ``mutmut results --all true``."""
    done = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=work, capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = {}
    for line in done.stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name:
            found[name] = status
    return found


def equivalent() -> dict[str, str]:
    """Reviewed equivalent mutants: name → why it cannot be killed."""
    listed = {}
    if EQUIVALENT.is_file():
        for line in EQUIVALENT.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, _, why = line.partition(" ")
                listed[name] = why.strip()
    return listed


def module_of(name: str) -> str:
    """``reference.fs.local.x_write__mutmut_3`` → ``reference/fs/local.py`` (or a package's
    ``__init__.py``), the path ``--only`` takes."""
    path = name.split(".x", maxsplit=1)[0].replace(".", "/")
    return f"{path}/__init__.py" if (REPO / path).is_dir() else f"{path}.py"


def table(found: dict[str, str], listed: dict[str, str]) -> tuple[list[str], float]:
    """Per-module counts and the score."""
    per: dict[str, Counter[str]] = {}
    for name, status in found.items():
        kind = "equivalent" if name in listed and status != "killed" else status
        per.setdefault(module_of(name), Counter())[kind] += 1
    heads = ("killed", "timeout", "survived", "no tests", "equivalent")
    lines = [f"{'module':<34}{'mutants':>8}" + "".join(f"{h:>11}" for h in heads) + f"{'score':>8}"]
    total: Counter[str] = Counter()
    for module in sorted(per):
        counts = per[module]
        total.update(counts)
        lines.append(_row(module, counts, heads))
    lines.append(_row("total", total, heads))
    return lines, _score(total)


def _score(counts: Counter[str]) -> float:
    judged = sum(counts.values()) - counts["equivalent"]
    return (counts["killed"] + counts["timeout"]) / judged if judged else 1.0


def _row(name: str, counts: Counter[str], heads: tuple[str, ...]) -> str:
    cells = "".join(f"{counts[h]:>11}" for h in heads)
    return f"{name:<34}{sum(counts.values()):>8}{cells}{_score(counts):>8.1%}"


def main() -> int:
    """Run the variants and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", choices=["suite", "combined", "both"], default="both")
    parser.add_argument(
        "--only", action="append", default=[], metavar="PATTERN",
        help="mutate only these files (globs, e.g. reference/tools/remedy.py)",
    )  # fmt: skip
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mutation-"))
    listed = equivalent()
    variants = ["suite", "combined"] if args.variant == "both" else [args.variant]
    status = 0
    for variant in variants:
        work = prepare(workdir, variant, args.only)
        print(f"== {variant}: mutmut in {work}", flush=True)
        done = subprocess.run(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.max_children)],
            cwd=work, check=False,
        )  # fmt: skip
        status = status or done.returncode
        found = results(work)
        if found and all(state == "not checked" for state in found.values()):
            print(f"{variant}: mutmut checked no mutant (its clean run failed; see above)")
            status = 1
            continue
        lines, score = table(found, listed)
        print(f"\n{variant} score: {score:.1%} (killed or timed out, of all but the equivalent)")
        print("\n".join(lines))
        unexplained = sorted(
            n for n, s in found.items() if s not in {"killed", "timeout"} and n not in listed
        )
        print(f"\n{len(unexplained)} survivors not listed as equivalent (mutmut show NAME):")
        for name in unexplained:
            print(f"  {name}  [{found[name]}]")
        if variant == "combined":
            status = status or _review(found, listed, unexplained, score, partial=bool(args.only))
    return status


def _review(
    found: dict[str, str],
    listed: dict[str, str],
    unexplained: list[str],
    score: float,
    *,
    partial: bool,
) -> int:
    """The combined score's verdict: the target met, every survivor explained, the list current."""
    killed = sorted(n for n in listed if found.get(n) in {"killed", "timeout"})
    gone = sorted(n for n in listed if n not in found)
    if killed:
        print(f"\n{len(killed)} listed as equivalent but killed now (remove them from the list):")
        print("\n".join(f"  {name}" for name in killed))
    if gone and not partial:
        # Mutant names count the mutations of one function: after a change to it they shift.
        print(f"\n{len(gone)} listed names are no mutant any more (the function changed):")
        print("\n".join(f"  {name}" for name in gone))
    ok = score >= TARGET and not unexplained
    print(
        f"\ncombined: {score:.1%} against a target of {TARGET:.0%}; "
        f"{len(unexplained)} survivors unexplained: {'met' if ok else 'NOT MET'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
