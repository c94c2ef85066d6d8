"""ACME's conformance checks, as the team runs them locally and in CI.

* ``nox -s conformance`` — the suite against ACME's harness: behaviour and wording (ACME's own
  texts from conformance-wording.toml, ACME's own pinned transcripts in conformance-snapshots/),
  known failures from conformance-baseline.json; writes JSON, JUnit and Markdown reports to
  reports/.
* ``nox -s repin`` — after an intentional wording change: pins the transcripts again, printing
  every model-visible string that changed, old → new, so the change is reviewed as a diff.
* ``nox -s baseline`` — writes the baseline again from the last report (after fixing a defect).

The suite is installed from HARNESS_CONFORMANCE_SOURCE (a checkout, a wheel or a ``git+`` URL;
the workflow sets it to the suite's repository), or else from the harness-conformance checkout
this example lives in, so ``nox`` works here as shipped. It is looked for only when a session
installs, so ``nox -l`` works anywhere.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import tomllib
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["conformance"]


def _suite() -> str | None:
    """Where the suite is installed from (see the module docstring); None when nowhere."""
    given = os.environ.get("HARNESS_CONFORMANCE_SOURCE")
    if given:
        return given
    for directory in Path(__file__).resolve().parents:
        project = directory / "pyproject.toml"
        if project.is_file():
            name = tomllib.loads(project.read_text(encoding="utf-8")).get("project", {}).get("name")
            if name == "harness-conformance":
                return str(directory)
    return None


HARNESS = "acme_harness.conformance:AcmeHarness"
OWN = [
    "--conformance-wording",
    "conformance-wording.toml",
    "--conformance-snapshots",
    "conformance-snapshots",
    # One profile everywhere: under CI=true the suite would switch to `ci` (more examples), and
    # a property that finds a known defect only there would make the baseline differ by machine.
    "--hypothesis-profile",
    "default",
]


def _install(session: nox.Session) -> None:
    suite = _suite()
    if suite is None:
        session.error(
            "harness-conformance is not on a package index yet: set HARNESS_CONFORMANCE_SOURCE "
            "to a checkout of it, a wheel, or git+https://… of its repository"
        )
    session.install(suite)
    # Editable: the session always tests the working tree, also in a reused virtualenv.
    session.install("-e", ".")


@nox.session
def conformance(session: nox.Session) -> None:
    """The conformance suite against ACME's harness, with the team's baseline."""
    _install(session)
    Path("reports").mkdir(exist_ok=True)
    session.run(
        "python", "-m", "conformance", "--harness", HARNESS, *OWN,
        "--conformance-baseline", "conformance-baseline.json",
        "--conformance-report", "reports/conformance.json",
        "--conformance-report-md", "reports/summary.md",
        "--junitxml", "reports/junit.xml",
    )  # fmt: skip


@nox.session
def repin(session: nox.Session) -> None:
    """Pin ACME's transcripts again after an intentional wording change; show old → new."""
    _install(session)
    with tempfile.TemporaryDirectory() as scratch:
        fresh = Path(scratch) / "snapshots"
        shutil.copytree("conformance-snapshots", fresh)
        session.run(
            "python", "-m", "conformance", "--harness", HARNESS, "-q", "-k", "SCN",
            "--conformance-wording", "conformance-wording.toml",
            "--conformance-snapshots", str(fresh), "--snapshot-update",
        )  # fmt: skip
        session.run("python", "-m", "conformance.snapshots", "diff", "conformance-snapshots",
                    str(fresh), success_codes=[0, 1])  # fmt: skip
        shutil.rmtree("conformance-snapshots")
        shutil.copytree(fresh, "conformance-snapshots")
    session.log("conformance-snapshots/ re-pinned: review `git diff conformance-snapshots/`")


@nox.session
def baseline(session: nox.Session) -> None:
    """Write conformance-baseline.json again from the last report (``nox -s conformance``).

    The committed baseline is replaced only by a whole new one: without a report, or if the
    command fails, it stays as it was and the reason is printed.
    """
    _install(session)  # first: a session that stops early must not leave its venv without it
    report = Path("reports/conformance.json")
    if not report.is_file():
        session.error(f"no {report} yet: run `nox -s conformance` first, then this again")
    with tempfile.TemporaryDirectory() as scratch:
        fresh = Path(scratch) / "conformance-baseline.json"
        with fresh.open("w", encoding="utf-8") as out:
            session.run("python", "-m", "conformance", "baseline", str(report), stdout=out,
                        stderr=None)  # fmt: skip
        shutil.copyfile(fresh, "conformance-baseline.json")
