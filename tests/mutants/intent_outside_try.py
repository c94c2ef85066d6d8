"""edit decides the policy's intent outside the try, so the policy's refusal gets no remedy."""

from reference.adapter import ReferenceHarness
from reference.fs.types import EditRequest, FsError
from reference.tools import fs_tools
from reference.tools import wording as w


def edit(self: fs_tools.FsTools, args: dict[str, object]) -> str:
    file_path = fs_tools._file_path(args)
    old, new = str(args["old_string"]), str(args["new_string"])
    replace_all = bool(args.get("replace_all", False))
    if not old:
        raise ValueError(w.OLD_STRING_EMPTY)
    if old == new:
        raise ValueError(w.STRINGS_IDENTICAL)
    target = self._fs.resolve(file_path, self._cwd)
    try:
        self._fs.authorize(target, "edit")
    except FsError as err:
        raise self._for_model(err) from err
    intent = None if self._policy is None else self._policy.edit_intent(target)  # the defect
    try:
        outcome = self._fs.edit(target, EditRequest(old, new, replace_all), intent)
    except FsError as err:
        raise self._for_model(err) from err
    if self._policy is not None:
        self._policy.record(target, outcome.version)
    return (w.EDIT_OUTPUT_ALL if replace_all else w.EDIT_OUTPUT).format(p=target.display_path)


fs_tools.FsTools.edit = edit  # type: ignore[method-assign]
harness = ReferenceHarness
