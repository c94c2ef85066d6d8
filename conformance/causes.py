"""Root causes: which rule a tool call broke, and which failures are one defect.

A case sets up a situation and makes calls; a harness with one defect usually fails many cases,
each under the rule its case is about. This module judges each violation from *its call*
instead: the situation the call met (a word of ``SITUATIONS``, derived by the client from what
the session saw and what the disk held), what the spec expected of it, and how the harness
deviated. One table (``RULES``) turns situation and expectation into the rule the call broke.

The **signature** of a violation is ``<rule> · <situation> · <deviation>``; failures with one
signature are one root cause. Seven folds keep one defect from splitting across cases:

- a situation that refines another (``read-via-alias`` refines ``existing-read``) joins the
  root cause of its parent when the same run shows the parent with the same deviation;
- a wording violation of a call that already broke a behaviour rule is part of that cause;
- a later call of the same case on a target an earlier call already diverged on is a
  consequence of the earlier divergence;
- what the situations after a failed read still show is one behaviour (``_fold_failed_reads``);
- a read's wrong text in several situations of what the session observed is one
  (``_fold_read_texts``);
- so is a read that takes a file for text, or not, by its bytes (``CONTENT_RULES``);
- a cause the spec makes a consequence of another joins it (``CONSEQUENCES``).

Nothing else merges: a violation without a call (a case's own check) is its own cause per case
and rule, and an answer no signature fits (a contract error, a crash) is its own cause in the
words it came with. SPEC.md "Root causes" and docs/root-causes.md describe the same.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from conformance.harness.contract import Json, JsonObject
from conformance.rules import rule_book
from conformance.speed import realpath

SITUATIONS: Final[dict[str, tuple[str | None, str]]] = {
    # word: (the situation it refines, the words for it)
    "new-file": (None, "a path where no file exists"),
    "existing-unread": (None, "an existing file the session never read"),
    "existing-read": (None, "a file the session read (or wrote), unchanged since"),
    "read-via-alias": ("existing-read", "a file the session read under another spelling"),
    "trailing-slash": (
        "read-via-alias",
        "a file the session read, spelled with a trailing slash",
    ),
    "after-failed-read": ("existing-read", "a file the session read, after a later read failed"),
    "changed-since-read": (None, "a file changed by someone else since the session read it"),
    "rewritten-same-size": (
        "changed-since-read",
        "a file rewritten at the same size, its mtime restored, since the session read it",
    ),
    "stale-after-failed-read": (
        "changed-since-read",
        "a file changed since read, after a later read of it failed",
    ),
    "deleted-since-read": (None, "a file deleted by someone else since the session read it"),
    "deleted-after-failed-read": (
        "deleted-since-read",
        "a file deleted since the session read it, after a later read of it failed",
    ),
    "not-a-file": (None, "a directory or special file"),
    "outside-root": (None, "a path outside the workspace root"),
    "symlink-outside": ("outside-root", "a path inside the root whose symlink leads outside it"),
    "spelled-with-dotdot": (None, "a path inside the root spelled with a '..' segment"),
    "root-via-symlink": (
        None,
        "a path in a workspace-write sandbox whose root was opened through a symlink",
    ),
    "unguarded": ("existing-read", "a file in a session opened without the observation policy"),
    "any": (None, "any file"),
}
"""The situations a call can meet, each with the one it refines (or ``None``)."""
OBSERVATION_STATES: Final = frozenset({
    "existing-unread", "existing-read", "after-failed-read", "changed-since-read",
    "rewritten-same-size", "stale-after-failed-read", "unguarded",
})  # fmt: skip
"""Situations of an existing file that differ only in what the session observed of it."""
MISSING_STATES: Final = ("new-file", "deleted-since-read")
"""Situations of a missing file that differ only in whether the session saw it before."""
CONTENT_RULES: Final[dict[str, tuple[str, str]]] = {
    # rule: (a read that shows what it must refuse, a read that refuses what it must show)
    "fs.msg.binary": (
        "shows a file whose first 8192 bytes hold a NUL byte",
        "refuses a file whose first 8192 bytes hold no NUL byte",
    ),
    "fs.msg.invalid-utf8": (
        "shows a file that is not valid UTF-8",
        "refuses a file of valid UTF-8 as invalid",
    ),
}
"""The rules whose condition is the file's bytes alone (SPEC §3.4), in words for a read that
breaks them whatever the session observed of the file."""
_TAKES: Final = ("accepted-instead-of-refused", "refused-instead-of-accepted")

DEVIATIONS: Final[dict[str, str]] = {
    "accepted-instead-of-refused": "is accepted",
    "refused-instead-of-accepted": "is refused",
    "refused-and-changed": "is refused, yet changes the disk",
    "stray-files": "leaves new files beside its target (a temporary file?)",
    "bytes-differ": "leaves other bytes than the spec says",
    "not-written": "is accepted but the target is not written",
    "other-files-changed": "changes files other than its target",
    "harness-dir-files": "creates files in the harness's temporary or working directory",
    "text-differs": "shows the model other text",
    "remedy-extra": "shows the model the recovery instruction once more than the spec says",
    "remedy-missing": "shows the model a refusal without its recovery instruction",
    "parts-reordered": "shows the model the parts of its text in another order",
    "final-newline-counted": "counts a file's final newline as starting one more, empty, line",
    "code-differs": "carries another structured error",
    "check-failed": "fails the case's check",
    "blocks": "blocks instead of answering",
}
"""How a harness can deviate from what the spec expected of a call."""

_MUTATIONS: Final = ("write", "edit")
_EITHER: Final = ("accepted", "refused")

RULES: Final[dict[tuple[str, str, str], str]] = {
    **{("write", s, "accepted"): "policy.write-intent" for s in ("new-file", "existing-read")},
    ("write", "existing-unread", "refused"): "policy.write-intent",
    ("edit", "new-file", "refused"): "policy.edit-intent",
    ("edit", "existing-unread", "refused"): "policy.edit-intent",
    ("edit", "existing-read", "accepted"): "policy.edit-intent",
    **{(t, "read-via-alias", e): "policy.aliases" for t in _MUTATIONS for e in _EITHER},
    **{(t, "after-failed-read", "accepted"): "policy.failed-read" for t in _MUTATIONS},
    **{(t, "stale-after-failed-read", "refused"): "policy.failed-read" for t in _MUTATIONS},
    **{(t, "changed-since-read", "refused"): "fs.version.changes" for t in _MUTATIONS},
    **{(t, "rewritten-same-size", "refused"): "fs.version.racy" for t in _MUTATIONS},
    **{(t, "deleted-since-read", "refused"): "policy.dead-end" for t in _MUTATIONS},
    **{(t, "deleted-after-failed-read", "refused"): "policy.dead-end" for t in _MUTATIONS},
    **{(t, "unguarded", "accepted"): "policy.off" for t in _MUTATIONS},
    **{(t, "spelled-with-dotdot", "accepted"): "fs.resolve.display" for t in ("read", *_MUTATIONS)},
    **{(t, "trailing-slash", "accepted"): "fs.resolve.display" for t in ("read", *_MUTATIONS)},
    **{(t, "root-via-symlink", "accepted"): "sandbox.workspace-write" for t in _MUTATIONS},
    ("read", "outside-root", "accepted"): "sandbox.reads",
    ("read", "symlink-outside", "accepted"): "sandbox.reads",
}  # fmt: skip
"""(tool, situation, expectation) → the rule a call in that situation keeps or breaks.

