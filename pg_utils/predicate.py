"""``is_parallel(group)``: is there real parallelism over ``group`` for this rank?"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


def _comm() -> ModuleType:
    """The communication module: ``deepspeed.comm`` when importable, else ``torch.distributed``.

    Resolved per call, not at import, so importing pg_utils has no side effects and needs neither package.
    """
    for name in ("deepspeed.comm", "torch.distributed"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise RuntimeError("is_parallel needs deepspeed.comm or torch.distributed for a group that is not None")


def is_parallel(group: Any) -> bool:
    """Return True iff collectives over ``group`` involve more than this one rank.

    Two meanings of ``None`` meet here:

    * In DeepSpeed's parallel-dimension helpers ``group=None`` means the dimension is **absent** (no tensor,
      expert or sequence parallelism). ``is_parallel(None)`` is therefore ``False``, and it never touches a
      process group: it works before ``init_process_group`` and without torch installed.
    * In ``dist.all_reduce(t, group=None)`` ``None`` means the **world** group. That is why a guard must come
      before the collective: dropping it turns "no reduction" into a reduction over every rank.

    For a real group the answer is ``get_world_size(group) > 1``. A group that does not contain this rank has
    ``get_world_size(group) == -1`` and a single-rank group has ``1``; both return ``False``.
    """
    if group is None:
        return False
    return _comm().get_world_size(group=group) > 1
