"""Regenerate docs/matrix.png: the HTML matrix of three real runs, as headless Chromium shows it.

The runs are the suite against the reference harness, against the tools-only fixture (with its
own wording) and against the non-atomic fixture (which really fails four publication cases), one
after another, each in a scratch directory. The picture opens the first failed cell's
``<details>``, as one click in the page would, so it shows a verdict and the calls behind it.

    python docs/make_matrix_screenshot.py [--html matrix.html] [--output docs/matrix.png]

Needs ``chromium`` (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a file from anywhere, on this checkout's sources

from conformance.report.matrix import write  # noqa: E402

# (report file, harness arguments); the order is the order of the columns.
RUNS = (
    ("reference.json", ()),
    (
        "tools_only.json",
        (
            "--harness",
            "tests.fixtures.tools_only:harness",
            "--conformance-wording",
            str(REPO / "tests" / "fixtures" / "tools_only.toml"),
        ),
    ),
    ("non_atomic.json", ("--harness", "tests.fixtures.non_atomic:harness")),
)
# Tall enough to reach the publication area with one failed cell open.
WINDOW = "1280,1500"


def run_suite(workdir: Path, report: str, harness: tuple[str, ...]) -> Path:
    """One run of the suite, writing its JSON report into ``workdir``."""
    path = workdir / report
    command = [sys.executable, "-m", "conformance", "-q", "-p", "no:cacheprovider"]
    command += [*harness, "--conformance-report", str(path)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # A harness that fails cases exits 1; only a missing report means the run itself broke.
    done = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, check=False
    )
    if not path.exists():
        raise SystemExit(f"{' '.join(command)} wrote no report:\n{done.stdout}{done.stderr}")
    print(f"{report}: exit {done.returncode}")
    return path


def open_first_failure(page: str) -> str:
    """The page with the first failed cell's details open."""
    marker = '<td class="cell o-failed"'
    at = page.find(marker)
    if at < 0:
        return page
    details = page.index("<details>", at)
    return page[:details] + "<details open>" + page[details + len("<details>") :]


def screenshot(html: Path, png: Path, profile: Path) -> None:
    """Render ``html`` to ``png`` with headless Chromium, off the network."""
    browser = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(browser).exists():
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--hide-scrollbars", "--force-device-scale-factor=1",
         f"--user-data-dir={profile}", f"--screenshot={png}", f"--window-size={WINDOW}",
         html.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def main() -> None:
    """Run the three harnesses, render their matrix and screenshot it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(REPO / "docs" / "matrix.png"))
    parser.add_argument("--html", help="also keep the matrix page here (as generated)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="matrix-shot-") as scratch:
        workdir = Path(scratch)
        reports = [str(run_suite(workdir, name, harness)) for name, harness in RUNS]
        page = workdir / "matrix.html"
        write(reports, str(page))
        if args.html:
            shutil.copyfile(page, args.html)
        shown = workdir / "shown.html"
        shown.write_text(open_first_failure(page.read_text(encoding="utf-8")), encoding="utf-8")
        screenshot(shown, Path(args.output).resolve(), workdir / "profile")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
