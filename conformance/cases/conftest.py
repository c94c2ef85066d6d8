"""Fixtures shared by the conformance cases."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from conformance.client import Client, Session
from conformance.disk import Disk
from conformance.harness.contract import Json, JsonObject
from conformance.plugin import conformance_dir, discard_dir
from conformance.secrets import RunSecrets
from conformance.snapshots import ConformanceSnapshots, Transcript
from conformance.spec import Wording
from conformance.strategies import own_draws, register_profiles
from conformance.verdict import Judge
from conformance.watch import Watch

register_profiles()


@pytest.fixture(autouse=True)
def _own_draws() -> Iterator[None]:
    """A case's hypothesis examples follow its seed alone (``conformance.strategies.own_draws``)."""
    with own_draws():
        yield


@pytest.fixture(scope="session")
def client(conformance_client: Client) -> Client:
    """The harness under test, behind checked contract calls."""
    return conformance_client


@pytest.fixture
def secrets(client: Client) -> RunSecrets:
    """The secrets planted in the harness's environment for this run (SPEC §1.4)."""
    assert client.secrets is not None
    return client.secrets


@pytest.fixture
def judge(client: Client) -> Judge:
    """This case's judge (see ``conformance.verdict``)."""
    assert client.judge is not None, "the conformance plugin gives every case a judge"
    return client.judge


@pytest.fixture
def w(client: Client) -> Wording:
    """The wording in force: the spec's, or the harness's own wording table."""
    return client.wording


class CaseDirs:
    """``tmp_path_factory`` for the cases: directories under the run's base (``basetemp``)."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    def mktemp(self, name: str) -> Path:
        """A fresh directory named after ``name``."""
        return conformance_dir(self._config, name)


@pytest.fixture(scope="session")
def tmp_path_factory(pytestconfig: pytest.Config) -> CaseDirs:
    """Cases never use pytest's temp directory: it lies under the system temp directory,
    which a harness may grant as writable (SPEC {sandbox.temp-writable})."""
    return CaseDirs(pytestconfig)


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest) -> Iterator[Path]:
    """This case's own directory under the run's base, outside the system temp directory;
    removed (in the background) once the case is over."""
    mark = request.node.get_closest_marker("case")
    directory = conformance_dir(request.config, str(mark.args[0]) if mark else request.node.name)
    yield directory
    discard_dir(request.config, directory)


@pytest.fixture
def root(tmp_path: Path, client: Client) -> Path:
    """An empty workspace directory the suite owns, watched with everything around it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    extra = {}
    for label, directory in client.scratch.items():
        for stray in os.listdir(directory):  # a previous case already reported them
            path = directory / stray
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        extra[label] = directory
    client.watch = Watch(tmp_path, workspace, extra)
    client.wording.root = str(workspace)
    return workspace


@pytest.fixture
def disk(root: Path) -> Disk:
    """The workspace as the outside world changes it."""
    return Disk(root)


@pytest.fixture
def open_session(client: Client, root: Path) -> Iterator[Callable[..., Session]]:
    """Open sessions over the workspace (options as keywords); all closed afterwards."""
    opened: list[Session] = []

    def open_(workspace: Path | None = None, **options: Json) -> Session:
        session = client.open(str(workspace or root), **options)
        opened.append(session)
        return session

    yield open_
    for session in opened:
        session.close()


@pytest.fixture
def session(open_session: Callable[..., Session]) -> Session:
    """A guarded session (policy on, no sandbox fence) over the workspace."""
    return open_session()


@pytest.fixture
def transcript_snapshot(
    snapshot: SnapshotAssertion, request: pytest.FixtureRequest, client: Client
) -> Callable[[list[JsonObject], str], bool]:
    """Compare a session log with its pinned snapshot (normalized and scanned first)."""
    # Results without codes (no toolCodes) cannot carry the pinned transcripts' errors.
    ConformanceSnapshots.uncoded = not client.profile.has("toolCodes")
    module = Path(str(request.node.path)).stem
    where = f"{ConformanceSnapshots.directory / module}.ambr::{request.node.name}"
    # use_extension (not snapshot(extension_class=…)): syrupy must discover *this* directory,
    # or it could never report an obsolete snapshot there.
    pinned = snapshot.use_extension(ConformanceSnapshots)

    def check(records: list[JsonObject], workspace: str) -> bool:
        __tracebackhide__ = True  # its arguments are the log before the secret scan
        return bool(pinned == Transcript(records, os.fspath(workspace), where))

    return check
