"""A peer's ``manifest.toml``: what the harness is, how it is installed and run, what it declares.

Every declared option carries its reason, so the page can say why a case does not apply. The
adapters read their ``describe`` answer from here, so the manifest and the harness's handshake
can never disagree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

PEERS_DIR: Final = Path(__file__).parent
RUNTIMES: Final = ("python3.11", "python3.12", "python3.13", "node")
TRANSPORTS: Final = ("cmd", "mcp")
_KEYS: Final = {"name", "language", "registry", "package", "version", "summary", "install", "run",
                "describe"}  # fmt: skip


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Option:
    """One declared option and why it is declared so."""

    name: str
    value: Any
    reason: str


@dataclass(frozen=True)
class Manifest:
    """One peer harness."""

    folder: str
    name: str
    language: str
    registry: str
    package: str
    version: str
    summary: str
    runtime: str
    packages: tuple[str, ...]
    transport: str
    command: str
    mapping: str | None
    timeout_s: float
    timeout_reason: str
    capabilities: tuple[str, ...]
    paths: str
    options: tuple[Option, ...]

    @property
    def directory(self) -> Path:
        """The peer's folder."""
        return PEERS_DIR / self.folder

    def describe(self) -> dict[str, Any]:
        """The ``describe`` answer the adapter gives (SPEC §6.2)."""
        return {
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "capabilities": list(self.capabilities),
            "options": {option.name: option.value for option in self.options},
            "paths": self.paths,
        }

    def install_command(self, env: str) -> list[list[str]]:
        """The commands that install the pinned package into the environment ``env``."""
        if self.runtime == "node":
            return [["npm", "install", "--prefix", env, "--no-audit", "--no-fund", "--silent",
                     *self.packages]]  # fmt: skip
        return [
            [find_python(self.runtime, self.folder), "-m", "venv", env],
            [f"{env}/bin/pip", "install", "-q", *self.packages],
        ]


def find_python(runtime: str, folder: str, pyenv_root: Path | None = None) -> str:
    """The ``python3.X`` that runs: on PATH, else pyenv's own (its shim of an inactive version
    does not run); ``ManifestError`` in one line naming the peer when there is none."""
    candidates = [shutil.which(runtime)]
    root = pyenv_root or Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    version = runtime.removeprefix("python")
    candidates += [str(path) for path in sorted(root.glob(f"versions/{version}.*/bin/{runtime}"))]
    for candidate in candidates:
        if candidate and subprocess.run([candidate, "-c", ""], capture_output=True,
                                        check=False).returncode == 0:  # fmt: skip
            return candidate
    raise ManifestError(
        f"peers/{folder}: needs {runtime}, which is neither on PATH nor under {root}/versions "
        f"(install Python {version}, or put its bin/ on PATH)"
    )


def load(folder: str) -> Manifest:
    """The manifest of ``peers/<folder>/``; raise ``ManifestError`` naming what is wrong."""
    path = PEERS_DIR / folder / "manifest.toml"
    where = f"peers/{folder}/manifest.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(f"{where}: cannot be read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{where}: not TOML: {exc}") from None
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ManifestError(f"{where}: unknown key {', '.join(unknown)}")
    try:
        install, run, describe = data["install"], data["run"], data["describe"]
        options = tuple(
            Option(name, entry["value"], str(entry["reason"]))
            for name, entry in describe["options"].items()
        )
        manifest = Manifest(
            folder=folder,
            name=str(data["name"]),
            language=str(data["language"]),
            registry=str(data["registry"]),
            package=str(data["package"]),
            version=str(data["version"]),
            summary=str(data["summary"]),
            runtime=str(install["runtime"]),
            packages=tuple(str(p) for p in install["packages"]),
            transport=str(run["transport"]),
            command=str(run["command"]),
            mapping=run.get("mapping"),
            timeout_s=float(run["timeout"]),
            timeout_reason=str(run["timeout_reason"]),
            capabilities=tuple(str(c) for c in describe["capabilities"]),
            paths=str(describe["paths"]),
            options=options,
        )
    except (KeyError, TypeError) as exc:
        raise ManifestError(f"{where}: missing or malformed {exc}") from None
    if manifest.runtime not in RUNTIMES:
        raise ManifestError(f"{where}: runtime {manifest.runtime!r} is not one of {RUNTIMES}")
    if manifest.transport not in TRANSPORTS:
        raise ManifestError(f"{where}: transport {manifest.transport!r} is not one of {TRANSPORTS}")
    if not any(manifest.version in p for p in manifest.packages):
        raise ManifestError(f"{where}: no package is pinned at version {manifest.version}")
    if any(not option.reason.strip() for option in manifest.options):
        raise ManifestError(f"{where}: every option needs its reason")
    return manifest


def folders() -> list[str]:
    """Every peer folder (one with a manifest), in name order."""
    return sorted(p.parent.name for p in PEERS_DIR.glob("*/manifest.toml"))
