"""A failed read erases the session's observation (so a deleted file can be recreated)."""

from reference.adapter import ReferenceHarness
from reference.fs.types import FsError
from reference.tools import fs_tools

original = fs_tools.FsTools.read


def read(self: fs_tools.FsTools, args: dict[str, object]) -> str:
    try:
        return original(self, args)
    except FsError:
        if self._policy is not None:
            target = self._fs.resolve(str(args["file_path"]), self._cwd)
            with self._policy._lock:
                self._policy._seen.pop(target.key, None)
        raise


fs_tools.FsTools.read = read  # type: ignore[method-assign]
harness = ReferenceHarness
