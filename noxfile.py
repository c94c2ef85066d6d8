"""Every check the project runs: ``nox`` runs the default sessions, as CI does."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint", "typecheck", "conformance"]
nox.options.error_on_missing_interpreters = True

PYPROJECT = nox.project.load_toml("pyproject.toml")


def _group(name: str) -> tuple[str, ...]:
    return nox.project.dependency_groups(PYPROJECT, name)


@nox.session
def tests(session: nox.Session) -> None:
    """The project's own tests (``tests/``), including the mutants the suite must catch."""
    session.install(".", *_group("test"))
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install(*_group("lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the code and the tests."""
    session.install(".", *_group("typecheck"))
    session.run("mypy", "--strict", "reference", "conformance", "tests", "noxfile.py", "bench")


@nox.session
def conformance(session: nox.Session) -> None:
    """The installed suite against the reference harness, run from outside the checkout."""
    session.install(".")
    session.chdir(session.create_tmp())
    session.run("python", "-m", "conformance", *session.posargs)


@nox.session
def snapshots(session: nox.Session) -> None:
    """After a deliberate wording change: show each changed model-visible string, then rewrite."""
    session.install(".")
    with tempfile.TemporaryDirectory() as tmp:
        fresh, report = Path(tmp) / "snapshots", Path(tmp) / "report.json"
        session.run(
            "python", "-m", "conformance", "-q", "--conformance-report", str(report),
            "--conformance-snapshots", str(fresh), "--snapshot-update",
            success_codes=[0, 1],
        )  # fmt: skip
        session.run(
            "python", "-m", "conformance.snapshots", "diff", "snapshots", str(fresh),
            success_codes=[0, 1],
        )  # fmt: skip
        shutil.rmtree("snapshots")
        shutil.copytree(fresh, "snapshots")
        cases = json.loads(report.read_text(encoding="utf-8"))["cases"]
    session.log("snapshots/ rewritten; review the diff above and `git diff snapshots/`")
    failed = [c["id"] for c in cases if c["outcome"] == "failed" and not c["id"].startswith("SCN")]
    if failed:
        session.warn(
            f"cases that pin wording outside the snapshots failed: {', '.join(failed)}; "
            "a deliberate change also goes into SPEC.md and conformance/spec.py"
        )


@nox.session
def stress(session: nox.Session) -> None:
    """Reliability at stress counts, on demand only: sandbox races, CAS, SIGKILL, faults."""
    session.install(".")
    session.run("python", "bench/stress_reliability.py", *session.posargs)