A combination the table does not list keeps the rule its case cited for the call.
"""

BEHAVIOUR_RULES: Final = {
    "harness-dir-files": "tool.changes-only-target",
    # new files beside a target that is as the case expects: whatever the guard or the write
    # did, it was right; what it left behind is one defect, wherever it shows
    "stray-files": "tool.changes-only-target",
}
"""Deviations whose rule (and situation: any) is the same whatever the case: the rest keep the
case's own rule."""


def rule_for(tool: str, situation: str | None, expected: str, deviation: str, cited: str) -> str:
    """The rule a deviating call broke: from the deviation, else the table, else the case's."""
    if deviation in BEHAVIOUR_RULES:
        return BEHAVIOUR_RULES[deviation]
    if deviation in ("accepted-instead-of-refused", "refused-instead-of-accepted"):
        return RULES.get((tool, situation or "", expected), cited)
    return cited


def signature(rule: str, situation: str | None, deviation: str) -> str:
    """``policy.write-intent · existing-read · refused-instead-of-accepted``."""
    return f"{rule} · {situation or 'any'} · {deviation}"


SUBJECTS: Final[dict[str, str]] = {
    # word: the defect in words, for a check that judges no call
    "passthrough-copied": "remediate returns another object where it must return the same one",
    "remedied-cause-lost": "a remedied error does not have the original error as its cause",
    "history-error": "derive_messages puts a structured error into the model's history",
    "to-error-uncoded": "to_error of a value that is not an error gives no HarnessError UNKNOWN",
    "failure-uncoded": "an error event of a failure without a code of its own has no code UNKNOWN",
    "secret-unredacted": "a planted secret reaches the model or a log in failure text, unredacted",
    "protocol-broken": "the harness answers outside the protocol (not JSON, no or an unknown id)",
}
"""What a case's own check (no call) found, where the same check in several cases is the same
defect: ``<rule> · <subject> · check-failed`` is one cause across those cases. A check that
names none of these stays a cause of its case."""


def subject_signature(rule: str, subject: str) -> str:
    """``remedy.passthrough · passthrough-copied · check-failed``."""
    if subject not in SUBJECTS:
        raise KeyError(f"no subject {subject!r} in conformance.causes.SUBJECTS")
    return signature(rule, subject, "check-failed")


def passthrough_copied(copy: bool) -> str | None:
    """A value remediate gave back as a copy (another object saying the same): one defect in
    every check that passes a value through; anything else it gave back stays its case's."""
    return subject_signature("remedy.passthrough", "passthrough-copied") if copy else None


def secret_unredacted(leaked: bool) -> str | None:
    """A planted secret found as it was planted in failure text (nothing replaced there): one
    defect of {secret.redact.everywhere} — every path redacted the same way — in every check
    and whichever path it took; a text redacted otherwise than the spec says stays its case's."""
    return subject_signature("secret.redact.everywhere", "secret-unredacted") if leaked else None


def to_error_uncoded(same: object, code: object) -> str | None:
    """A value to_error wrapped without the code UNKNOWN: one defect in every such check."""
    if same is False and code != "UNKNOWN":
        return subject_signature("err.to-error.value", "to-error-uncoded")
    return None


# -- wording: the shape of a wrong text, the pair of a wrong code ---------------------------

SHAPE_RULES: Final[dict[str, str]] = {
    "remedy-extra": "remedy.once",
    "remedy-missing": "remedy.texts",
    "parts-reordered": "args.order",
    "final-newline-counted": "read.lines",
}
"""A text's shape of difference that is the same defect in every case → the rule it breaks.

Only a shape that names what is wrong on its own is listed: any other wrong text keeps the rule
its case cited and the situation of its call, so two different wrong texts never merge.
"""


def text_shape(actual: str, expected: str, remedies: Mapping[str, str]) -> str:
    """``remedy-extra`` (the expected text with one recovery instruction more),
    ``remedy-missing`` (with one less), ``parts-reordered`` (the same ``; ``-joined parts after
    the same ``…: `` lead, in another order: violations of a tool's arguments), else
    ``text-differs``."""
    for remedy in remedies.values():
        if remedy and _one_less(actual, remedy) == expected:
            return "remedy-extra"
        if remedy and _one_less(expected, remedy) == actual:
            return "remedy-missing"
    if final_newline_counted(actual, expected):
        return "final-newline-counted"
    same = next((i for i, (a, b) in enumerate(zip(actual, expected, strict=False)) if a != b),
                min(len(actual), len(expected)))  # fmt: skip
    lead = actual[: actual.rfind(": ", 0, same) + 2] if ": " in actual[:same] else ""
    mine, theirs = actual[len(lead) :].split("; "), expected[len(lead) :].split("; ")
    if lead and len(theirs) > 1 and mine != theirs and sorted(mine) == sorted(theirs):
        return "parts-reordered"
    return "text-differs"


_LAST_EMPTY: Final = re.compile(r"\n(\d+): \n\n\(End of file - total (\d+) lines\)")
_END: Final = re.compile(r"\(End of file - total (\d+) lines\)")
_MORE: Final = re.compile(
    r"\(Showing lines (\d+)-(\d+) of (\d+)\. Use offset=(\d+) to continue\.\)"
)
_RANGE: Final = re.compile(r"(offset (\d+) is out of range for .*) \((\d+) lines\)")
_EXPLAINS_BEHAVIOUR: Final = frozenset({"final-newline-counted"})
"""Shapes of a read's text that also explain its accepted-or-refused: the window it computed."""


