"""A workspace session: defaults, checks, secrets (SPEC §1.4), the probe tools (§2.1c)."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import cast

import pytest

from reference import define_tool
from reference.workspace import Workspace
from tests.conftest import error_of, text_of

FS_TOOLS = ["read", "write", "edit"]
PROBE_DESCRIPTIONS = [
    ("probe_raise", "Raise an error of the given kind (conformance probe)."),
    ("probe_echo", "Return the validated arguments as compact JSON (conformance probe)."),
    ("probe_interrupt", "Raise KeyboardInterrupt, which must propagate (conformance probe)."),
]


def _exactly(message: str) -> str:
    """A ``match`` pattern for exactly ``message``."""
    return f"^{re.escape(message)}$"


def _write(ws: Workspace, path: str, content: str) -> tuple[str, tuple[str, str] | None]:
    result = ws.call_tool("write", {"file_path": path, "content": content})
    return text_of(result), error_of(result)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty workspace directory with room beside it."""
    path = tmp_path / "ws"
    path.mkdir()
    return path


def test_by_default_a_workspace_is_guarded_unfenced_and_without_probes(root: Path) -> None:
    (root / "a.txt").write_text("old\n")
    ws = Workspace(str(root))
    assert ws.sandbox == "danger-full-access"
    assert [spec["name"] for spec in ws.tool_specs()] == FS_TOOLS
    assert _write(ws, "a.txt", "new\n")[1] == ("FsError", "FS_NOT_OBSERVED")
    assert (root / "a.txt").read_text() == "old\n"
    assert _write(ws, "../beside.txt", "out\n")[1] is None
    assert (root.parent / "beside.txt").read_text() == "out\n"


def test_without_the_policy_an_unread_file_may_be_overwritten(root: Path) -> None:
    (root / "a.txt").write_text("old\n")
    ws = Workspace(str(root), policy=False)
    assert ws.policy is None
    assert _write(ws, "a.txt", "new\n")[1] is None
    assert (root / "a.txt").read_text() == "new\n"


@pytest.mark.parametrize("mode", ["read-only", "workspace-write", "danger-full-access"])
def test_a_workspace_tells_its_sandbox_mode(root: Path, mode: str) -> None:
    assert Workspace(str(root), sandbox=mode).sandbox == mode


@pytest.mark.parametrize(("value", "kind"), [(3, "int"), (b"/tmp", "bytes"), (None, "NoneType")])
def test_the_root_must_be_a_path(value: object, kind: str) -> None:
    with pytest.raises(TypeError, match=_exactly(f"workspace root must be a path, not {kind}")):
        Workspace(cast(str, value))


@pytest.mark.parametrize(("policy", "probe"), [("yes", False), (True, 1), (None, None), (0, True)])
def test_policy_and_probe_must_be_booleans(root: Path, policy: object, probe: object) -> None:
    with pytest.raises(TypeError, match=_exactly("policy and probe must be booleans")):
        Workspace(str(root), policy=cast(bool, policy), probe=cast(bool, probe))


# -- secrets ----------------------------------------------------------------------------------


def _fail_with(ws: Workspace, message: str) -> str:
    def fail(args: dict[str, object]) -> str:
        raise ValueError(message)

    ws.register(
        define_tool(name="fail", description="", parameters={"type": "object"}, execute=fail)
    )
    return text_of(ws.call_tool("fail", {}))


def test_protected_values_join_the_environment_secrets_longest_first(root: Path) -> None:
    ws = Workspace(str(root), environ={"API_TOKEN": "tok-12345678", "HOME": "/home/someone"})
    ws.protect(["zzzzzzzz", "azzzzzzzzz", ""])
    ws.protect(["key-abcdefgh"])
    text = "tok-12345678 azzzzzzzzz zzzzzzzz key-abcdefgh /home/someone"
    assert _fail_with(ws, text) == (
        "Error: [REDACTED] [REDACTED] [REDACTED] [REDACTED] /home/someone"
    )
    assert ws.redact("xazzzzzzzzzx") == "x[REDACTED]x"


