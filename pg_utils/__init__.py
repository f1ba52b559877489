"""Reference implementation of the process-group predicate ``is_parallel``.

DeepSpeed's parallel-dimension helpers take ``group=None`` to mean "this parallel dimension is absent", while
``deepspeed.comm.all_reduce(t, group=None)`` (like ``torch.distributed``) reduces over the **world** group.
``is_parallel`` is the one guard that reconciles the two conventions; callers keep their own collective::

    from deepspeed.comm import pg_utils

    if pg_utils.is_parallel(tp_group):
        dist.all_reduce(t, group=tp_group)
"""

from pg_utils.predicate import is_parallel

__all__ = ["is_parallel"]