def final_newline_counted(actual: str, expected: str) -> bool:
    """Whether ``actual`` is the read output ``expected`` (SPEC §4.2, the spec's words) as a
    harness gives it that counts a file's final newline as starting one more, empty, line
    (SPEC {read.lines}): that line listed last, every total one more, a window ending one line
    before the end told that more follow, an offset just past the end shown that empty line
    instead of refused (or refused naming one line more)."""
    if actual == expected:
        return False
    wanted = _RANGE.search(expected)
    if wanted is not None and int(wanted[2]) == int(wanted[3]) + 1:
        shown = f"<content>\n{wanted[2]}: \n\n(End of file - total {wanted[2]} lines)\n</content>"
        if shown in actual:
            return True
    text, last = actual, _LAST_EMPTY.search(actual)
    if last is not None and last[1] == last[2] and int(last[2]) > 1:
        end = f"\n\n(End of file - total {int(last[2]) - 1} lines)"
        text = text[: last.start()] + end + text[last.end() :]
    else:
        text = _END.sub(lambda m: f"(End of file - total {int(m[1]) - 1} lines)", text)
    text = _MORE.sub(
        lambda m: f"(End of file - total {m[2]} lines)" if int(m[3]) == int(m[2]) + 1
        else f"(Showing lines {m[1]}-{m[2]} of {int(m[3]) - 1}. Use offset={m[4]} to continue.)",
        text,
    )  # fmt: skip
    text = _RANGE.sub(lambda m: f"{m[1]} ({int(m[3]) - 1} lines)", text)
    return text == expected


def behaviour_shape(actual: str, expected: str) -> str | None:
    """The signature of a shape of a call's text that explains its behaviour too, else None."""
    shape = text_shape(actual, expected, {})
    return signature(SHAPE_RULES[shape], "any", shape) if shape in _EXPLAINS_BEHAVIOUR else None


def _one_less(text: str, part: str) -> str | None:
    """``text`` without one occurrence of ``part`` (its last), or None when it has none."""
    at = text.rfind(part)
    return None if at < 0 else text[:at] + text[at + len(part) :]


def text_signature(
    rule: str, situation: str | None, actual: str, expected: str, remedies: Mapping[str, str]
) -> str:
    """The signature of a wrong text: its shape's where the shape names the defect, else the
    case's rule in the call's situation."""
    return shape_signature(actual, expected, remedies) or signature(rule, situation, "text-differs")


def shape_signature(actual: str, expected: str, remedies: Mapping[str, str]) -> str | None:
    """``remedy.once · any · remedy-extra`` where a text's shape names its defect, else None."""
    shape = text_shape(actual, expected, remedies)
    return signature(SHAPE_RULES[shape], "any", shape) if shape in SHAPE_RULES else None


_REMEDIED_CODES: Final = frozenset({"FS_STALE_VERSION", "FS_NOT_OBSERVED"})

PAIR_RULES: Final[dict[tuple[str, str], str]] = {
    ("FS_SANDBOX_DENIED", "FS_NOT_OBSERVED"): "sandbox.before-policy",
}
"""Expected → carried codes of a ``write``/``edit`` that name their defect on their own, and the
rule it breaks: a fenced mutation refused by the policy instead means the fence spoke after the
policy, in every situation a fence refuses (outside the root, a read-only sandbox). Such a call's
wrong text is that cause's doing."""


def carries_remedy(text: str, code: str, remedies: Mapping[str, str]) -> bool:
    """Whether ``text`` ends with the recovery instruction of ``code`` (and of no other)."""
    own = remedies.get(code)
    others = [r for c, r in remedies.items() if c != code and r and r != own]
    return bool(own) and text.endswith(own or "") and not any(text.endswith(r) for r in others)


def code_signature(
    rule: str,
    situation: str | None,
    tool: str | None,
    actual: tuple[str, str] | None,
    expected: tuple[str, str] | None,
    *,
    remedied: bool = False,
) -> str:
    """The signature of a wrong structured error, keyed by what was expected and what came
    (``tool.error.plain · none→UNKNOWN · code-differs``), with the rule from that pair: a plain
    exception's result carries none (``tool.error.plain``), a harness error's carries one
    (``tool.error.structured``), and a guarded refusal of ``write``/``edit`` whose text carries
    the expected code's own recovery instruction (``remedied``: the remedy ran for that code)
    carries the remedied error's unchanged code (``remedy.code``). Any other pair keeps the
    case's rule: a refusal of another kind altogether is another defect's doing."""
    pair = f"{_code_word(expected, actual)}→{_code_word(actual, expected)}"
    if expected is None:
        return signature("tool.error.plain", pair, "code-differs")
    if actual is None:
        return signature("tool.error.structured", pair, "code-differs")
    named = PAIR_RULES.get((expected[1], actual[1]))
    if named is not None and tool in _MUTATIONS:
        return signature(named, pair, "code-differs")
    remedied = remedied and (tool in _MUTATIONS or rule == "remedy.code")
    if remedied and expected[1] in _REMEDIED_CODES and actual[1] != expected[1]:
        return signature("remedy.code", pair, "code-differs")
    return signature(rule, situation, "code-differs")


def loop_error_signature(
    tool: str | None,
    actual: Json,
    expected: Json,
    cited: str,
    situation: str | None = None,
    *,
    remedied: bool = False,
) -> str | None:
    """The signature of a loop ``tool/result`` event whose structured error differs from the
    expected one (``{"name", "code"}`` or absent), else None. An event without the error its
    result had breaks ``loop.result-error`` whatever the code; any other pair is judged as a
    call's (``code_signature``), so the loop and the direct call show one cause."""
    got, want = error_pair(actual), error_pair(expected)
    if got == want:
        return None
    if got is None:
        return signature("loop.result-error", "error→none", "code-differs")
    return code_signature(cited, situation, tool, got, want, remedied=remedied)


def error_pair(error: Json) -> tuple[str, str] | None:
    """``{"name", "code"}`` as a pair, or None for no (or a malformed) structured error."""
    if not isinstance(error, dict):
        return None
    return str(error.get("name")), str(error.get("code"))


def _code_word(error: tuple[str, str] | None, other: tuple[str, str] | None) -> str:
    """A code as a pair shows it: the code, or the name where the codes agree."""
    if error is None:
        return "none"
    if other is not None and other[1] == error[1]:
        return error[0]
    return error[1]


# -- the situation a call meets -----------------------------------------------------------


@dataclass
class Seen:
    """What one session last saw of one target (by key)."""

    state: tuple[str, int, bytes, int] | None
    spelling: str
    failed_since: bool = False


