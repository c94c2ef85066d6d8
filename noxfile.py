"""Every check the project runs: ``nox`` runs the default sessions, as CI does."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.error_on_missing_interpreters = True

PYPROJECT = nox.project.load_toml("pyproject.toml")


def _group(name: str) -> tuple[str, ...]:
    return nox.project.dependency_groups(PYPROJECT, name)


@nox.session
def tests(session: nox.Session) -> None:
    """The project's own tests (``tests/``), against the installed package."""
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
    session.run("mypy", "--strict", "reference", "tests", "noxfile.py", "bench")
