"""Running the conformance suite from the project's own tests: in a subprocess, off the repo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_suite(
    *args: str, cwd: Path, env: dict[str, str] | None = None, profile: str = "default"
) -> subprocess.CompletedProcess[str]:
    """``python -m conformance`` on this checkout's sources, with a fast hypothesis profile."""
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    command = [sys.executable, "-m", "conformance", "-p", "no:cacheprovider"]
    command += ["--hypothesis-profile", profile, *args]
    return subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, check=False
    )


def run_pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Plain pytest with the plugin, for node-ID selections."""
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "conformance.plugin"]
    command += ["--hypothesis-profile", "default", "--rootdir", str(cwd), *args]
    return subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, check=False
    )


def report(path: Path) -> dict[str, object]:
    """A JSON report written by ``--conformance-report``."""
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


def outcomes(data: dict[str, object]) -> dict[str, str]:
    """Case ID → outcome."""
    cases = data["cases"]
    assert isinstance(cases, list)
    return {case["id"]: case["outcome"] for case in cases}