@dataclass
class Observations:
    """The spec's model of one session's observations (SPEC §3.2, §4.1), kept by the client."""

    root: str
    options: Mapping[str, Json]
    seen: dict[str, Seen] = field(default_factory=dict)

    def key(self, spelled: str) -> tuple[str, str]:
        """(lexical path, realpath) of a path as the harness was given it."""
        lexical = os.path.normpath(os.path.join(self.root, spelled))
        return lexical, realpath(lexical)

    def _roots(self) -> list[str]:
        roots = [self.root]
        extra = self.options.get("writableRoots")
        if isinstance(extra, list):
            roots += [str(r) for r in extra]
        return roots

    def real_roots(self) -> list[str]:
        """The realpaths of the root and of any extra writable roots, the root first."""
        return [realpath(root) for root in self._roots()]

    @staticmethod
    def _inside(path: str, roots: list[str]) -> bool:
        return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)

    def situation(
        self, tool: str, spelled: str, resolved: tuple[tuple[str, str], list[str]] | None = None
    ) -> str:
        """The word of ``SITUATIONS`` this call meets, judged before the call.

        ``resolved``: ``(key(spelled), real_roots())`` when the caller has them already (each
        resolution is a system call or more).
        """
        (lexical, real), real_roots = resolved or (self.key(spelled), self.real_roots())
        if tool != "read" and self.options.get("sandbox") == "read-only":
            return "any"
        if not self._inside(lexical, [os.path.normpath(root) for root in self._roots()]):
            return "outside-root"
        if not self._inside(real, real_roots):
            return "symlink-outside"
        if ".." in spelled.replace(os.sep, "/").split("/"):
            return "spelled-with-dotdot"
        # the fence judges the real path: a root reached through a symlink is its own situation
        fenced = tool != "read" and self.options.get("sandbox") == "workspace-write"
        if fenced and os.path.islink(self.root.rstrip(os.sep)):
            return "root-via-symlink"
        if tool != "read" and self.options.get("policy") is False:
            return "unguarded"
        now = state_of(real)
        if now is not None and now[0] != "file":
            return "not-a-file"
        seen = self.seen.get(real)
        if seen is None:
            return "new-file" if now is None else "existing-unread"
        if now is None:
            return "deleted-after-failed-read" if seen.failed_since else "deleted-since-read"
        if seen.state is None or seen.state[:3] != now[:3]:
            if seen.failed_since:
                return "stale-after-failed-read"
            restored = seen.state is not None and seen.state[1::2] == now[1::2]
            return "rewritten-same-size" if restored else "changed-since-read"
        if seen.failed_since:
            return "after-failed-read"
        spelling = _spelling(spelled, self.root)
        if spelling == seen.spelling:
            return "existing-read"
        return "trailing-slash" if spelled.endswith(("/", os.sep)) else "read-via-alias"

    def after(self, tool: str, spelled: str, failed: bool) -> None:
        """Record the call as the spec does: a success observes, a failed read records nothing."""
        _, real = self.key(spelled)
        if not failed:
            self.seen[real] = Seen(state_of(real), _spelling(spelled, self.root))
        elif tool == "read" and real in self.seen:
            self.seen[real].failed_since = True


def _spelling(spelled: str, root: str) -> str:
    return spelled if os.path.isabs(spelled) else os.path.join(root, spelled)


def state_of(path: str) -> tuple[str, int, bytes, int] | None:
    """(kind, size, digest, mtime) of what is at ``path`` now (following links), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return ("dir" if stat.S_ISDIR(st.st_mode) else "other", 0, b"", 0)
    digest = hashlib.blake2b(digest_size=16)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ("file", st.st_size, b"", st.st_mtime_ns)
    try:
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    except OSError:  # a failing device: the size is all there is to compare
        return ("file", st.st_size, b"", st.st_mtime_ns)
    finally:
        os.close(fd)
    return ("file", st.st_size, digest.digest(), st.st_mtime_ns)


# -- grouping -------------------------------------------------------------------------------


@dataclass
class RootCause:
    """One defect: its signature, its words, the rule it breaks, and the cases that show it."""

    signature: str
    rule: str | None
    required: bool
    cases: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    plain: str | None = None
    """The words of an answer no signature fits (its own sentence)."""

    @property
    def lead(self) -> str:
        """The first case that shows it: the name a later case is ``also explained by``."""
        return self.cases[0]

    @property
    def words(self) -> str:
        """The cause in plain words, the same on every run."""
        if self.plain is not None:
            return self.plain
        rule, situation, deviation = self.signature.split(" · ")
        does = DEVIATIONS.get(deviation, deviation)
        tools = " or ".join(self.tools) or "a call"
        if situation == "any" and rule in CONTENT_RULES and deviation in _TAKES:
            return f"{tools} {CONTENT_RULES[rule][_TAKES.index(deviation)]}"
        if situation == "any":
            return f"{tools} {does}"
        if deviation == "check-failed":
            if situation in SUBJECTS:
                return SUBJECTS[situation]
            return f"{situation}: its check of {{{rule}}} fails"
        if deviation == "code-differs" and "→" in situation:
            want, got = situation.split("→", 1)
            return f"{tools} carries {_error_words(got)} where {_error_words(want)} is expected"
        about = SITUATIONS.get(situation, (None, situation))[1]
        return f"{tools} of {about} {does}"

    def to_json(self) -> JsonObject:
        """``{"signature", "words", "rule", "required", "cases"}``."""
        return {
            "signature": self.signature,
            "words": self.words,
            "rule": self.rule,
            "required": self.required,
            "cases": list(self.cases),
        }


def _error_words(word: str) -> str:
    return {"none": "no structured error", "error": "the structured error"}.get(word, word)


@dataclass
class Causes:
    """The root causes of a run, and for each failed case the causes shown first that explain it."""

    causes: list[RootCause]
    explained_by: dict[str, list[str]]
    failed: int = 0
    recommended: int = 0
    """How many of the ``failed`` cases failed only a recommended rule (never fail a run)."""

    def counted(self) -> str:
        """``2 distinct defects in 35 failed cases``, naming recommended-fail cases as such:
        the area table does not count them as failed."""
        count, failed = len(self.causes), self.failed - self.recommended
        parts = [f"{failed} failed case{'s' if failed != 1 else ''}"] if failed else []
        if self.recommended:
            plural = "s" if self.recommended != 1 else ""
            parts.append(f"{self.recommended} recommended-fail case{plural}")
        return f"{count} distinct defect{'s' if count != 1 else ''} in {' and '.join(parts)}"

    def note(self, case_id: str) -> str:
        """``also explained by GRD-003`` for a case shown by earlier causes only, else ``""``."""
        leads = self.explained_by.get(case_id)
        return f"also explained by {', '.join(leads)}" if leads else ""


_RUN_PATH: Final = re.compile(r"(?:/private)?/(?:tmp|var/folders)/\S*?/(?:ws|outside)(?=/|\b)")
_CALL_FAILED: Final = re.compile(r"call_tool\(.*\) failed in the harness: ")
_PHASE_CASE: Final = re.compile(r"^\[(?:setup|teardown)\] (?:[A-Z]+-\d+: )?")
"""A set-up or teardown failure's message starts with its case: words the suite added."""
_ERROR_CLASS: Final = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Dead|Exception)): ")
_CALL_ARGS: Final = re.compile(
    r'(call_tool\("[^"]*"), .*?\)(?= failed\b| not made\b| did not answer\b| in a batch\b|: )'
)
"""A tool call's arguments in an error's words: one cause whatever file each call named."""
_A_CALL: Final = re.compile(
    r"^(?:call_tool\(|batch of \d+ requests |[a-z_]+ (?:did not answer|failed|not made)\b)"
)
"""A set-up failure's words that name a call: the same failure in a case's body names
``HarnessCallError`` before them."""
_NOT_MADE: Final = re.compile(r"^(?:call_tool\(\S*, …\)|batch of \d+ requests|\w+) not made: ")
"""A call the suite did not make, the harness being dead: which call it was is no part of it."""
_REFUSED: Final = "refused-instead-of-accepted"
_TEXTS: Final = frozenset({"text-differs", *SHAPE_RULES})
"""Deviations of a call's text (its wrong structured error is part of the same answer)."""
_WORDING: Final = frozenset({*_TEXTS, "code-differs"})
_OFF_SCRIPT: Final = frozenset(
    {_REFUSED, "accepted-instead-of-refused", "refused-and-changed", "bytes-differ", "not-written"}
)
"""Deviations that leave the target otherwise than the case expects: what follows on it differs."""


