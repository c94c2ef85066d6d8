"""Install every peer at its pinned version, run the suite against it, write ``docs/peers/``.

    python -m peers [--only NAME …] [--no-install] [--out docs/peers]

Each peer gets an environment of its own under ``peers/.envs/<folder>`` (a venv with the Python
it needs, or an npm folder), made once and reused while its pinned packages stay the same. The
suite runs against each at the behaviour level (recording the harness's answers, the trace the
project's tests replay) and at the default level (behaviour, then the spec's wording, which
peers do not share: wording failures need no triage). The reference and the Node kit's example
run too, as controls. Then the JSON reports, the HTML matrices and the Markdown page are written.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from peers.manifest import PEERS_DIR, Manifest, ManifestError, folders, load

REPO: Final = PEERS_DIR.parent
ENVS: Final = PEERS_DIR / ".envs"
LEVELS: Final = ("behaviour", "all")
_MARKER: Final = ".peers-installed"


@dataclass(frozen=True)
class Target:
    """One column of the comparison: a peer or a control, and the suite options that reach it."""

    key: str
    args: tuple[str, ...]
    manifest: Manifest | None = None
    timeout_s: float | None = None


CONTROLS: Final = (
    Target("reference", ()),
    Target("node-example", ("--harness-cmd", f"node {REPO / 'adapters/node/example/harness.mjs'}")),
)


def env_of(manifest: Manifest) -> Path:
    """Where the peer's own environment lives (gitignored)."""
    return ENVS / manifest.folder


def install(manifest: Manifest) -> None:
    """Install the pinned packages into the peer's environment, unless they already are."""
    env = env_of(manifest)
    wanted = json.dumps(sorted(manifest.packages))
    marker = env / _MARKER
    if marker.is_file() and marker.read_text(encoding="utf-8") == wanted:
        print(f"{manifest.folder}: {', '.join(manifest.packages)} already installed in {env}")
        return
    if env.exists():
        shutil.rmtree(env)
    env.parent.mkdir(parents=True, exist_ok=True)
    for command in manifest.install_command(str(env)):
        print(f"{manifest.folder}: {' '.join(command)}", flush=True)
        if manifest.runtime == "node":
            env.mkdir(parents=True, exist_ok=True)
        subprocess.run(command, check=True, cwd=REPO)
    marker.write_text(wanted, encoding="utf-8")


def target_of(manifest: Manifest) -> Target:
    """The suite options that reach the peer through its adapter (or the MCP bridge)."""
    env = env_of(manifest)
    command = manifest.command.format(
        python=env / "bin" / "python", env=env, peer=manifest.directory, root="{root}"
    )
    if manifest.transport == "mcp":
        assert manifest.mapping is not None
        mapping = str(manifest.directory / manifest.mapping)
        args: tuple[str, ...] = ("--harness-mcp", command, "--harness-mcp-map", mapping)
    else:
        args = ("--harness-cmd", command)
    return Target(manifest.folder, args, manifest, manifest.timeout_s)


def run_suite(target: Target, level: str, report: Path, trace: Path | None) -> float:
    """One run of the suite; returns its wall time. A run that writes no report stops everything."""
    command = [sys.executable, "-m", "conformance", "-q", "-p", "no:randomly", *target.args]
    command += ["--conformance-level", level, "--conformance-report", str(report)]
    if target.timeout_s is not None:
        command += ["--conformance-timeout", f"{target.timeout_s:g}"]
    if trace is not None:
        command += ["--conformance-trace", str(trace)]
    started = time.monotonic()
    # A harness that fails cases exits 1; only a missing report means the run itself broke.
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    took = time.monotonic() - started
    if not report.is_file():
        raise SystemExit(f"{target.key} ({level}) wrote no report:\n{done.stdout}{done.stderr}")
    print(f"{target.key} ({level}): exit {done.returncode} in {took:.0f} s", flush=True)
    return took


def record_trace(raw: Path, into: Path) -> None:
    """Keep the trace compressed in the peer's folder (the tests replay it)."""
    # mtime 0: the same trace always gives the same bytes, so git sees only real changes.
    with (
        raw.open("rb") as source,
        into.open("wb") as sink,
        gzip.GzipFile(fileobj=sink, mode="wb", compresslevel=9, mtime=0) as out,
    ):
        shutil.copyfileobj(source, out)


def main(argv: Sequence[str] | None = None) -> int:
    """Install, run, write; returns the exit status (0 even when peers fail cases)."""
    parser = argparse.ArgumentParser(prog="python -m peers", description=__doc__)
    parser.add_argument(
        "--only", action="append", default=[], help="one peer folder or control (repeatable)"
    )
    parser.add_argument(
        "--no-install", action="store_true", help="use the environments as they are"
    )
    parser.add_argument(
        "--pages-only", action="store_true", help="only write the pages from the reports there are"
    )
    parser.add_argument("--out", default=str(REPO / "docs" / "peers"), help="where to write")
    options = parser.parse_args(argv)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    controls = [c for c in CONTROLS if not options.only or c.key in options.only]
    chosen = [f for f in folders() if not options.only or f in options.only]
    unknown = set(options.only) - {c.key for c in CONTROLS} - set(folders())
    if unknown:
        parser.error(f"no peer or control named {', '.join(sorted(unknown))}")
    manifests = [] if options.pages_only else [load(folder) for folder in chosen]
    if options.pages_only:
        controls = []
    targets = list(controls)
    for manifest in manifests:
        if not options.no_install:
            try:
                install(manifest)
            except (ManifestError, subprocess.CalledProcessError) as exc:
                raise SystemExit(f"python -m peers: {exc}") from None
        targets.append(target_of(manifest))
    timings = _load_timings(out)
    with tempfile.TemporaryDirectory(prefix="peers-") as scratch:
        for target in targets:
            for level in LEVELS:
                trace = None
                if target.manifest is not None and level == "behaviour":
                    trace = Path(scratch) / f"{target.key}.jsonl"
                report = out / f"{target.key}.{level}.json"
                timings[f"{target.key}.{level}"] = round(run_suite(target, level, report, trace), 1)
                if trace is not None:
                    record_trace(trace, PEERS_DIR / target.key / "trace.jsonl.gz")
                (out / "timings.json").write_text(
                    json.dumps(timings, indent=2, sort_keys=True) + "\n"
                )
    from peers.page import screenshot, write_pages  # noqa: PLC0415 - on what the runs wrote

    write_pages(out)
    shot = screenshot(out)
    print(f"wrote {out}" + ("" if shot else " (no chromium: matrix.png not renewed)"))
    return 0


def _load_timings(out: Path) -> dict[str, float]:
    path = out / "timings.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): float(v) for k, v in data.items()}


if __name__ == "__main__":
    os.chdir(REPO)
    sys.exit(main())
