"""The wheel is ready to publish: its license, classifiers, and the files a run needs."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from tests.suite import REPO


def test_the_wheel_carries_the_license_classifiers_and_run_ini(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("harness_conformance-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (license_name,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert "harness-conformance maintainers" in archive.read(license_name).decode()
        assert archive.read(license_name).decode().startswith("MIT License\n\nCopyright (c) 2026")
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    assert "conformance/run.ini" in names
    assert "License-Expression: MIT" in text
    for classifier in ("Programming Language :: Python :: 3.11",
                       "Programming Language :: Python :: 3.12",
                       "Programming Language :: Python :: 3.13", "Operating System :: POSIX"):  # fmt: skip
        assert f"Classifier: {classifier}\n" in text
    assert "Operating System :: OS Independent" not in text