@dataclass
class _Call:
    tool: str | None
    situation: str | None
    target: str | None
    refused: bool
    expected: str | None = None


def group(cases: Iterable[Mapping[str, Json]]) -> Causes:
    """Group the failed cases of a JSON report (in case order) by root cause."""
    failed = [
        c for c in cases if c.get("outcome") in ("failed", "recommended-fail") and at_fault(c)
    ]
    # First pass: which (tool, situation) the run shows refused wrongly, from the calls that
    # broke a behaviour rule on their own (not as a consequence of an earlier call).
    wrongly: dict[tuple[str | None, str | None], str] = {}
    for case in failed:
        for tool, situation, sig in _case_signatures(case, {}, {})[1]:
            deviation = sig.rsplit(" · ", 1)[-1]
            if deviation in _OFF_SCRIPT:
                wrongly.setdefault((tool, family(situation)), sig)
            if deviation == _REFUSED:
                wrongly.setdefault((tool, f"refused {situation}"), sig)
    found: dict[str, RootCause] = {}
    per_case = {str(c["id"]): _case_signatures(c, found, wrongly)[0] for c in failed}
    _fold_refinements(found, per_case)
    _fold_failed_reads(found, per_case)
    _fold_consequences(found, per_case)
    # A scripted call finds its cause by situation: before folds that make a situation ``any``.
    _fold_scripted_wording(found, per_case)
    _fold_read_texts(found, per_case)
    _fold_content(found, per_case)
    ordered: list[RootCause] = []
    explained: dict[str, list[str]] = {}
    for case_id, sigs in per_case.items():
        leads = []
        for sig in dict.fromkeys(sigs):
            cause = found[sig]
            if case_id not in cause.cases:
                cause.cases.append(case_id)
            if cause.lead == case_id and cause not in ordered:
                ordered.append(cause)
            leads.append(cause.lead)
        if leads and all(lead != case_id for lead in leads):
            explained[case_id] = list(dict.fromkeys(leads))
    recommended = sum(c.get("outcome") == "recommended-fail" for c in failed)
    # An answer no rule names weighs what the cases it fails weigh: required only if one of
    # them failed a required rule (a recommended case's crash never fails a run).
    soft = {str(c["id"]) for c in failed if c.get("outcome") == "recommended-fail"}
    for cause in ordered:
        if cause.rule is None:
            cause.required = any(case not in soft for case in cause.cases)
    return Causes(ordered, explained, len(per_case), recommended)


DECLARED: Final = "declared as expected to fail"
"""Why a case named by expect-fail is a strict expected failure (after its ID)."""
PASSES_AS_DECLARED: Final = f"{DECLARED}, and passes"
"""In the message of a case named by expect-fail that passes: it fails the run, no defect."""
XPASS_LEAD: Final = "[XPASS(strict)] "
"""How pytest's failure of a strict expected failure that passed starts (and so its message)."""


def at_fault(case: Mapping[str, Json]) -> bool:
    """Whether a failed case shows a defect of the harness: not one declared as expected to
    fail that passes. (Its levels say passed, as do those of a case whose teardown failed,
    which is a defect: the message tells them apart.)

    Both must say so: a verdict's first line can hold words the harness chose (the name of a
    file it created), but not a passed level beside them, nor pytest's lead.
    """
    levels = case.get("levels")
    if isinstance(levels, dict) and "failed" in levels.values():
        return True
    message = case.get("message")
    return not (
        isinstance(message, str)
        and message.startswith(XPASS_LEAD)
        and PASSES_AS_DECLARED in message.split(":", 1)[0]
    )


def _verdicts(case: Mapping[str, Json]) -> list[Mapping[str, Json]]:
    verdicts = case.get("verdicts")
    found = [v for v in verdicts if isinstance(v, dict)] if isinstance(verdicts, list) else []
    last = 1 << 30  # a case's own check comes after its calls
    return sorted(found, key=lambda v: v["call"] if isinstance(v.get("call"), int) else last)


def _calls(case: Mapping[str, Json]) -> list[_Call]:
    calls = case.get("calls")
    out = []
    for entry in calls if isinstance(calls, list) else []:
        call = entry if isinstance(entry, dict) else {}
        result = call.get("result")
        refused = isinstance(result, dict) and result.get("isError") is True
        tool, situation, target = call.get("tool"), call.get("situation"), call.get("target")
        expected = call.get("expected")
        out.append(
            _Call(
                tool if isinstance(tool, str) else None,
                situation if isinstance(situation, str) else None,
                target if isinstance(target, str) else None,
                refused,
                expected if isinstance(expected, str) else None,
            )
        )
    return out


