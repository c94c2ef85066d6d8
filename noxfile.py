"""Every check the project runs: ``nox`` runs the default sessions, as CI does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint", "typecheck", "conformance", "node"]
nox.options.error_on_missing_interpreters = True

PYPROJECT = nox.project.load_toml("pyproject.toml")
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _runs(version: str) -> bool:
    """Whether ``python<version>`` on PATH runs (a pyenv shim of an inactive version does not)."""
    found = shutil.which(f"python{version}")
    if found is None:
        return False
    return subprocess.run([found, "-c", ""], capture_output=True, check=False).returncode == 0


# Every supported Python found on PATH; a newcomer's machine may have only one, CI has them all.
FOUND = [v for v in ("3.11", "3.12", "3.13") if _runs(v)]
PYTHONS: list[str] | None = FOUND or None  # None: the Python running nox


def _group(name: str) -> tuple[str, ...]:
    return nox.project.dependency_groups(PYPROJECT, name)


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The project's own tests (``tests/``), on every Python of 3.11–3.13 present."""
    if CI and len(FOUND) < 2:
        session.error(f"CI tests on at least two of Python 3.11–3.13; found {FOUND} on PATH")
    session.install(".", *_group("test"))
    # The tests marked `once` run the whole suite against each harness of tests/mutants/ and the
    # implementer example under nox: what they judge (verdicts, root causes, an implementer's
    # CI) is the same on every Python, and the suite's own runs on each Python are the other
    # tests'. They run on the newest Python found, so `nox` stays within its 30 minutes;
    # `pytest` alone runs them all.
    once = [] if session.python in (None, FOUND[-1] if FOUND else None) else ["-m", "not once"]
    session.run("python", "-m", "pytest", "-n", "2", *once, *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install(*_group("lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the code, the tests, the benches and the implementer's example."""
    session.install(".", *_group("typecheck"))
    session.run(
        "mypy", "--strict", "reference", "conformance", "tests", "docs", "bench", "noxfile.py"
    )
    # The example is its own project (its noxfile would clash with ours in one mypy run).
    session.chdir("examples/implementer")
    session.run("mypy", "--strict", "acme_harness", "noxfile.py", env={"MYPYPATH": str(Path.cwd())})


@nox.session
def conformance(session: nox.Session) -> None:
    """The installed suite against the reference, answers validated; then unprivileged (PRV-012).

    Run from outside the checkout; the second run is in a user namespace, where the harness is
    not root for file checks, so the permission case runs instead of skipping.
    """
    session.install(".")
    session.chdir(session.create_tmp())
    session.run("python", "-m", "conformance", "--conformance-validate", *session.posargs)
    if session.posargs:
        return
    if not _can_unshare():
        if CI:
            session.error("`unshare -U` is not available: the permission case cannot run")
        session.warn("`unshare -U` is not available here: the permission case (PRV-012) skips")
        return
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        os.chmod(tmp, 0o777)  # the unprivileged run writes its report here
        session.run(
            "unshare", "-U", "python", "-m", "conformance", "-q",
            "--conformance-report", str(report), external=True,
        )  # fmt: skip
        cases = json.loads(report.read_text(encoding="utf-8"))["cases"]
    permission = [c["outcome"] for c in cases if c["id"] == "PRV-012"]
    if permission != ["passed"]:
        session.error(f"PRV-012 did not run as an unprivileged user: {permission}")
    session.log("PRV-012 (permission denied) passed with the harness as an unprivileged user")


def _can_unshare() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-U", "true"], capture_output=True, check=False)
    return probe.returncode == 0


@nox.session(venv_backend="none")
def node(session: nox.Session) -> None:
    """The Node kit's own tests (``node --test``); the suite drives its example from ``tests``."""
    if shutil.which("node") is None:
        if CI:
            session.error("node is not on PATH (.ci/run installs it)")
        session.skip("node is not on PATH: the Node kit is not tested here (install Node ≥ 20)")
    session.chdir("adapters/node")
    session.run("node", "--test", external=True)


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


@nox.session(venv_backend="venv")
def peers(session: nox.Session) -> None:
    """Real harnesses side by side (long): install each pinned peer, run, write docs/peers/.

    Each peer gets an environment of its own under peers/.envs/ (a venv with the Python it needs,
    an npm folder), outside git; the suite runs from this session's venv, which needs the MCP
    bridge. ``nox -s peers -- --only deepagents`` runs one peer (and writes the pages again).
    """
    if shutil.which("node") is None:
        session.error(
            "node is not on PATH: three of the peers are Node packages (install Node ≥ 20)"
        )
    session.install(".[mcp]")
    session.run("python", "-m", "peers", *session.posargs)


@nox.session
def mutation(session: nox.Session) -> None:
    """Mutation score of the reference: the suite alone, and with tests/ (long: about an hour)."""
    # Not the project itself: mutmut imports the mutated copy, which an install would shadow.
    session.install(*_group("test"), *_group("mutation"))
    session.run("python", "bench/mutation.py", *session.posargs)


@nox.session
def determinism(session: nox.Session) -> None:
    """Ten runs against the reference and each tests/mutants harness give identical verdicts."""
    session.install(".", *_group("test"))
    session.run("python", "bench/determinism.py", *session.posargs)


@nox.session
def stress(session: nox.Session) -> None:
    """Reliability at stress counts, on demand only: sandbox races, CAS, SIGKILL, faults."""
    session.install(".")
    session.run("python", "bench/stress_reliability.py", *session.posargs)