def test_protecting_nothing_changes_nothing(root: Path) -> None:
    ws = Workspace(str(root), environ={})
    ws.protect([""])
    assert ws.redact("all of it stays") == "all of it stays"


# -- the probe tools --------------------------------------------------------------------------


def test_the_probe_tools_are_described_to_the_model(root: Path) -> None:
    specs = Workspace(str(root), probe=True).tool_specs()
    assert [spec["name"] for spec in specs] == FS_TOOLS + [name for name, _ in PROBE_DESCRIPTIONS]
    assert [(spec["name"], spec["description"]) for spec in specs[3:]] == PROBE_DESCRIPTIONS
    assert all(sorted(spec) == ["description", "name", "parameters"] for spec in specs)
    assert [cast(dict[str, object], spec["parameters"])["required"] for spec in specs[3:]] == [
        ["kind", "message"],
        ["todos"],
        ["message"],
    ]


def test_probe_echo_returns_unicode_as_is(root: Path) -> None:
    ws = Workspace(str(root), probe=True)
    arguments = {
        "todos": [{"title": "café ☕", "done": True}],
        "count": 2.0,
        "meta": {"tags": ["ü"]},
    }
    assert text_of(ws.call_tool("probe_echo", arguments)) == (
        '{"count":2,"meta":{"tags":["ü"]},"todos":[{"done":true,"title":"café ☕"}]}'
    )


def test_probe_interrupt_raises_its_message(root: Path) -> None:
    ws = Workspace(str(root), probe=True)
    with pytest.raises(KeyboardInterrupt) as raised:
        ws.call_tool("probe_interrupt", {"message": "stop now"})
    assert raised.value.args == ("stop now",)


@pytest.mark.parametrize(
    ("sandbox", "refused"),
    [
        ("danger-full-access", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        ("danger-full-access", {"file_path": "a.txt", "old_string": "x", "new_string": "x"}),
        ("danger-full-access", {"file_path": "a.txt"}),  # arguments the schema refuses
        ("workspace-write", {"file_path": "../out.txt", "content": "x\n"}),  # the fence
    ],
)
def test_a_mutation_refused_before_its_pause_point_disarms_it(
    root: Path, sandbox: str, refused: dict[str, str]
) -> None:
    # SPEC {pause.point}: the pause was for that mutation; the session's next one runs through.
    (root / "a.txt").write_text("one\n")
    ws = Workspace(str(root), sandbox=sandbox)
    fired: list[str] = []
    ws.arm_pause("checked", lambda: fired.append("checked"))
    tool = "write" if "content" in refused else "edit"
    assert ws.call_tool(tool, refused).is_error
    ws.call_tool("read", {"file_path": "a.txt"})
    assert _write(ws, "a.txt", "later\n")[1] is None
    assert fired == []


def test_a_read_between_keeps_the_pause_for_the_next_mutation(root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    ws = Workspace(str(root))
    fired: list[str] = []
    ws.arm_pause("checked", lambda: fired.append("checked"))
    ws.call_tool("read", {"file_path": "a.txt"})  # not a mutation: the pause is not its
    assert _write(ws, "a.txt", "later\n")[1] is None
    assert fired == ["checked"]


def test_a_mutation_that_must_wait_for_another_says_so_in_process(root: Path) -> None:
    # SPEC §6.4 `waiting`: the second writer of one directory reaches it while the first holds
    # the directory (paused after its checks); the first goes on once the second has said so.
    first, second = Workspace(str(root)), Workspace(str(root))
    said: list[str] = []
    waits = threading.Event()
    answers: list[tuple[str, tuple[str, str] | None]] = []
    worker = threading.Thread(target=lambda: answers.append(_write(second, "b.txt", "b\n")))

    def meanwhile() -> None:
        worker.start()
        assert waits.wait(60), "the second write never said it waits"  # a hang, not a timing

    def on_waiting() -> None:
        said.append("waiting")
        waits.set()

    first.arm_pause("checked", meanwhile)
    second.arm_pause("waiting", on_waiting)
    assert _write(first, "a.txt", "a\n")[1] is None
    worker.join()
    assert said == ["waiting"]
    assert [error for _, error in answers] == [None]
    assert (root / "b.txt").read_text() == "b\n"