def _case_signatures(
    case: Mapping[str, Json],
    found: dict[str, RootCause],
    wrongly: Mapping[tuple[str | None, str | None], str],
) -> tuple[list[str], list[tuple[str | None, str | None, str]]]:
    """The signature of each violation of one case, after the folds within a case; and the
    (tool, situation, signature) of each call that diverged on its own."""
    case_id = str(case["id"])
    verdicts, calls = _verdicts(case), _calls(case)
    own: list[tuple[str | None, str | None, str]] = []
    if not verdicts:
        return [_unexplained(str(case.get("message") or "failed"), found)], own
    # A call no behaviour verdict names, refused where the run shows such calls refused
    # wrongly, diverged the same way: its text and what follows are that cause's doing.
    diverged_call: dict[int, str] = {}
    for position, made in enumerate(calls):
        implied = wrongly.get((made.tool, f"refused {made.situation}"))
        # A refusal the case expected is the harness doing right, whatever it refuses wrongly.
        if made.refused and made.expected != "refused" and implied is not None:
            diverged_call[position] = implied
    diverged_target: dict[str, tuple[int, str]] = {}
    first_divergence: str | None = None
    sigs: list[str] = []

    def diverge(position: int, cause: str) -> None:
        nonlocal first_divergence
        diverged_call.setdefault(position, cause)
        target = calls[position].target if position < len(calls) else None
        if cause.rsplit(" · ", 1)[-1] not in _OFF_SCRIPT:
            return
        if target is not None:
            diverged_target.setdefault(target, (position, cause))
        first_divergence = first_divergence or cause

    for position in sorted(diverged_call):
        _add(found, diverged_call[position], calls[position].tool)
        first_divergence = first_divergence or diverged_call[position]
        if calls[position].target is not None:
            diverged_target.setdefault(
                str(calls[position].target), (position, diverged_call[position])
            )
    # A call's text and its structured error are two forms of one answer: where both differ,
    # the code's verdict is part of the text's cause.
    texts: dict[int, str] = {}
    for verdict in verdicts:
        sig, index = verdict.get("signature"), verdict.get("call")
        if isinstance(sig, str) and isinstance(index, int) and sig.rsplit(" · ", 1)[-1] in _TEXTS:
            texts.setdefault(index, sig)
    # A text whose shape explains the call's behaviour too (the read window a harness computed
    # decides what it shows and whether it refuses): the behaviour verdict is that shape's.
    shaped = {i: sig for i, sig in texts.items() if sig.rsplit(" · ", 1)[-1] in _EXPLAINS_BEHAVIOUR}
    # A wrong code that names its defect (``PAIR_RULES``): the call's plain wrong text is its.
    named: dict[int, str] = {}
    for verdict in verdicts:
        sig, index = verdict.get("signature"), verdict.get("call")
        if isinstance(sig, str) and isinstance(index, int) and names_its_defect(sig):
            named.setdefault(index, sig)
    for verdict in verdicts:
        sig, index = verdict.get("signature"), verdict.get("call")
        if isinstance(index, int) and index in named and isinstance(sig, str):
            if sig.endswith((" · code-differs", " · text-differs")):
                sig = named[index]
        elif isinstance(sig, str) and sig.endswith(" · code-differs") and isinstance(index, int):
            sig = texts.get(index, sig)
        call = calls[index] if isinstance(index, int) and index < len(calls) else None
        behaviour = verdict.get("level") == "behaviour"
        if behaviour and isinstance(index, int) and index in shaped:
            sig = shaped[index]
        if isinstance(index, int) and index in diverged_call and not behaviour:
            sigs.append(diverged_call[index])  # the text of a call that diverged: one cause
            first_divergence = first_divergence or diverged_call[index]
            continue
        same = wrongly.get((call.tool, family(call.situation))) if call and not behaviour else None
        if same is not None:
            _add(found, same, call.tool if call else None)
            sigs.append(same)  # its text, where the run shows the tool misbehave anyway
            continue
        earlier = diverged_target.get(call.target) if call and call.target else None
        if isinstance(index, int) and earlier is not None and earlier[0] < index:
            sigs.append(earlier[1])  # a consequence of an earlier divergence on that file
            continue
        if not isinstance(index, int) and first_divergence is not None:
            sigs.append(first_divergence)  # the case's own check of what its calls did
            continue
        if isinstance(sig, str):
            _add(found, sig, call.tool if call else None)
        else:
            rule = verdict.get("rule")
            if isinstance(rule, str):
                sig = f"{rule} · {case_id} · check-failed"
                _add(found, sig, None)
            else:
                sig = _unexplained(str(verdict.get("verdict") or "failed"), found)
        sigs.append(sig)
        if verdict.get("level") == "behaviour" and isinstance(index, int):
            diverge(index, sig)
            if call is not None:
                own.append((call.tool, call.situation, sig))
    return sigs, own


def names_its_defect(sig: str) -> bool:
    """Whether ``sig`` is of a wrong code whose pair names its defect (``PAIR_RULES``)."""
    rule, _, rest = sig.partition(" · ")
    return rest.endswith(" · code-differs") and rule in PAIR_RULES.values() and "→" in rest


def family(situation: str | None) -> str | None:
    """The situation a word refines, all the way up (``rewritten-same-size`` → ``changed-…``)."""
    while situation is not None and SITUATIONS.get(situation, (None, ""))[0] is not None:
        situation = SITUATIONS[situation][0]
    return situation


def _unexplained(sentence: str, found: dict[str, RootCause]) -> str:
    """An answer no signature fits: its own cause, in the words it came with.

    A call that failed in the harness is named by the harness's words alone, not by the call
    (the verdict names it): one error the harness gives for every call is one cause.
    """
    first = sentence.strip().splitlines()[0] if sentence.strip() else "failed"
    plain = _plain(first)
    sig = f"unexplained · {plain}"
    if sig not in found:
        found[sig] = RootCause(sig, None, True, plain=plain)
    return sig


def _plain(first: str) -> str:
    """An error's words without what the suite added: the case, the call's arguments, a path.

    A set-up failure names no exception; it gets the one the same failure in a case's body
    names, so both are one cause.
    """
    text, phase = _PHASE_CASE.subn("", _RUN_PATH.sub("<workspace>", first), count=1)
    named = _ERROR_CLASS.match(text)
    kind, body = (named.group(1), text[named.end() :]) if named else (None, text)
    body = _CALL_ARGS.sub(r"\1, …)", body, count=1)
    body, dead = _NOT_MADE.subn("a call not made: ", body, count=1)
    body, failed = _CALL_FAILED.subn("a call failed in the harness: ", body, count=1)
    if kind is None and phase and (dead or failed or _A_CALL.match(body)):
        kind = "HarnessCallError"
    if kind in ("HarnessCallError", "HarnessDead"):  # the call that found it dead: same words
        kind = "HarnessDead" if dead else "HarnessCallError"
    return f"{kind}: {body}" if kind else body


def _add(found: dict[str, RootCause], sig: str, tool: str | None) -> None:
    if sig not in found:
        rule = sig.split(" · ", maxsplit=1)[0]
        known = rule_book().get(rule)
        found[sig] = RootCause(sig, rule, known is None or not known.recommended)
    if tool is not None and tool not in found[sig].tools:
        found[sig].tools.append(tool)


def _ancestors(word: list[str]) -> list[str]:
    """The situations ``word`` (a list of at most one) refines, nearest first."""
    found: list[str] = []
    situation = SITUATIONS.get(word[0], (None, ""))[0] if word else None
    while situation is not None:
        found.append(situation)
        situation = SITUATIONS.get(situation, (None, ""))[0]
    return found


