"""Take the README's sample output from real runs, so it cannot drift from the code.

Run from the checkout: ``python docs/make_readme_sample.py`` prints the samples;
``--write`` replaces them in README.md and in the pages of ``PAGES`` (between
``<!-- sample:NAME -->`` and ``<!-- /sample -->``). ``tests/test_readme.py`` checks that the
README's samples are what this script produces, durations aside, and that a page shows the
README's.

* ``reference`` — the summary of a default run against the reference harness;
* ``failure`` — the failed-case line of a harness that writes in place
  (``tests.fixtures.non_atomic``);
* ``causes`` — the root-cause summary of a harness with two defects in ``edit``
  (``tests.fixtures.edit_two_defects``), each case list cut after three IDs (``[… N more]``:
  the run prints them all);
* ``matrix`` — the terminal summary (``matrix --format text``) of three committed behaviour
  reports of ``docs/peers/``, its rows per area left out.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parent.parent
README: Final = REPO / "README.md"
PAGES: Final = (REPO / "docs" / "root-causes.md",)
"""Pages of ``docs/`` that show one of the README's samples too."""
MARK: Final = re.compile(
    r"(<!-- sample:(?P<name>[a-z]+) -->\n```\n)(?P<body>.*?)(```\n<!-- /sample -->)", re.S
)
RUNS: Final = {
    "reference": [],
    "failure": ["--harness", "tests.fixtures.non_atomic:harness", "--conformance-case", "PUB-001"],
    "causes": ["--harness", "tests.fixtures.edit_two_defects:harness"],
}
PEERS: Final = REPO / "docs" / "peers"
SHOWN_PEERS: Final = ("reference", "deepagents", "fast_fs")
"""The control and one peer of each language: the README shows the summary's top rows for them."""
RUNS["matrix"] = ["matrix", *(str(PEERS / f"{name}.behaviour.json") for name in SHOWN_PEERS),
                  "--format", "text"]  # fmt: skip
SHOWN_ROWS: Final = ("area ", "-", "capabilities ", "level ", "all areas ", "root causes ", "✓ ")
SHOWN_CASES: Final = 3  # a root cause's case list is cut after this many in the README


def _run(args: list[str]) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        env = {k: v for k, v in env.items() if not k.startswith(("PYTEST_XDIST_", "CI"))}
        options = [] if args[:1] == ["matrix"] else ["-p", "no:cacheprovider",
                                                     "--hypothesis-profile", "default"]  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "conformance", *options, *args],
            cwd=scratch, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
    return done.stdout


def sample(name: str) -> str:
    """One sample, as the README shows it."""
    out = _run(RUNS[name])
    if name == "matrix":
        return "".join(line + "\n" for line in out.splitlines() if line.startswith(SHOWN_ROWS))
    if name == "failure":
        lines = out.splitlines()
        at = lines.index("failed cases:")
        return lines[at + 1].strip() + "\n"
    if name == "causes":
        lines = out[out.index("root causes: ") :].split("\n\n")[0].splitlines()
        return "".join(_cut(line) + "\n" for line in lines)
    start = out.rindex("\n", 0, out.index(" harness conformance ===")) + 1
    body = out[start:]
    return body[: body.index("\nduration: ") + 1] + re.search(r"duration: .*\n", body)[0]  # type: ignore[index]


def _cut(line: str) -> str:
    """A root cause's line with its case list cut after ``SHOWN_CASES`` IDs."""
    head, sep, listed = line.rpartition(" — ")
    ids = listed.split(", ")
    if not sep or len(ids) <= SHOWN_CASES:
        return line
    return f"{head} — {', '.join(ids[:SHOWN_CASES])} [… {len(ids) - SHOWN_CASES} more]"


def samples() -> dict[str, str]:
    """Every sample the README carries."""
    return {name: sample(name) for name in RUNS}


def documented(text: str) -> dict[str, str]:
    """The samples a README text carries."""
    return {m["name"]: m["body"] for m in MARK.finditer(text)}


def normalized(text: str) -> str:
    """A sample without what differs from run to run or from machine to machine.

    Durations vary; so does the one case that needs file permissions enforced (skipped as root,
    run as a normal user), so skips are counted with passes for the comparison.
    """
    text = re.sub(r"\d+\.\d+ s\b", "N s", text)
    rows = []
    for line in text.splitlines():
        cells = re.match(r"^(\S.{18})((?:\s+\d+){6})(\s+\d+/\d+\s+\S+)$", line)
        if cells:
            numbers = [int(n) for n in cells[2].split()]
            numbers[0] += numbers[4]
            numbers[4] = 0
            rows.append(cells[1] + "".join(f"{n:>8}" for n in numbers) + cells[3])
        else:
            rows.append(line)
    return "\n".join(rows)


def main() -> None:
    """Print the samples, or write them into README.md and the pages that show them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--write", action="store_true", help="replace the samples in README.md and docs/"
    )
    args = parser.parse_args()
    made = samples()
    if not args.write:
        for name, body in made.items():
            print(f"<!-- sample:{name} -->\n```\n{body}```\n<!-- /sample -->")
        return
    for page in (README, *PAGES):
        text = page.read_text(encoding="utf-8")
        page.write_text(MARK.sub(lambda m: m[1] + made[m["name"]] + m[4], text), encoding="utf-8")


if __name__ == "__main__":
    main()
