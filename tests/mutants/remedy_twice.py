"""write and edit apply the remedy twice."""

from reference.adapter import ReferenceHarness
from reference.tools import fs_tools
from reference.tools.remedy import remediate_fs_error

original = fs_tools.FsTools._for_model
fs_tools.FsTools._for_model = lambda self, err: remediate_fs_error(original(self, err))  # type: ignore[method-assign]

harness = ReferenceHarness