def refines_one_of(sig: str, others: Iterable[str]) -> bool:
    """Whether ``sig``'s situation refines (at any depth) the situation of another signature
    among ``others`` with the same rule and deviation: fold 1, for a list of verdicts."""
    parts = sig.split(" · ")
    if len(parts) != 3:
        return False
    ancestors = set(_ancestors(parts[1:2]))
    return any(
        (o := other.split(" · "))[0::2] == parts[0::2] and len(o) == 3 and o[1] in ancestors
        for other in others
    )


def _fold_refinements(found: dict[str, RootCause], per_case: dict[str, list[str]]) -> None:
    """A refined situation joins its parent's cause (same deviation, a tool in common) when the
    run shows the parent too — else its parent's parent's, and so on; the most refined first,
    so what joined a parent moves on with it."""
    for sig in sorted(found, key=lambda s: -len(_ancestors(s.split(" · ")[1:2]))):
        parts = sig.split(" · ")
        tools = set(found[sig].tools)
        target = next(
            (
                other
                for parent in _ancestors(parts[1:2]) if len(parts) == 3
                for other, cause in found.items()
                if other.split(" · ")[1:] == [parent, parts[2]]
                and tools & set(cause.tools)
                and (parts[2] not in _WORDING or other.split(" · ")[0] == parts[0])
            ),
            None,
        )  # fmt: skip
        if target is not None:
            _merge(found, per_case, sig, target)


def _merge(
    found: dict[str, RootCause], per_case: dict[str, list[str]], sig: str, into: str
) -> None:
    """Cause ``sig`` is cause ``into``: its cases and tools move there."""
    for sigs in per_case.values():
        sigs[:] = [into if s == sig else s for s in sigs]
    for tool in found[sig].tools:
        if tool not in found[into].tools:
            found[into].tools.append(tool)
    del found[sig]


def _fold_read_texts(found: dict[str, RootCause], per_case: dict[str, list[str]]) -> None:
    """A read's wrong text under one rule in two or more situations that differ only in what
    the session observed is one defect, in situation ``any``: what a read shows of a file does
    not depend on that. Seen in one situation only, it keeps that situation's words (a harness
    may show a file it read before otherwise, by design or by defect). Likewise a read's wrong
    text of a file deleted since read joins that of a path where no file ever was."""
    _fold_observed_reads(found, per_case, lambda rule, deviation: deviation == "text-differs")
    # The words a read refuses a missing file with do not depend on whether the session saw it
    # before: a deleted file's wrong words join a never-existing one's, when the run shows both.
    for rule in dict.fromkeys(sig.split(" · ")[0] for sig in found):
        new, deleted = (signature(rule, state, "text-differs") for state in MISSING_STATES)
        if all(sig in found and found[sig].tools == ["read"] for sig in (new, deleted)):
            _merge(found, per_case, deleted, new)


def _fold_content(found: dict[str, RootCause], per_case: dict[str, list[str]]) -> None:
    """A read that shows a file it must refuse as not text (or refuses one it must show), under
    one rule of ``CONTENT_RULES`` in two or more situations that differ only in what the session
    observed, is one defect in situation ``any``: whether a file is text is a fact of its bytes.
    Seen in one situation only, it keeps that situation's words. Edits stay apart: an edit looks
    at the whole file, a read's NUL sniff at its first 8192 bytes, so the two can differ."""
    _fold_observed_reads(
        found, per_case, lambda rule, deviation: rule in CONTENT_RULES and deviation in _TAKES
    )


def _fold_observed_reads(
    found: dict[str, RootCause],
    per_case: dict[str, list[str]],
    folds: Callable[[str, str], bool],
) -> None:
    """Folds 6 and 7: the read-only causes of one (rule, deviation) that ``folds`` takes, shown
    in two or more situations of what the session observed, are one cause in situation ``any``."""
    groups: dict[tuple[str, str], list[str]] = {}
    for sig, cause in found.items():
        parts = sig.split(" · ")
        if (
            len(parts) == 3
            and parts[1] in OBSERVATION_STATES
            and cause.tools == ["read"]
            and folds(parts[0], parts[2])
        ):
            groups.setdefault((parts[0], parts[2]), []).append(sig)
    for (rule, deviation), sigs in groups.items():
        if len(sigs) < 2:
            continue
        into = signature(rule, "any", deviation)
        if into not in found:
            first = found[sigs[0]]
            found[into] = RootCause(into, first.rule, first.required, tools=["read"])
        for sig in sigs:
            _merge(found, per_case, sig, into)


AFTER_FAILED_READ: Final = ("after-failed-read", "stale-after-failed-read",
                            "deleted-after-failed-read")  # fmt: skip
"""The situations a failed read of the target leads to, in the order their causes are named."""


def _fold_failed_reads(found: dict[str, RootCause], per_case: dict[str, list[str]]) -> None:
    """What the situations after a failed read still show once refinement has joined what their
    parents explain is one behaviour: what the harness did with the session's observation when
    the read failed (forgot it, refreshed it). Where that includes a behaviour deviation, every
    cause in those situations — other deviations, texts, codes — joins the first behaviour one:
    a harness that forgets refuses an unchanged file as unread, names a changed one unread
    instead of stale, and recreates a deleted one, all from one failed read."""
    family = [sig for sig in found if sig.split(" · ")[1:2] and
              sig.split(" · ")[1] in AFTER_FAILED_READ and sig.count(" · ") == 2]  # fmt: skip
    behaviour = [sig for sig in family if sig.rsplit(" · ", 1)[-1] in _OFF_SCRIPT]
    if not behaviour:
        return
    into = min(behaviour, key=lambda sig: AFTER_FAILED_READ.index(sig.split(" · ")[1]))
    for sig in family:
        if sig != into:
            _merge(found, per_case, sig, into)


CONSEQUENCES: Final[dict[str, tuple[str, str]]] = {
    "loop.failure-value · failure-uncoded · check-failed": (
        "err.to-error.value · to-error-uncoded · check-failed",
        "a failure inside the loop goes through to_error (SPEC {loop.failure}): an uncoded "
        "to_error leaves the loop's error event uncoded too",
    ),
    "sandbox.workspace-write · root-via-symlink · refused-instead-of-accepted": (
        "sandbox.workspace-write · symlink-outside · accepted-instead-of-refused",
        "a fence that judges paths as spelled, not their real paths, both lets a symlink out "
        "and keeps a root opened through a symlink shut",
    ),
    "fs.cas.one-winner · GRD-027 · check-failed": (
        "fs.cas.one-winner · GRD-025 · check-failed",
        "every mutation of a target checks and publishes inside one critical section (SPEC "
        "{fs.cas.one-winner}): an edit left out of it loses a race to a write as to an edit",
    ),
}
"""A signature → (the signature whose defect explains it when the run shows both, why)."""


