"""Fixtures shared by the conformance cases."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from conformance.client import Client, Session
from conformance.contract import Json, JsonObject, NativeHarness
from conformance.disk import Disk
from conformance.snapshots import ConformanceSnapshots, Transcript
from conformance.strategies import register_profiles

register_profiles()


@pytest.fixture(scope="session")
def client(conformance_client: Client) -> Client:
    """The harness under test, behind checked contract calls."""
    return conformance_client


@pytest.fixture(scope="session")
def native(conformance_client: Client) -> NativeHarness:
    """The optional native layer; cases that need it skip for harnesses without one."""
    if conformance_client.native is None:
        pytest.skip("the harness has no native layer (Python object hand-over)")
    return conformance_client.native


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty workspace directory the suite owns."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
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
    snapshot: SnapshotAssertion, request: pytest.FixtureRequest
) -> Callable[[list[JsonObject], str], None]:
    """Compare a session log with its pinned snapshot (normalized and scanned first)."""
    module = Path(str(request.node.path)).stem
    where = f"{ConformanceSnapshots.directory / module}.ambr::{request.node.name}"
    # use_extension (not snapshot(extension_class=…)): syrupy must discover *this* directory,
    # or it could never report an obsolete snapshot there.
    pinned = snapshot.use_extension(ConformanceSnapshots)

    def check(records: list[JsonObject], workspace: str) -> None:
        __tracebackhide__ = True  # its arguments are the log before the secret scan
        assert pinned == Transcript(records, os.fspath(workspace), where)

    return check