def _fold_consequences(found: dict[str, RootCause], per_case: dict[str, list[str]]) -> None:
    """A cause joins the cause that explains it (``CONSEQUENCES``), where the run shows that."""
    for sig, (explains, _) in CONSEQUENCES.items():
        if sig in found and explains in found:
            _merge(found, per_case, sig, explains)


# -- the situation a scripted call meets (a call the harness's own loop made) ----------------


@dataclass(frozen=True)
class Scripted:
    """A tool call a script made inside the harness's loop: where the run first left the
    transcript the spec expects, judged like a call the suite made itself."""

    tool: str
    arguments: Json
    situation: str
    expected: str
    deviation: str
    number: int = 0
    """Which tool call of the script it is (from 0)."""

    def signature(self, cited: str) -> str:
        """The signature of the call's deviation (``cited`` where the table is silent)."""
        rule = rule_for(self.tool, self.situation, self.expected, self.deviation, cited)
        return signature(rule, self.situation, self.deviation)


def scripted_divergence(
    script: Mapping[str, Json], actual: list[Json], expected: list[Json]
) -> Scripted | None:
    """The scripted call whose error flag first differs between two transcripts' shapes
    (``snapshots.behaviour_of``), with the situation it met, or None when the first difference
    is not a call's flag (then the transcript, not one call, is what differs).

    The situation comes from replaying the script on a model of its workspace, each earlier
    call taken as the expected transcript says it went (a success observes, a failure does not).
    """
    outcomes = [e[1] for e in expected if isinstance(e, list) and e[:1] == ["tool/result"]]
    first = next((i for i, pair in enumerate(zip(actual, expected, strict=False))
                  if pair[0] != pair[1]), None)  # fmt: skip
    if first is None or not all(
        isinstance(e, list) and e[:1] == ["tool/result"] for e in (actual[first], expected[first])
    ):
        return None
    number = sum(1 for e in expected[:first] if isinstance(e, list) and e[:1] == ["tool/result"])
    wanted = "accepted" if outcomes[number : number + 1] == ["ok"] else "refused"
    deviation = _REFUSED if wanted == "accepted" else "accepted-instead-of-refused"
    return scripted_call(script, number, outcomes, wanted, deviation)


def scripted_call(
    script: Mapping[str, Json], number: int, outcomes: list[Json], expected: str, deviation: str
) -> Scripted | None:
    """The ``number``-th tool call of a script (from 0) as a call that deviated, in the situation
    a replay of the script gives it (each earlier call went as ``outcomes`` says: ``"ok"``
    observes, ``"error"`` does not), or None when it names no file."""
    model = _ScriptModel(script)
    made = 0
    for step in _list(script.get("steps")):
        for op in _list(step.get("external")):
            model.external(op)
        for call in _list(step.get("tool_calls")):
            name, arguments = call.get("name"), call.get("arguments")
            path = arguments.get("file_path") if isinstance(arguments, dict) else None
            named = isinstance(name, str) and isinstance(path, str)
            if made == number:
                if not named:
                    return None
                situation = model.situation(str(name), str(path))
                return Scripted(str(name), arguments, situation, expected, deviation, number)
            if named:
                model.after(str(name), str(path), outcomes[made : made + 1] == ["ok"])
            made += 1
    return None


def _list(value: Json) -> list[Mapping[str, Json]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


class _ScriptModel:
    """The files of a script's workspace by version, and what the session saw of them."""

    def __init__(self, script: Mapping[str, Json]) -> None:
        options, workspace = script.get("options"), script.get("workspace")
        self.options = options if isinstance(options, dict) else {}
        # path → (version, rewritten at same size)
        self.files: dict[str, tuple[int, bool]] = (
            {os.path.normpath(path): (0, False) for path in workspace or {}}
            if isinstance(workspace, dict)
            else {}
        )
        self.seen: dict[str, tuple[int, bool]] = {}  # path → (version seen, a read failed since)
        self.version = 0

    def external(self, op: Mapping[str, Json]) -> None:
        path = os.path.normpath(str(op.get("path")))
        self.version += 1
        if op.get("op") == "delete":
            self.files.pop(path, None)
        else:
            self.files[path] = (self.version, op.get("op") == "same_size_rewrite")

    def situation(self, tool: str, spelled: str) -> str:
        path = os.path.normpath(spelled)
        if os.path.isabs(path) or path == ".." or path.startswith(".." + os.sep):
            return "outside-root"
        if tool != "read" and self.options.get("policy") is False:
            return "unguarded"
        seen, now = self.seen.get(path), self.files.get(path)
        if seen is None:
            return "new-file" if now is None else "existing-unread"
        if now is None:
            return "deleted-after-failed-read" if seen[1] else "deleted-since-read"
        if seen[0] != now[0]:
            if seen[1]:
                return "stale-after-failed-read"
            return "rewritten-same-size" if now[1] else "changed-since-read"
        return "after-failed-read" if seen[1] else "existing-read"

    def after(self, tool: str, spelled: str, ok: bool) -> None:
        path = os.path.normpath(spelled)
        if ok and tool != "read":
            self.version += 1
            self.files[path] = (self.version, False)
        if ok and path in self.files:
            self.seen[path] = (self.files[path][0], False)
        elif not ok and tool == "read" and path in self.seen:
            self.seen[path] = (self.seen[path][0], True)


_SCRIPTED: Final = "scenario.pinned"
"""The rule a scripted call's wording cites: the pinned transcript, not the text's own rule."""


def _fold_scripted_wording(found: dict[str, RootCause], per_case: dict[str, list[str]]) -> None:
    """A scripted call's text joins the one wording cause a call the suite made itself shows for
    a tool in common, in the same situation and with the same deviation: the model saw the same
    text, judged there under its own rule. With two such causes it stays apart (no guess).

    So does a scripted call's accepted-or-refused where ``RULES`` is silent (an ambiguous edit
    accepted): the call the suite made itself names the rule the table cannot."""
    for sig in list(found):
        rule, _, rest = sig.partition(" · ")
        if rule != _SCRIPTED or rest.rsplit(" · ", 1)[-1] not in (*_WORDING, *_OFF_SCRIPT):
            continue
        tools = set(found[sig].tools)
        same = [
            other
            for other, cause in found.items()
            if other != sig
            and other.partition(" · ")[2] == rest
            and other.partition(" · ")[0] != _SCRIPTED
            and tools & set(cause.tools)
        ]
        if len(same) == 1:
            _merge(found, per_case, sig, same[0])
