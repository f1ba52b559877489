"""Every construct class of issue #11, as a family: INVALID cases (what must be reported, with its code and
line) and VALID ones (nothing reported). Each case is a small program of its own."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

import bot.analyze.source as source
from bot.analyze import analyze_source
from bot.config import load

CONFIG = load()
HEAD = "import torch.distributed as dist\nfrom deepspeed.comm import pg_utils\n"


def found(body: str) -> list[tuple[str, int]]:
    source = HEAD + textwrap.dedent(body)
    result = analyze_source("pkg/mod.py", source, CONFIG)
    assert result.error is None, result.error
    return [(f.code, f.span.line - 3) for f in result.findings]  # line 1: the body's first line


# an all-to-all autograd Function whose forward shapes data by its group's size (a twin drops that line)
_A2A = """
     import torch
     class _A2A(torch.autograd.Function):
         @staticmethod
         def forward(ctx, x, group):
             n = dist.get_world_size(group)
             assert x.size(0) % n == 0
             ctx.group = group
             if n == 1:
                 return x
             out = torch.empty_like(x)
             dist.all_to_all_single(out, x, group=group)
             return out

         @staticmethod
         def backward(ctx, g):
             n = dist.get_world_size(ctx.group)
             if n == 1:
                 return g, None
             out = torch.empty_like(g)
             dist.all_to_all_single(out, g, group=ctx.group)
             return out, None

     def a2a(x, group=None):
         return _A2A.apply(x, group)
     """

# a group set by a setter that the constructor hands its optional parameter (a twin hands it the world instead)
_SETTER = """
     class Partitioner:
         def __init__(self, mp_group=None):
             self.set_group(mp_group)

         def set_group(self, group):
             self.mp_group = group

         def gather(self, parts, shard):
             if dist.get_world_size(self.mp_group) > 1:
                 dist.all_gather(parts, shard, group=self.mp_group)
     """

# one group's docs say None is the world (a twin says it of any process group)
_DENSE_AND_EXPERTS = """
     def reduce_dense(t, dense_group=None):
         "Average dense gradients. If dense_group is None, the default (world) group is used."
         if dist.get_world_size(dense_group) > 1:
             dist.all_reduce(t, group=dense_group)

     def reduce_experts(t, ep_group=None):
         if dist.get_world_size(ep_group) > 1:
             dist.all_reduce(t, group=ep_group)
     """

# an attribute set from an in-file getter documented as None when the dimension is off (a twin also sets it elsewhere)
_SP_ATTENTION = """
     _SP = None
     def get_sp_group():
         \"\"\"The sequence-parallel group, or None when sequence parallelism is off.\"\"\"
         return _SP
     class Attention:
         def __init__(self):
             self.sp_group = get_sp_group()
         def reduce_lse(self, lse):
             dist.all_reduce(lse, group=self.sp_group)
             return lse
     """

# (construct class, body, expected (code, line in body) list)
CASES = [
    # ---------------------------------------------------------------- narrowing
    ("narrow: is not None", """
     def f(t, g=None):
         if g is not None:
             dist.all_reduce(t, group=g)
     """, [("PG103", 2)]),
    ("guard under `not`: the guard's own reading turns with it (two tests), not inside a longer chain", """
     def f(t, g=None, h=None):
         if not (g is None or dist.get_world_size(g) <= 1):
             dist.all_reduce(t, group=g)
         if not (h is not None and dist.get_world_size(h) > 1):
             return t
         dist.all_reduce(t, group=h)
         same = not (dist.get_world_size(g) > 1 and g is not None and g is h)
         return same
     """, [("PG101", 2), ("PG102", 4), ("PG101", 7)]),
    ("narrow: == None early return", """
     def f(t, g=None):
         if g == None:
             return t
         dist.all_reduce(t, group=g)
     """, [("PG103", 2)]),
    ("narrow: truthiness", """
     def f(t, tp_group=None):
         if tp_group:
             dist.all_reduce(t, group=tp_group)
     """, [("PG103", 2)]),
    ("narrow: not truthiness early exit", """
     def f(t, tp_group=None):
         if not tp_group:
             return t
         dist.all_reduce(t, group=tp_group)
     """, [("PG103", 2)]),
    ("narrow: assert is a precondition, not a guard", """
     def f(t, g=None):
         assert g is not None
         dist.all_reduce(t, group=g)
     """, []),
    ("narrow: assert, then a size early exit on the present group", """
     def f(t, g=None):
         assert g is not None
         if g.size() == 1:
             return t
         dist.all_reduce(t, group=g)
     """, []),
    ("narrow: raise is a precondition, not a guard", """
     def f(t, g=None):
         if g is None:
             raise ValueError("no group")
         dist.all_reduce(t, group=g)
     """, []),
    ("narrow: ... so is a None test whose else raises", """
     def f(t, g=None):
         if g is not None:
             dist.all_reduce(t, group=g)
         else:
             raise ValueError("no group")
     """, []),
    ("narrow: ... and one that picks another backend, the chain's last else raising", """
     def sync(t, g=None, comm=None):
         if g is not None:
             dist.all_reduce(t, group=g)
         elif comm is not None:
             comm.allreduce(t)
         else:
             raise ValueError("a group or a communicator")
     """, []),
    ("narrow: ... but an else that only sometimes raises leaves the None test a guard", """
     def f(t, strict, g=None):
         if g is not None:
             dist.all_reduce(t, group=g)
         elif strict:
             raise ValueError("no group")
     """, [("PG103", 2)]),
    ("narrow: an error returned with a message is a precondition, as raise is", """
     def pull(self, name, buf):
         link = self._links.get(name)
         if link is None:
             return False, f"link {name} was never opened"
         dist.broadcast(buf, src=0, group=link)
         return True, "ok"
     """, []),
    ("narrow: an error message as a plain sentence", """
     def pull(buf, link=None):
         if link is None:
             return {"ok": False, "why": "no link was opened"}
         dist.broadcast(buf, src=0, group=link)
     """, []),
    ("narrow: a size early exit that says so in a message is still a skip: size-only", """
     def sync(buf, group=None):
         if dist.get_world_size(group) == 1:
             return "single rank: nothing to sync"
         dist.all_reduce(buf, group=group)
     """, [("PG104", 2)]),
    ("narrow: a value returned without a message is a skip: None-only", """
     def pull(buf, link=None):
         if link is None:
             return {"ok": False}
         dist.broadcast(buf, src=0, group=link)
     """, [("PG103", 2)]),
    ("narrow: a None demanded on one path only is not the world on the others", """
     def f(x, extra_pg=None, local=False):
         if local:
             if extra_pg is not None:
                 raise ValueError("extra_pg does not go with local tensors")
         if extra_pg is not None:
             dist.all_reduce(x, group=extra_pg)
     """, [("PG103", 5)]),
    ("narrow: assert narrows, then a None-only early exit elsewhere is still one", """
     def f(t, g=None, h=None):
         assert g is not None
         if h is None:
             return t
         dist.all_reduce(t, group=h)
         dist.all_reduce(t, group=g)
     """, [("PG103", 3)]),
    ("narrow: object collectives are collectives too", """
     def push(blobs, dst, pack_grp=None):
         if pack_grp is None:
             return []
         dist.gather_object(blobs, None, dst=dst, group=pack_grp)
         dist.all_gather_object([None], blobs, pack_grp)
     """, [("PG103", 2)]),
    ("split: a None test in a guard and a size early exit inside read as the guard", """
     def gather_all(items, ep_group=None, fused=True):
         if fused and ep_group is not None:
             n = dist.get_world_size(ep_group)
             for item in items:
                 if n == 1:
                     continue
                 dist.all_gather([item] * n, item, group=ep_group)
     """, [("PG101", 2)]),
    ("narrow: continue in a loop", """
     def f(ts, g=None):
         for t in ts:
             if g is None:
                 continue
             dist.all_reduce(t, group=g)
     """, [("PG103", 3)]),
    ("narrow: break in a while loop", """
     def f(ts, g=None):
         while ts:
             if g is None or dist.get_world_size(g) == 1:
                 break
             dist.all_reduce(ts.pop(), group=g)
     """, [("PG102", 3)]),
    ("narrow: elif", """
     def f(t, mode, g=None):
         if mode:
             return t
         elif g is not None and dist.get_world_size(g) > 1:
             dist.all_reduce(t, group=g)
     """, [("PG101", 4)]),
    ("narrow: else branch of a None test", """
     def f(t, g=None):
         if g is None:
             pass
         else:
             dist.all_reduce(t, group=g)
     """, [("PG103", 2)]),
    ("narrow: conditional expression", """
     def f(t, g=None):
         return dist.all_reduce(t, group=g) if g is not None else None
     """, [("PG103", 2)]),
    ("narrow: join loses a narrowing", """
     def f(t, flag, tp_group=None):
         if flag:
             if tp_group is None:
                 return t
         dist.all_reduce(t, group=tp_group)
     def g2(t, tp_group=None):
         if tp_group is not None:
             dist.all_reduce(t, group=tp_group)
     """, [("PG105", 5), ("PG103", 7)]),
    ("narrow: truthiness of a group a call returned", """
     def f(t, model):
         group = model.get_tp_group()
         if group:
             dist.all_reduce(t, group=group)
     """, [("PG103", 3)]),
    ("narrow: a flag from a local predicate stays a flag", """
     def _active(g):
         return g is not None and dist.get_world_size(g) > 1
     def f(t, g=None):
         on = _active(g)
         if on:
             dist.all_reduce(t, group=g)
     """, [("PG107", 1)]),
    # ---------------------------------------------------------------- rebinding
    ("rebind: g = g or world", """
     def f(t, group=None):
         group = group or dist.group.WORLD
         dist.all_reduce(t, group=group)
     def h(t, group=None):
         if group is not None:
             dist.all_reduce(t, group=group)
     """, [("PG103", 5)]),
    ("rebind: if g is None: g = world", """
     def f(t, group=None):
         if group is None:
             group = dist.group.WORLD
         if dist.get_world_size(group) > 1:
             dist.all_reduce(t, group=group)
     """, []),
    ("which None: a parameter that defaults to the world group is the world when None, whatever its annotation", """
     def share(t, grp: ProcessGroup | None = dist.group.WORLD):
         if dist.get_world_size(group=grp) > 1:
             dist.broadcast(t, src=0, group=grp)
     def share_too(t, pg: ProcessGroup | None = None):
         if dist.get_world_size(group=pg) > 1:
             dist.broadcast(t, src=0, group=pg)
     """, [("PG104", 5)]),
    ("which None: a parameter's documentation continued on indented lines says it defaults to the world", """
     class Saver:
         \"\"\"Args:
             pg (ProcessGroup, optional): process group to use for the
                 exchange. Note that this does not have to match the data
                 layout exactly, but should cover its replicas. Defaults to
                 the whole world.
         \"\"\"
         def __init__(self, pg=None):
             self.pg = pg
         def exchange(self, objs):
             if dist.get_world_size(group=self.pg) <= 1:
                 return objs
             dist.all_gather_object(objs, objs[0], group=self.pg)
     """, []),
    ("which None: a file that documents a None group as the world, and never tests one for absence", """
     def share(module, process_group=None):
         \"\"\"process_group: name of the group; if passed as None, will default to the world group.\"\"\"
         return module
     def _reduce(t, group=None):
         if dist.get_world_size(group=group) == 1:
             return t
         dist.all_reduce(t, group=group)
         return t
     """, []),
    ("which None: ... but a file that also tests a group for absence before communicating keeps the size-only test", """
     def share(module, process_group=None):
         \"\"\"process_group: name of the group; if passed as None, will default to the world group.\"\"\"
         return module
     def _reduce(t, group=None):
         if dist.get_world_size(group=group) == 1:
             return t
         dist.all_reduce(t, group=group)
         return t
     def _sync(t, dp=None):
         if dp is not None:
             dist.broadcast(t, 0, group=dp)
     """, [("PG104", 5), ("PG103", 10)]),
    ("which None: a collective run where the group is known to be None runs on the world, so None is the world", """
     def barrier_with_timeout(group=None):
         if dist.get_world_size(group=group) == 1:
             return True
         if group is not None:
             dist.barrier(group=group)
             return True
         dist.barrier(group=group)
         return True
     """, []),
    ("which None: ... or where the None path communicates another way (a new group), the None test picks", """
     def sync_all(grp=None):
         if not dist.is_initialized() or dist.get_world_size(group=grp) == 1:
             return
         if grp is not None:
             dist.barrier(group=grp)
             return
         helper = dist.new_group(backend="gloo")
         dist.monitored_barrier(group=helper)
     """, []),
    ("which None: ... and without that world path the same tests are one guard split over two", """
     def barrier_with_timeout(group=None):
         if dist.get_world_size(group=group) == 1:
             return True
         if group is not None:
             dist.barrier(group=group)
         return True
     """, [("PG101", 2)]),
    ("rebind: conditional world fallback", """
     def f(t, group=None):
         group = dist.group.WORLD if group is None else group
         dist.all_reduce(t, group=group)
     """, []),
    ("rebind: helper result is not known to be None", """
     def f(t, group=None):
         group = make(group)
         if dist.get_world_size(group) > 1:
             dist.all_reduce(t, group=group)
     """, []),
    ("rebind: reassigned to None", """
     def f(t, tp_group):
         tp_group = None
         if dist.get_world_size(tp_group) > 1:
             dist.all_reduce(t, group=tp_group)
     """, [("PG104", 3)]),
    # ---------------------------------------------------------------- aliases and attributes
    ("alias of an attribute", """
     class L:
         def __init__(self, tp_group=None):
             self.tp_group = tp_group
         def forward(self, t):
             grp = self.tp_group
             if grp is not None and dist.get_world_size(grp) > 1:
                 dist.all_reduce(t, group=grp)
     """, [("PG101", 6)]),
    ("getattr(obj, name, None)", """
     class L:
         def forward(self, t):
             if getattr(self, "tp_group", None) is not None:
                 dist.all_reduce(t, group=self.tp_group)
     """, [("PG103", 3)]),
    ("class-level None attribute, size-only guard", """
     class L:
         tp_group = None
         def forward(self, t):
             if dist.get_world_size(self.tp_group) > 1:
                 dist.all_reduce(t, group=self.tp_group)
     """, [("PG104", 4)]),
    ("attribute None in __init__, set in a setter", """
     class L:
         def __init__(self):
             self.ep_group = None
         def set_ep_group(self, group):
             self.ep_group = group
         def forward(self, t):
             if dist.get_world_size(group=self.ep_group) > 1:
                 dist.all_reduce(t, group=self.ep_group)
     """, [("PG104", 7)]),
    ("aliases: an attribute set to a present group by a conditional expression is not optional", """
     class Sharder:
         def __init__(self, outer, shard_pg=None):
             self.shard_pg = outer if shard_pg is None else shard_pg
         def scatter(self, out):
             dist.all_reduce(out, group=self.shard_pg)
         def other(self, out):
             if self.shard_pg is not None:
                 dist.all_reduce(out, group=self.shard_pg)
     """, [("PG103", 7)]),
    ("aliases: a group held in a dict, tested with .get and used by subscript", """
     STATS = {"sum_grp": None, "mean_grp": None}
     def flush(vals, tracker):
         if STATS.get("sum_grp") is not None:
             dist.all_reduce(vals, group=STATS.get("sum_grp"))
         if STATS.get("mean_grp") is not None:
             dist.all_reduce(vals, group=STATS["mean_grp"])
         if tracker.get("avg_group", None) is not None and dist.get_world_size(tracker["avg_group"]) > 1:
             dist.all_reduce(vals, group=tracker["avg_group"])
         if tracker[key] is not None:
             dist.all_reduce(vals, group=tracker[key])
     """, [("PG103", 3), ("PG103", 5), ("PG101", 7)]),
    ("aliases: `getattr(self, 'g', None)` read inline says the attribute may be missing or None", """
     class Block:
         def go(self, t):
             if dist.get_world_size(getattr(self, "sp_group", None)) > 1:
                 dist.all_reduce(t, group=getattr(self, "sp_group", None))
         def other(self, t):
             if dist.get_world_size(self.dp_group) > 1:
                 dist.all_reduce(t, group=self.dp_group)
     """, [("PG104", 3)]),
    # ---------------------------------------------------------------- size provenance
    ("size: group.size()", """
     def f(t, g=None):
         if g is not None and g.size() > 1:
             dist.all_reduce(t, group=g)
     """, [("PG101", 2)]),
    ("size: cached in a local", """
     def f(t, g=None):
         ws = dist.get_world_size(group=g)
         if g is not None and ws > 1:
             dist.all_reduce(t, group=g)
     """, [("PG101", 3)]),
    ("size: walrus", """
     def f(t, g=None):
         if g is not None and (n := dist.get_world_size(g)) > 1:
             dist.all_reduce(t, group=g)
         return n
     """, [("PG101", 2)]),
    ("size: conditional expression with a None fallback", """
     class L:
         def __init__(self, mp_group=None):
             self.mp_group = mp_group
             self.ws = dist.get_world_size(mp_group) if mp_group is not None else 1
         def forward(self, t):
             if self.mp_group is None or self.ws == 1:
                 return t
             dist.all_reduce(t, group=self.mp_group)
     """, [("PG102", 6)]),
    ("size: if/else assignment in the constructor", """
     class L:
         def __init__(self, mp_group=None):
             self.mp_group = mp_group
             if mp_group is not None:
                 self.ws = dist.get_world_size(mp_group)
             else:
                 self.ws = 1
         def forward(self, t):
             if self.mp_group is not None and self.ws > 1:
                 dist.all_reduce(t, group=self.mp_group)
     """, [("PG101", 9)]),
    ("size: property", """
     class L:
         def __init__(self, mp_group=None):
             self.mp_group = mp_group
         @property
         def world(self):
             return dist.get_world_size(group=self.mp_group)
         def forward(self, t):
             if self.mp_group is not None and self.world > 1:
                 dist.all_reduce(t, group=self.mp_group)
     """, [("PG101", 8)]),
    ("size: cached on the instance, no None fallback", """
     class L:
         def __init__(self, mp_group=None):
             self.mp_group = mp_group
             self.mp_size = dist.get_world_size(group=mp_group)
         def forward(self, t):
             if self.mp_size > 1:
                 dist.all_reduce(t, group=self.mp_group)
     """, [("PG106", 6)]),
    ("separate size: len()", """
     def f(t, sizes, g=None):
         if g is None or len(sizes) == 1:
             return t
         dist.all_reduce(t, group=g)
     """, []),
    ("separate size: ... but the len() of something that counts no ranks tests nothing of the group", """
     def gather_all(tensors, g: Optional[ProcessGroup]):
         n = len(tensors)
         if n > 1 and g is not None:
             dist.all_gather(tensors, tensors[0], group=g)
     """, [("PG103", 3)]),
    ("collectives: torch's deprecated `_all_gather_base`, behind a size that is 1 when the group is None", """
     def gather_seq(x, out, g):
         n = 1 if g is None else dist.get_world_size(group=g)
         if n == 1:
             return x
         dist._all_gather_base(out, x, group=g)
         return out
     """, [("PG102", 2)]),
    ("separate size: an argument", """
     def f(t, tp_world_size, g=None):
         if g is not None and tp_world_size > 1:
             dist.all_reduce(t, group=g)
     """, []),
    ("separate size: an mpu getter", """
     def f(t, mpu, g=None):
         if g is None or mpu.get_model_parallel_world_size() == 1:
             return t
         dist.all_reduce(t, group=g)
     """, []),
    ("separate size: arithmetic", """
     def f(t, g=None):
         if g is not None and dist.get_world_size(g) // 2 > 1:
             dist.all_reduce(t, group=g)
     """, []),
    ("separate size: a group that is a call", """
     def f(t, mpu):
         if dist.get_world_size(group=mpu.get_model_parallel_group()) > 1:
             dist.all_reduce(t, group=mpu.get_model_parallel_group())
     """, []),
    ("size: a None-safe local size alone is the whole guard (early exit)", """
     def f(t, g=None):
         n = dist.get_world_size(g) if g is not None else 1
         if n == 1:
             return t
         dist.all_reduce(t, group=g)
     """, [("PG102", 2)]),  # the guard starts at the definition that holds its None test
    ("size: a None-safe size cached in the constructor, tested alone", """
     class L:
         def __init__(self, mp_group=None):
             self.mp_group = mp_group
             self.mp_n = dist.get_world_size(mp_group) if mp_group is not None else 1
         def forward(self, t):
             if self.mp_n > 1:
                 dist.all_reduce(t, group=self.mp_group)
     """, [("PG101", 6)]),
    ("size: default 1 in __init__, set under a None test in a setup method", """
     class Opt:
         def __init__(self):
             self.row_n = 1
         def attach(self, row_pg=None):
             self.row_pg = row_pg
             if row_pg is not None:
                 self.row_n = dist.get_world_size(row_pg)
         def step(self, t):
             if self.row_n > 1:
                 dist.all_reduce(t, group=self.row_pg)
     """, [("PG101", 9)]),
    ("size: a flag attribute over a None-safe size", """
     class Proj:
         def __init__(self):
             self.rep_n = 1
         def attach(self, rep_pg=None, shard=False):
             self.rep_pg = rep_pg
             if rep_pg is not None:
                 self.rep_n = dist.get_world_size(rep_pg)
             self.sharded = shard and self.rep_n > 1
         def gather(self, bufs, t):
             if self.sharded:
                 dist.all_gather(bufs, t, group=self.rep_pg)
     """, [("PG101", 8)]),
    ("size: a default above 1 does not make the size None-safe", """
     class Opt:
         def __init__(self):
             self.row_n = 2
         def attach(self, row_pg=None):
             self.row_pg = row_pg
             if row_pg is not None:
                 self.row_n = dist.get_world_size(row_pg)
         def step(self, t):
             if self.row_n > 1:
                 dist.all_reduce(t, group=self.row_pg)
     """, [("PG105", 10)]),  # not a guard: an optional group that is checked before its size elsewhere
    ("size: another method assigns an unknown value", """
     class Opt:
         def __init__(self, n):
             self.row_n = n
         def attach(self, row_pg=None):
             self.row_pg = row_pg
             if row_pg is not None:
                 self.row_n = dist.get_world_size(row_pg)
         def step(self, t):
             if self.row_n > 1:
                 dist.all_reduce(t, group=self.row_pg)
     """, [("PG105", 10)]),  # not a guard: an optional group that is checked before its size elsewhere
    ("size: .size() of a possibly-None group is not a None-safe guard", """
     def f(t, g=None):
         if g.size() > 1:
             dist.all_reduce(t, group=g)
     """, []),
    ("size: `g.size()` in a function with no collective (it guards point-to-point sends)", """
     def roll(t, cp_group=None):
         if cp_group is None or cp_group.size() == 1:
             return t
         dist.batch_isend_irecv([dist.P2POp(dist.isend, t, 0, group=cp_group)])
     def total(t, dp_group):
         dist.all_reduce(t, group=dp_group)  # the file communicates elsewhere (else it is never parsed)
     """, [("PG102", 2)]),
    ("size: a helper named for group sizes, beside a None test", """
     from megatron.core.utils import get_pg_size
     def f(t, g=None):
         if g is None or get_pg_size(g) <= 1:
             return t
         dist.all_reduce(t, group=g)
     """, [("PG102", 3)]),
    ("size: a helper named for group sizes, alone (what it answers for None is its own)", """
     from megatron.core.utils import get_pg_size
     def f(t, g=None):
         if get_pg_size(g) > 1:
             dist.all_reduce(t, group=g)
     """, []),
    ("size: a truthiness fallback makes a None-safe size too", """
     def f(t, g=None):
         ws = dist.get_world_size(g) if g else 1
         if ws > 1:
             dist.all_reduce(t, group=g)
     """, [("PG101", 2)]),
    ("size provenance: after `self.g = g`, a None-safe size of g tested in the same method guards self.g", """
     class A:
         def __init__(self, t, g=None):
             self.g = g
             self.n = dist.get_world_size(g) if g is not None else 1
             if self.n > 1:
                 dist.all_reduce(t, group=self.g)
     """, [("PG101", 5)]),
    ("size: cached on a module-level instance of a class here, bound under `global`", """
     LAYOUT = None
     class Layout:
         def __init__(self, ranks):
             self.col_grp = dist.new_group(ranks) if len(ranks) > 1 else None
             self.col_n = dist.get_world_size(group=self.col_grp)
     def init_layout(ranks):
         global LAYOUT
         LAYOUT = Layout(ranks)
     def sum_cols(t):
         if LAYOUT.col_n == 1:
             return t
         dist.all_reduce(t, group=LAYOUT.col_grp)
     """, [("PG106", 10)]),
    ("size: cached on a module-level instance bound at module level, read through a local", """
     class Layout:
         def __init__(self, grp=None):
             self.grp = grp
             self.n = dist.get_world_size(self.grp)
     LAYOUT = Layout()
     def sum_cols(t):
         lay = LAYOUT
         if lay.n > 1:
             dist.all_reduce(t, group=lay.grp)
     """, [("PG106", 8)]),
    ("size: a module-level instance whose group is always built", """
     class Layout:
         def __init__(self, ranks):
             self.grp = dist.new_group(ranks)
             self.n = dist.get_world_size(self.grp)
     LAYOUT = Layout([0])
     def sum_cols(t):
         if LAYOUT.n > 1:
             dist.all_reduce(t, group=LAYOUT.grp)
     """, []),
    ("size: a name bound to instances of two classes is no one class's instance", """
     class A:
         def __init__(self, grp=None):
             self.grp = grp
             self.n = dist.get_world_size(self.grp)
     class B:
         def __init__(self):
             self.grp = dist.new_group([0])
             self.n = dist.get_world_size(self.grp)
     LAYOUT = A()
     def swap():
         global LAYOUT
         LAYOUT = B()
     def sum_cols(t):
         if LAYOUT.n > 1:
             dist.all_reduce(t, group=LAYOUT.grp)
     """, []),
    ("size: a parameter named like the module-level instance shadows it", """
     class Layout:
         def __init__(self, grp=None):
             self.grp = grp
             self.n = dist.get_world_size(self.grp)
     LAYOUT = Layout()
     def sum_cols(t, LAYOUT):
         if LAYOUT.n > 1:
             dist.all_reduce(t, group=LAYOUT.grp)
     """, []),
    ("size: an attribute set only to 1 and to a parallel-state getter's size, in a constructor with no collective, is separately supplied", """
     class Reducer:
         def __init__(self, mpu=None):
             if mpu is None:
                 self.tp_grp = None
                 self.tp_n = 1
             else:
                 self.tp_grp = mpu.get_model_parallel_group()
                 self.tp_n = mpu.get_model_parallel_world_size()
         def tp_sum(self, t):
             if self.tp_grp is None or self.tp_n == 1:
                 return
             dist.all_reduce(t, group=self.tp_grp)
     """, []),
    ("size: an attribute set from a constructor's own argument is separately supplied (read in the constructor)", """
     class Reducer:
         def __init__(self, grp=None, parts=1):
             self.grp = grp
             self.parts = parts
         def tp_sum(self, t):
             if self.grp is None or self.parts == 1:
                 return
             dist.all_reduce(t, group=self.grp)
     """, []),
    ("size: ... but a method's parameter of the same name does not make it one", """
     class Reducer:
         def __init__(self, grp=None):
             self.grp = grp
             self.parts = dist.get_world_size(self.grp) if self.grp is not None else 1
         def tp_sum(self, t, parts=2):
             if self.grp is None or self.parts == 1:
                 return
             dist.all_reduce(t, group=self.grp)
     """, [("PG102", 6)]),
    ("size: ... attributes assigned from each other are no size at all (and end)", """
     class Reducer:
         def __init__(self, grp=None):
             self.grp = grp
             self.a = self.b
             self.b = self.a
         def tp_sum(self, t):
             if self.grp is None or self.a == 1:
                 return
             dist.all_reduce(t, group=self.grp)
     """, [("PG103", 7)]),
    ("size: `ws(g) if dist.is_initialized() else 1` is still g's world size when g is None", """
     def gather_seq(x, group=None):
         world = dist.get_world_size(group) if dist.is_initialized() else 1
         if world == 1:
             return x
         out = [x] * world
         dist.all_gather(out, x, group=group)
         return out
     """, [("PG104", 3)]),
    ("size: ... while `ws(g) if g is not None else 1` is None-safe", """
     def gather_seq(x, group=None):
         world = dist.get_world_size(group) if group is not None else 1
         if world == 1:
             return x
         dist.all_gather([x, x], x, group=group)
     """, [("PG102", 2)]),
    # ---------------------------------------------------------------- guards however they are split
    ("guard: nested ifs", """
     def f(t, g=None):
         if g is not None:
             if dist.get_world_size(g) > 1:
                 dist.all_reduce(t, group=g)
     """, [("PG101", 2)]),
    ("guard: consecutive early exits", """
     def f(t, g=None):
         if g is None:
             return t
         if dist.get_world_size(g) == 1:
             return t
         dist.all_reduce(t, group=g)
     """, [("PG102", 2)]),
    ("guard: a flag variable", """
     def f(t, g=None):
         use_tp = g is not None and dist.get_world_size(g) > 1
         if use_tp:
             dist.all_reduce(t, group=g)
     """, [("PG101", 2)]),
    ("guard: a flag on the instance", """
     class L:
         def __init__(self, g=None):
             self.g = g
             self.use_tp = g is not None and dist.get_world_size(g) > 1
         def forward(self, t):
             if self.use_tp:
                 dist.all_reduce(t, group=self.g)
     """, [("PG101", 4)]),
    ("guard: a flag set by the branches of a guard (`if ...: use = True else: use = False`)", """
     def f(t, g=None):
         if g is not None and dist.get_world_size(g) > 1:
             use = True
         else:
             use = False
         if use:
             dist.all_reduce(t, group=g)
     """, [("PG101", 2)]),
    ("guard: ... reversed, and on the instance, from a size that is 1 when the group is None", """
     class Mixer:
         def __init__(self, ring_grp=None):
             self.ring_grp = ring_grp
             if ring_grp is None:
                 ring_n = 1
             else:
                 ring_n = dist.get_world_size(ring_grp)
             if ring_n <= 1:
                 self.use_ring = False
             else:
                 self.use_ring = True
         def forward(self, x):
             if self.use_ring:
                 dist.all_reduce(x, group=self.ring_grp)
     """, [("PG101", 8)]),
    ("guard: a flag on the instance from a local size that is 1 when the group is None", """
     class Mixer:
         def __init__(self, ring_grp=None):
             self.ring_grp = ring_grp
             ring_n = dist.get_world_size(ring_grp) if ring_grp is not None else 1
             self.use_ring = ring_n > 1
         def forward(self, x):
             if self.use_ring:
                 dist.all_reduce(x, group=self.ring_grp)
     """, [("PG101", 5)]),
    ("guard: ... a flag from a local size of a group the class does not keep says nothing of its own group", """
     class Mixer:
         def __init__(self, other, ring_grp=None):
             self.ring_grp = ring_grp
             n = dist.get_world_size(other)
             self.use_ring = n > 1
         def forward(self, x):
             if self.use_ring:
                 dist.all_reduce(x, group=self.ring_grp)
     """, []),
    ("guard: an attribute set to a group only past a single-rank exit: its None test is the whole guard", """
     class Opt:
         def __init__(self):
             self.fold_grp = None
         def configure(self, spec, grp):
             if spec is None or spec.tp_size <= 1:
                 self.fold_grp = None
                 return
             self.fold_grp = grp
         def step(self, t):
             if self.fold_grp is not None:
                 dist.all_reduce(t, group=self.fold_grp)
     """, []),
    ("guard: ... or inside a test that holds for several ranks only", """
     class Opt:
         def __init__(self, spec, grp):
             self.fold_grp = None
             if spec.tp_size > 1:
                 self.fold_grp = grp
         def step(self, t):
             if self.fold_grp is not None:
                 dist.all_reduce(t, group=self.fold_grp)
     """, []),
    ("guard: ... but one set unconditionally anywhere in the class keeps its None test None-only", """
     class Opt:
         def __init__(self):
             self.fold_grp = None
         def configure(self, spec, grp):
             if spec is None or spec.tp_size <= 1:
                 self.fold_grp = None
                 return
             self.fold_grp = grp
         def reset(self, grp):
             self.fold_grp = grp
         def step(self, t):
             if self.fold_grp is not None:
                 dist.all_reduce(t, group=self.fold_grp)
     """, [("PG103", 12)]),
    ("guard: a flag spelled as a conditional expression with a constant branch is the `and` it is", """
     def f(t, g=None):
         use = dist.get_world_size(g) > 1 if g is not None else False
         if use:
             dist.all_reduce(t, group=g)
     """, [("PG101", 2)]),
    ("guard: ... and `True if g is None else ...` the `or`, an early exit", """
     def f(t, g=None):
         alone = True if g is None else dist.get_world_size(g) == 1
         if alone:
             return t
         dist.all_reduce(t, group=g)
         return t
     """, [("PG102", 2)]),
    ("guard: ... a conditional expression choosing between two tests is no such flag", """
     def f(t, fast, g=None):
         use = (g is not None) if fast else (dist.get_world_size(g) > 1)
         return use
     """, []),
    ("guard: a flag wrapped in bool() is the test it wraps", """
     def f(t, g=None):
         use = bool(g is not None)
         if use:
             dist.all_reduce(t, group=g)
     """, [("PG103", 2)]),
    ("guard: a flag on the instance set from a None test in a constructor with no collective of its own", """
     class Layer:
         def __init__(self, g=None):
             self.g = g
             self.on = g is not None
         def forward(self, t):
             if self.on:
                 dist.all_reduce(t, group=self.g)
     """, [("PG103", 4)]),
    ("guard: ... spelled `bool(g)`", """
     class Layer:
         def __init__(self, g=None):
             self.g = g
             self.on = bool(g)
         def forward(self, t):
             if self.on:
                 dist.all_reduce(t, group=self.g)
     """, [("PG103", 4)]),
    ("guard: ... a flag a method with nothing else to say sets from a None-safe size the class keeps", """
     class Mixer:
         def __init__(self):
             self.n = 1
             self.g = None
         def setup(self, g=None):
             self.g = g
             if g is not None:
                 self.n = dist.get_world_size(g)
         def layout(self):
             self.split = self.n > 1
     """, [("PG101", 10)]),
    ("guard: a None-safe size tested before building an object handed the group (a parallel layer)", """
     class Encoder:
         def __init__(self, tp_group=None):
             self.tp_size = dist.get_world_size(tp_group) if tp_group is not None else 1
             if self.tp_size > 1:
                 self.embed = _VocabParallelEmbedding(1000, tp_group)
             else:
                 self.embed = Embedding(1000)
     """, [("PG101", 4)]),
    ("guard: ... not one whose branch only does local work or builds an object without the group", """
     class Encoder:
         def __init__(self, tp_group=None):
             self.tp_size = dist.get_world_size(tp_group) if tp_group is not None else 1
             if self.tp_size > 1:
                 self.embed = Embedding(1000 // self.tp_size)
     """, []),
    ("guard: a flag set from a None-safe size by if/else, its communication out of sight (a layer it builds)", """
     class Attention:
         def __init__(self, sp_group=None):
             if sp_group is None:
                 sp_n = 1
             else:
                 sp_n = dist.get_world_size(sp_group)
             if sp_n > 1:
                 self.use_ulysses = True
             else:
                 self.use_ulysses = False
     """, [("PG101", 7)]),
    ("guard: ... `bool(n > 1)` on the instance from a conditional expression, read only for layout here", """
     class KVCache:
         def __init__(self, sp_group=None):
             self.sp_group = sp_group
         def create(self, heads):
             ws = dist.get_world_size(self.sp_group) if self.sp_group is not None else 1
             self.sharded = bool(ws > 1)
             return heads // ws if self.sharded else heads
     """, [("PG101", 5)]),
    ("guard: ... one operand of an `and` chain, a local", """
     def plan(x, grp=None, fused=False):
         n = 1 if grp is None else dist.get_world_size(grp)
         go = n > 1 and not fused
         return x if not go else x.chunk(n)
     """, [("PG101", 2)]),
    ("guard: ... the single-rank side stored (`alone = n == 1`)", """
     def plan(x, grp=None):
         n = dist.get_world_size(grp) if grp is not None else 1
         alone = n == 1
         return x if alone else x * 2
     """, [("PG101", 2)]),  # the guard starts at the definition that holds its None test
    ("guard: ... a flag of a size that is the world's when the group is None is no guard", """
     def plan(x, grp=None):
         n = dist.get_world_size(grp) if grp is not None else dist.get_world_size()
         go = n > 1
         return x if not go else x * 2
     """, []),
    ("guard: ... nor one of a size that may be get_world_size(None)", """
     def plan(x, grp=None):
         n = dist.get_world_size(grp)
         go = n > 1
         return x if not go else x * 2
     """, []),
    ("guard: ... nor a None-safe size used only as a number", """
     def plan(x, grp=None):
         n = dist.get_world_size(grp) if grp is not None else 1
         return x.chunk(n)
     """, []),
    ("guard: ... nor a flag from a device mesh's None-safe size (a mesh also lays out local work)", """
     def plan(x, sp_mesh=None):
         n = sp_mesh.size() if sp_mesh is not None else 1
         split = n > 1
         return x.chunk(n) if split else x
     """, []),
    ("guard: consecutive None and size exits before a helper that communicates on the world are one guard", """
     def _scatter_from_rank0(t):
         dist.broadcast(t, src=0)
     def shard(model, ep_group=None):
         if ep_group is None:
             return 0
         ep_size = dist.get_world_size(ep_group)
         if ep_size <= 1:
             return 0
         _scatter_from_rank0(model)
         return 1
     """, [("PG102", 4)]),
    ("guard: ... as they are before a world collective in the same function", """
     def split_experts(model, grp):
         if grp is None:
             return 0
         n = dist.get_world_size(grp)
         if n <= 1:
             return 0
         for w in model.weights():
             dist.scatter(w, scatter_list=None, src=0)
         return n
     """, [("PG102", 2)]),
    ("guard: a None-safe size tested before a method that communicates on a group it fetches itself", """
     class Pipe:
         def encode(self, x):
             cp_group = self.get_group()
             n = 1 if cp_group is None else cp_group.size()
             if x.ndim > 4 and n > 1:
                 return self.encode_cp(x)
             return x
         def encode_cp(self, x):
             out = [x]
             dist.all_gather(out, x, group=get_cp_group())
             return out
     """, [("PG101", 4)]),
    ("guard: ... and nothing when that method only works locally", """
     class Pipe:
         def encode(self, x):
             cp_group = self.get_group()
             n = 1 if cp_group is None else cp_group.size()
             if x.ndim > 4 and n > 1:
                 return self.encode_split(x, n)
             return x
         def encode_split(self, x, n):
             return x.chunk(n)
     """, []),
    ("guard: ... but with nothing communicating after them they only pick local work", """
     def _slice_rows(t, n):
         return t.chunk(n)[0]
     def shard(model, ep_group=None):
         if ep_group is None:
             return model
         ep_size = dist.get_world_size(ep_group)
         if ep_size <= 1:
             return model
         return _slice_rows(model, ep_size)
     """, []),
    ("guard: sends to a group's members by global rank communicate on that group", """
     def roll(t, cp_group=None):
         cp_size = cp_group.size() if cp_group is not None else 1
         if cp_size == 1:
             return t
         ranks = dist.get_process_group_ranks(group=cp_group)
         me = dist.get_rank(group=cp_group)
         peer = ranks[(me + 1) % cp_size]
         dist.isend(t, dst=peer)
         return t
     """, [("PG102", 2)]),
    ("guard: ... a send to a rank computed otherwise is the world's, and guarded by nothing of the group", """
     def roll(t, nxt, cp_group=None):
         cp_size = cp_group.size() if cp_group is not None else 1
         if cp_size == 1:
             return t
         dist.isend(t, dst=nxt)
         return t
     """, []),
    ("guard: predicate copy as a function", """
     def _active(group):
         return group is not None and dist.get_world_size(group) > 1
     def f(t, g=None):
         if _active(g):
             dist.all_reduce(t, group=g)
     """, [("PG107", 1)]),
    ("guard: predicate copy as a method", """
     class L:
         def _tp_on(self):
             return self.tp_group is not None and dist.get_world_size(self.tp_group) > 1
         def forward(self, t):
             if self._tp_on():
                 dist.all_reduce(t, group=self.tp_group)
     """, [("PG107", 2)]),
    ("guard: predicate copy as a property on a size the class caches with a None fallback (no hot line in it)", """
     class L:
         def bind(self, sp=None):
             self._sp = sp
             if sp is not None:
                 self._sp_n = dist.get_world_size(sp)
             else:
                 self._sp_n = 1
         @property
         def _sp_on(self):
             "Whether sequence parallelism is on."
             return self._sp is not None and self._sp_n > 1
         def forward(self, t):
             if self._sp_on:
                 dist.all_reduce(t, group=self._sp)
     """, [("PG107", 9)]),
    ("none: an attribute the class only sets to a group of every rank (`new_group()` with no ranks: a copy of the"
     " world) is no absent dimension; one of some ranks is", """
     class Worker:
         def setup(self, tp_ranks):
             self._all_gloo = dist.new_group(backend="gloo")
             self._tp = dist.new_group(tp_ranks)
         def shutdown(self, t):
             if getattr(self, "_all_gloo", None) is not None:
                 dist.barrier(group=self._all_gloo)
             if self._tp is not None:
                 dist.all_reduce(t, group=self._tp)
     """, [("PG103", 8)]),
    ("guard: predicate copy as a lambda", """
     active = lambda group: group is not None and dist.get_world_size(group) > 1
     def f(t, g=None):
         if active(g):
             dist.all_reduce(t, group=g)
     """, [("PG107", 1)]),
    ("guard: a predicate copy spelled as early returns, and its callers guarded by it", """
     def use_group(g):
         "True when g spans ranks."
         if g is None:
             return False
         return dist.get_world_size(g) > 1
     def _serial(g):
         if g is None or dist.get_world_size(g) == 1:
             return True
         return False
     def f(t, g=None):
         if use_group(g):
             dist.all_reduce(t, group=g)
         if _serial(g):
             return
         dist.broadcast(t, 0, group=g)
     """, [("PG107", 1), ("PG107", 6)]),
    ("guard: a predicate copy as if/else returns, and a property of consecutive early returns", """
     def active(group):
         if group is not None and group.size() > 1:
             return True
         else:
             return False
     class L:
         @property
         def sharded(self):
             if self.g is None:
                 return False
             if dist.get_world_size(self.g) <= 1:
                 return False
             return True
     """, [("PG107", 1), ("PG107", 8)]),
    ("guard: a predicate copy as an if/elif/else of returns", """
     def active(group):
         if group is None:
             return False
         elif dist.get_world_size(group) < 2:
             return False
         else:
             return True
     """, [("PG107", 1)]),
    ("guard: early returns that are not one test are not a copy", """
     def maybe(g):
         if g is None:
             return False
         log("checked")
         return dist.get_world_size(g) > 1
     def either(g, n):
         if n > 1:
             return True
         return g is not None
     """, []),
    ("size provenance: a property of early returns is a None-safe size", """
     class L:
         @property
         def tp_size(self):
             if self.tp_group is None:
                 return 1
             return dist.get_world_size(self.tp_group)
         def go(self, t):
             if self.tp_size > 1:
                 dist.all_reduce(t, group=self.tp_group)
     """, [("PG101", 8)]),
    ("split: a None test made inside a predicate helper is flagged at the call, in the guard's function", """
     def _member(pg):
         return pg is not None and dist.get_rank(group=pg) >= 0
     def sync(t, coll=None):
         if coll is not None:
             grp = coll.dp
             if _member(grp):
                 n = dist.get_world_size(grp)
                 if n > 1:
                     dist.all_reduce(t, group=grp)
     """, [("PG101", 6)]),
    ("guard: a group's full test whose `if` only raises checks the configuration: it guards nothing", """
     def check(coll):
         g = getattr(coll, "tp", None)
         if g is not None and g.size() != 1:
             raise ValueError("tensor parallelism is not supported here")
         if g is not None and g.size() > 1:
             dist.all_reduce(coll.t, group=g)
     """, [("PG101", 5)]),
    ("size provenance: backward's test of the group forward left on ctx is read as forward's, which shapes data by the world's size first",
     _A2A, []),
    ("size provenance: ... and where forward shapes nothing first, both size-only tests on the optional group are reported",
     _A2A.replace("             assert x.size(0) % n == 0\n", ""), [("PG104", 7), ("PG104", 16)]),
    ("flow facts: a setter's attribute may be None when another method hands it an optional parameter",
     _SETTER, [("PG104", 9)]),
    ("flow facts: ... and not when every method hands it a group",
     _SETTER.replace("self.set_group(mp_group)", "self.set_group(mp_group or dist.group.WORLD)"), []),
    ("which None: docs that make one named group the world speak for that group, not for the file's others",
     _DENSE_AND_EXPERTS, [("PG104", 7)]),
    ("which None: ... while docs that make any process group left None the world speak for the file",
     _DENSE_AND_EXPERTS.replace("If dense_group is None", "If the process group is None"), []),
    ("which None: a parallel state's group that could not be had (`except: g = None`) is no evidence of absence", """
     from megatron.core import parallel_state as mpu
     def average(loss):
         try:
             dp_group = mpu.get_data_parallel_group()
         except Exception:
             dp_group = None
         dist.all_reduce(loss, group=dp_group)
     """, []),
    ("guard: in a file that never communicates, a group's full test that only slices weights by rank is local work", """
     class Conv:
         def weights(self, w, cp_group=None):
             if cp_group is not None and cp_group.size() > 1:
                 n = w.shape[0] // cp_group.size()
                 w = w[cp_group.rank() * n:(cp_group.rank() + 1) * n]
             return w
     """, []),
    ("guard: ... but a group handed on under the test may communicate where it goes: a guard", """
     class Moe:
         def build(self, tp_group=None):
             if tp_group is not None and tp_group.size() > 1:
                 self.tp = ExpertTP(self.dim, tp_group)
     """, [("PG101", 3)]),
    ("guard: a device mesh's full test that only raises, or runs a world collective, guards nothing on the mesh", """
     from torch.distributed.tensor import distribute_tensor
     class Lin:
         def __init__(self, w, tp_mesh=None, ep_mesh=None, style=None):
             self.tp_mesh = tp_mesh
             if self.tp_mesh is not None and self.tp_mesh.size() > 1 and style is None:
                 raise ValueError("a parallel style is needed")
             if ep_mesh is not None and ep_mesh.size() > 1:
                 w = distribute_tensor(w, ep_mesh, [])
             self.w = w
     def release(sp_mesh=None):
         if sp_mesh is not None and sp_mesh.size() > 1:
             dist.barrier()
     def gather(t, sp_mesh=None):
         if sp_mesh is not None and sp_mesh.size() > 1:
             dist.all_reduce(t, group=sp_mesh.get_group())
     """, [("PG101", 7), ("PG101", 14)]),
    ("guard: a device mesh stands for its group (`mesh.size()`, `group=mesh`), in a file of functional collectives only", """
     from torch.distributed._functional_collectives import all_gather_tensor
     def gather_rows(x, dim, row_mesh=None):
         if row_mesh is None or row_mesh.size() == 1:
             return x
         return all_gather_tensor(x, gather_dim=dim, group=row_mesh)
     def weights(a, mesh=None):
         if mesh and mesh.size() > 1:
             a = _gather_cols(a, mesh)
         return a
     def _gather_cols(x, mesh):
         parts = [x] * mesh.size()
         dist.all_gather(parts, x, group=mesh.get_group())
         return parts
     def reduce_loss(loss, loss_mesh=None):
         if loss_mesh is not None:
             dist.all_reduce(loss, group=loss_mesh.get_group())
     """, [("PG102", 3), ("PG101", 7)]),
    ("guard: a mesh test around local padding is no guard when the communication after it has tests of its own", """
     def embed(x, n, sp_mesh=None):
         if sp_mesh is not None and sp_mesh.size() > 1:
             x = x.chunk(sp_mesh.size(), dim=0)[sp_mesh.get_local_rank()]
         y = x * 2
         if sp_mesh is not None and sp_mesh.size() > 1:
             parts = [y] * sp_mesh.size()
             dist.all_gather(parts, y, group=sp_mesh.get_group())
             y = parts
         return y
     """, [("PG101", 5)]),
    ("guard: ... nor a mesh early exit whose other side only frees memory", """
     def release(refs, sp_mesh=None):
         if sp_mesh is None or sp_mesh.size() == 1:
             free(refs)
         elif sp_mesh.get_local_rank() == 0:
             keep(refs)
         dist.barrier()
     """, []),
    ("guard: a full test of a device mesh around local work only (splitting by rank) guards no communication", """
     from torch.distributed.tensor import distribute_tensor
     def split_labels(labels, sp_mesh=None):
         if sp_mesh is not None and sp_mesh.size() > 1:
             labels = labels.chunk(sp_mesh.size(), dim=1)[sp_mesh.get_local_rank()]
         return labels
     class Attn:
         def forward(self, x, sp_mesh=None):
             if sp_mesh and sp_mesh.size() > 1:
                 return self.forward_sp(x, sp_mesh)
             return x
         def forward_sp(self, x, sp_mesh):
             return self._exchange(x, sp_mesh)
         def _exchange(self, x, sp_mesh):
             out = [x] * sp_mesh.size()
             dist.all_gather(out, x, group=sp_mesh.get_group())
             return out
     def replicate(param, tp_mesh=None, mesh=None):
         tp_on = tp_mesh is not None and tp_mesh.size() > 1
         if tp_on:
             return distribute_tensor(param, mesh, [])
         return param
     """, [("PG101", 8), ("PG101", 18)]),
    ("none: common work on another group before an early exit is not a choice of how to communicate", """
     class Pusher:
         def __init__(self):
             self.ext_group = None
         def push(self, flat, sync_group):
             if self.ext_group is None:
                 dist.barrier(group=sync_group)
                 return
             dist.broadcast(flat, src=0, group=self.ext_group)
             dist.barrier(group=sync_group)
     """, [("PG103", 5)]),
    ("guard: the predicate itself", """
     def f(t, g=None):
         if pg_utils.is_parallel(g):
             dist.all_reduce(t, group=g)
     """, []),
    ("guard: or-chain whose size is supplied separately", """
     def f(t, tp_world_size, group=None):
         if group is None or tp_world_size == 1:
             return t
         dist.all_reduce(t, group=group)
     """, []),
    ("guard: flags on groups named `*_grp`, then a loop over (buffers, group) pairs", """
     def fold(a_grads, b_grads, a_grp=None, b_grp=None):
         a_on = a_grp is not None and a_grp.size() > 1
         b_on = b_grp is not None and b_grp.size() > 1
         if not a_on and not b_on:
             return
         for bufs, grp in ((a_grads, a_grp), (b_grads, b_grp)):
             if not bufs or grp is None or grp.size() <= 1:
                 continue
             for t in bufs:
                 dist.all_reduce(t, group=grp)
     """, [("PG101", 2), ("PG101", 3), ("PG102", 7)]),
    ("across: a closure called only under a full guard is guarded there", """
     class Spreader:
         def __init__(self, pg=None):
             self.pg = pg  # None: not sharded
         def push(self, out, inp):
             def _gather():
                 dist.all_gather_into_tensor(out, inp, group=self.pg)
             if self.pg is not None and dist.get_world_size(self.pg) > 1:
                 _gather()
     """, [("PG101", 7)]),
    ("across: ... called under a None-only test, the test is None-only for the closure's collective", """
     def gather_rows(out, inp, group=None):
         def _gather():
             dist.all_gather_into_tensor(out, inp, group=group)
         if group is not None:
             _gather()
     """, [("PG103", 4)]),
    ("across: a helper that tests only the size of the group a caller passes, possibly None: size-only there", """
     def _sum_over(t, grp):
         if dist.get_world_size(grp) == 1:
             return t
         dist.all_reduce(t, group=grp)
         return t
     def combine(t, grp=None):
         return _sum_over(t, grp)
     """, [("PG104", 2)]),
    ("across: ... a caller that tests the group for None first: that test is None-only, the size test unreported", """
     def _sum_over(t, grp):
         if dist.get_world_size(grp) == 1:
             return t
         dist.all_reduce(t, group=grp)
         return t
     def combine(t, grp=None):
         if grp is None:
             return t
         return _sum_over(t, grp)
     """, [("PG103", 7)]),
    ("across: ... as it is when the helper's size is the group's own `.size()`, through an autograd Function", """
     def _sum(x, *, pg):
         if pg.size() == 1:
             return
         dist.all_reduce(x, group=pg)
     class _Reduce(torch.autograd.Function):
         @staticmethod
         def forward(ctx, x, pg):
             _sum(x, pg=pg)
             return x
     def reduce_region(x, pg: Optional[ProcessGroup]):
         if pg is None:
             return x
         return _Reduce.apply(x, pg)
     """, [("PG103", 11)]),
    ("across: a partial bound to a name runs where it is called", """
     import functools
     def f(t, g=None):
         red = functools.partial(dist.all_reduce, group=g)
         if g is not None:
             red(t)
     def h(t, g=None):
         red = functools.partial(dist.all_reduce, group=g)
         red = print
         red(t)
     def k(params, g=None):
         if g is None:
             return
         op = functools.partial(dist.broadcast, src=0, group=g)
         communicate(params, op)
     """, [("PG103", 4), ("PG103", 11)]),
    # ---------------------------------------------------------------- which None
    ("none: evidence from another None-checked collective", """
     def f(t, g=None):
         dist.all_reduce(t, group=g)
     def h(t, g=None):
         if g is None:
             return
         dist.barrier(group=g)
     """, [("PG105", 2), ("PG103", 4)]),
    ("none: a sibling calls the helper with no group: its size test is the world's", """
     def gather_rows(x, group=None):
         n = dist.get_world_size(group)
         if n == 1:
             return x
         dist.all_gather([x] * n, x, group=group)
     def lengths_everywhere(xs):
         return gather_rows(len(xs))
     """, []),
    ("none: ... or passes None itself", """
     def gather_rows(x, group=None):
         if dist.get_world_size(group) == 1:
             return x
         dist.all_gather([x], x, group=group)
     def lengths_everywhere(xs):
         return gather_rows(len(xs), group=None)
     """, []),
    ("none: a caller without a group of a helper that tests None says nothing", """
     def norm(t, ep_group=None):
         if ep_group is not None:
             dist.all_reduce(t, group=ep_group)
         return t
     def sized(t, tp_group=None):
         if dist.get_world_size(tp_group) > 1:
             dist.all_reduce(t, group=tp_group)
     def total(t):
         return norm(t)
     """, [("PG103", 2), ("PG104", 6)]),
    ("none: asserted to be the default group: its size is the world's", """
     def sizes_everywhere(t, group=None):
         assert group is None, "a non-default group is not implemented"
         if dist.get_world_size(group) == 1:
             return [t]
         dist.all_gather([t], t, group=group)
     """, []),
    ("none: the cached size shapes data before its test: None is the world's size", """
     def all_to_all_4d(x, group=None):
         n = dist.get_world_size(group)
         out = x.reshape(x.shape[0], n, -1)
         if n > 1:
             dist.all_to_all_single(out, out, group=group)
         return out
     """, []),
    ("none: ... shaping only after the test says nothing", """
     def all_to_all_4d(x, group=None):
         n = dist.get_world_size(group)
         if n > 1:
             x = x.reshape(x.shape[0], n, -1)
             dist.all_to_all_single(x, x, group=group)
         return x
     """, [("PG104", 3)]),
    ("none: a size test after which the group communicates either way picks how, not whether", """
     def dispatch(x, overlap, ep_group=None):
         if not overlap or dist.get_world_size(ep_group) == 1:
             dist.all_to_all_single(x, x, group=ep_group)
         else:
             for chunk in x.chunk(2):
                 dist.all_to_all_single(chunk, chunk, group=ep_group)
         return x
     """, []),
    ("none: a comment in the class says None means absent, for another object's group", """
     class Table:
         def __init__(self, env):
             # env.process_group is None for a local, single-host environment
             self._env = env
         def reset(self, w):
             dist.broadcast(w, src=0, group=self._env.process_group)
     """, [("PG105", 6)]),
    ("none: ... a comment that says None is the default group says the opposite", """
     class Table:
         def __init__(self, env):
             # env.process_group is None for the default (world) group
             self._env = env
         def reset(self, w):
             dist.broadcast(w, src=0, group=self._env.process_group)
     """, []),
    ("none: the words for absence: off, to disable, isn't enabled (comments and docstrings)", """
     def a(t, sp_grp=None):
         # sp_grp is None when sequence parallelism is off
         dist.all_reduce(t, group=sp_grp)
     def b(t, sp_grp=None):
         \"\"\"sp_grp: pass None to disable sequence parallelism.\"\"\"
         dist.all_reduce(t, group=sp_grp)
     def c(t, sp_grp=None):
         # sp_grp stays None if sequence parallelism isn't enabled
         dist.all_reduce(t, group=sp_grp)
     """, [("PG105", 3), ("PG105", 6), ("PG105", 9)]),
    ("none: ... and without a word on it, another object's attribute is not known to be optional", """
     class Table:
         def __init__(self, env):
             self._env = env
         def reset(self, w):
             dist.broadcast(w, src=0, group=self._env.process_group)
     """, []),
    ("none: a name the file runs on the world when None means the world in a size-only test elsewhere", """
     def mean_metrics(buf, pg=None):
         if pg is None:
             dist.all_reduce(buf)
         else:
             dist.all_reduce(buf, group=pg)
     def sum_denominator(trainer, d):
         pg = getattr(trainer, "shard_pg", None)
         if dist.get_world_size(group=pg) > 1:
             dist.all_reduce(d, group=pg)
     """, []),
    ("none: ... not when the file also tests that name for absence before communicating", """
     def mean_metrics(buf, pg=None):
         if pg is None:
             dist.all_reduce(buf)
         else:
             dist.all_reduce(buf, group=pg)
     def reduce_tp(t, pg=None):
         if pg is not None:
             dist.all_reduce(t, group=pg)
     def sum_denominator(trainer, d):
         pg = getattr(trainer, "shard_pg", None)
         if dist.get_world_size(group=pg) > 1:
             dist.all_reduce(d, group=pg)
     """, [("PG103", 7), ("PG104", 11)]),
    ("none: a helper whose every in-file caller passes a group that is there (filled with the default group)", """
     from .utils import get_default_group
     def reduce_sum(t, group=None):
         if group is not None:
             dist.all_reduce(t, group=group)
     def broadcast_objects(data, src=0, group=None):
         if group is None:
             group = get_default_group()
         _broadcast_objects(data, src, group)
     def _broadcast_objects(data, src=0, group=None):
         dist.broadcast(data, src=src, group=group)
     """, [("PG103", 3)]),
    ("none: a docstring saying None is the default group, over the function's one optional group", """
     def all_reduce(t, pg=None):
         \"\"\"Own wrapper: None means the default group; no-op when not distributed.\"\"\"
         if dist.get_world_size(pg) > 1:
             dist.all_reduce(t, group=pg)
     """, []),
    ("none: ... not when the function takes two optional groups (which one is meant?)", """
     def all_reduce(t, tp_group=None, dp_group=None):
         \"\"\"None means the default group.\"\"\"
         if dist.get_world_size(tp_group) > 1:
             dist.all_reduce(t, group=tp_group)
     """, [("PG104", 3)]),
    ("none: a group set to None when its condition fails stands for an absent dimension", """
     def train_step(loss, mesh, dims):
         grp = mesh["dp_cp"].get_group() if dims else None
         dist.all_reduce(loss, op=dist.ReduceOp.AVG, group=grp)
     """, [("PG105", 3)]),
    ("none: ... also written as an if/else statement", """
     def norm(sq, state):
         if state.is_initialized():
             shard_grp = state.get_model_parallel_group()
         else:
             shard_grp = None
         dist.all_reduce(sq, group=shard_grp)
     """, [("PG105", 6)]),
    ("none: ... but not when the branch that writes None takes the world's size: None is the world there", """
     def load(state, load_n=None):
         world = dist.get_world_size()
         if load_n is None:
             load_n = world
             load_grp = None
         else:
             load_grp = dist.new_group(ranks=list(range(load_n)))
         dist.broadcast_object_list([state], src=0, group=load_grp)
     """, []),
    ("none: a None test whose None branch asks the world's size maps None to the world: no None-only guard", """
     def ranks_of(group, kvs):
         if group is None:
             return list(range(dist.get_world_size()))
         members = dist.get_process_group_ranks(group)
         dist.broadcast(kvs, members[0], group)
         return members
     """, []),
    ("none: ... a local named `world_size` there (1 for None) is not the world", """
     def gather_p(p, world_size, mesh_grp=None):
         if mesh_grp is not None:
             dist.all_reduce(p, group=mesh_grp)
         else:
             assert world_size == 1
         return p
     """, [("PG103", 2)]),
    ("none: a choice between two groups, neither written None, is no such evidence", """
     def sync(counts, tp_group=None, dp_group=None, dims=False):
         pg = tp_group if dims else dp_group
         dist.all_reduce(counts, group=pg)
     """, []),
    ("none: ... not when the condition only asks whether a parameter is there (its None passed on)", """
     def sync_counts(counts, mesh=None):
         pg = mesh.get_group() if mesh is not None else None
         dist.all_reduce(counts, group=pg)
     """, []),
    ("none: a comment about another thing of the same name does not make a local optional", """
     class Opt:
         def state(self):
             # None where the group carries no blocks at all, so an unsplit run stays as it was
             return [group.get("blocks") for group in self.param_groups]
         def exchange(self, t, mesh):
             group = mesh.get_group(0)
             dist.all_to_all(t, t, group=group)
     """, []),
    ("none: ... while such a comment on a parameter is evidence", """
     class Opt:
         # the group is None when there is no tensor parallelism
         def exchange(self, t, group):
             dist.all_to_all(t, t, group=group)
     """, [("PG105", 4)]),
    ("none: ... guarded, nothing is unguarded", """
     def train_step(loss, mesh, dims):
         grp = mesh["dp_cp"].get_group() if dims else None
         if grp is not None:
             dist.all_reduce(loss, op=dist.ReduceOp.AVG, group=grp)
     """, [("PG103", 3)]),
    ("none: the size is the world's when the group is None: None is the world", """
     class Strategy:
         def __init__(self):
             self.n_all = dist.get_world_size()
         def mean(self, t, group=None):
             n = dist.get_world_size(group) if group is not None else self.n_all
             t /= n
             dist.all_reduce(t, group=group)
         def total(self, t, group=None):
             n = dist.get_world_size(group) if group is not None else self.world_size
             dist.all_reduce(t, group=group)
             return n
     """, []),
    ("none: a parameter given the world when None, then kept on self, is never None", """
     class Loader:
         def __init__(self, grp=None):
             if grp is None:
                 grp = dist.GroupMember.WORLD
             self.grp = grp
         def run(self, items):
             if dist.get_world_size(self.grp) <= 1:
                 return items
             dist.all_gather_object([None], items, group=self.grp)
     """, []),
    ("none: 'defaults to the whole world' in the docstring", """
     def plan(meta, grp=None):
         \'\'\'grp: the group to spread work over. Defaults to the whole world.\'\'\'
         n = dist.get_world_size(group=grp)
         if n <= 1:
             return None
         dist.all_gather_object([None] * n, meta, group=grp)
     """, []),
    ("none: documented as absent", """
     def f(t, ep_group=None):
         '''ep_group: None when there is no expert parallelism.'''
         dist.all_reduce(t, group=ep_group)
     """, [("PG105", 3)]),
    ("none: documented as the default group", """
     def f(t, group=None):
         '''group: the process group; if None, the default process group is used.'''
         dist.all_reduce(t, group=group)
     def h(t, group=None):
         if group is not None:
             dist.all_reduce(t, group=group)
     """, [("PG103", 5)]),
    ("none: documented as the default group, tested by size only", """
     def f(t, group=None):
         "group: the process group; if None, the default process group is used."
         if dist.get_world_size(group) > 1:
             dist.all_reduce(t, group=group)
     """, []),
    ("none: the class docstring documents the world as the default, numpy style", """
     class AllReduceOp:
         '''Sum over ranks.

         Parameters
         ----------
         process_group : ProcessGroup, default = world group
             Group to reduce over.
         overlap : bool, default = False
             If None, nothing overlaps.
         '''
         def __init__(self, process_group=None, overlap=False):
             self.process_group = process_group
             self.size = dist.get_world_size(self.process_group)
         def forward(self, x):
             if self.size == 1:
                 return x
             dist.all_reduce(x, group=self.process_group)
             return x
         def backward(self, g):
             if dist.get_world_size(self.process_group) == 1:
                 return g
             dist.all_reduce(g, group=self.process_group)
             return g
     """, []),
    ("none: a docstring's next parameter entry says nothing about this one", """
     class Layer:
         '''Args:
             process_group (ProcessGroup): the group to shard over, defaults to None.
             seq_mode (str): If None, sequence parallel is not used.
         '''
         def __init__(self, process_group=None):
             self.process_group = process_group
         def b(self, t):
             dist.all_gather([t], t, group=self.process_group)
     """, []),
    ("none: a wrapper called without a group in the None branch gathers over the world: None means the world", """
     from accelerate.utils import gather as world_gather
     def collect(t, pg=None):
         if pg is None:
             return world_gather(t)
         parts = [t] * dist.get_world_size(group=pg)
         dist.all_gather(parts, t, group=pg)
         return parts
     """, []),
    ("size provenance: any parameter compared with 1 is a count the caller supplies", """
     def receive_loop(recv, tp_n, pick):
         pg = None
         if tp_n > 1:
             pg = pick()
         def share(obj):
             if pg is None:
                 return obj
             dist.broadcast_object_list([obj], src=0, group=pg)
             return obj
         while True:
             msg = share(recv())
             if tp_n > 1:
                 dist.barrier(group=pg)
     """, [("PG103", 6)]),
    ("none: world collective in the None branch", """
     def f(t, group=None):
         if group is not None:
             dist.barrier(group=group)
         else:
             dist.barrier()
     """, []),
    ("none: a None test that chooses how to communicate, not whether", """
     def f(t, ts, cg):
         if cg.intra is not None:
             dist.all_reduce(t, group=cg.intra)
         else:
             dist.all_reduce(t, group=cg.flat)
     """, []),
    ("none: ... an elif that tests the same group again decides its own collective, the first test chooses nothing", """
     def orthogonalize(us, dim, pg: Optional[ProcessGroup]):
         if dim is not None and pg is not None:
             dist.all_to_all(us, us, group=pg)
         elif pg is not None:
             dist.all_gather(us, us[0], group=pg)
     """, [("PG103", 2), ("PG103", 4)]),
    ("none: ... but a None test whose other side communicates on another group, tested later, still chooses", """
     def f(t, cg):
         if cg.intra is not None:
             dist.all_reduce(t, group=cg.intra)
         elif cg.flat is not None:
             dist.all_reduce(t, group=cg.flat)
     """, [("PG103", 4)]),
    ("none: no evidence at all", """
     def f(t, group=None):
         dist.all_reduce(t, group=group)
     """, []),
    ("which None: the same group's world size shapes the buffers", """
     def f(t, g=None):
         out = [t.clone() for _ in range(dist.get_world_size(g))]
         dist.all_gather(out, t, group=g)
         return out
     def h(t, g=None):
         if g is not None:
             dist.all_reduce(t, group=g)
     """, [("PG103", 6)]),
    ("which None: documented as all devices", """
     class Plan:
         def __init__(self, group=None):
             '''group: the process group; if None, use all available devices.'''
             self.group = group
             self.size = dist.get_world_size(group)
         def sync(self, ts):
             if self.size > 1:
                 for t in ts:
                     dist.broadcast(t, src=0, group=self.group)
     """, []),
    ("size: a list of the group's members, one entry when the group is None", """
     def gather(score, seq_grp=None):
         members = dist.get_process_group_ranks(seq_grp) if seq_grp else [0]
         if len(members) == 1:
             return [score]
         out = [score.clone() for _ in members]
         dist.all_gather(out, score, group=seq_grp)
         return out
     def reduce(x, g=None):
         if len(dist.get_process_group_ranks(g) if g is not None else [0]) > 1:
             dist.all_reduce(x, group=g)
     def rebound(x, g=None, extra=()):
         members = dist.get_process_group_ranks(g) if g else [0]
         members = list(extra)
         if len(members) == 1:
             return x
         dist.all_reduce(x, group=g)
     """, [("PG102", 2), ("PG101", 9)]),
    ("which None: an attribute the class always sets with a world fallback", """
     class M:
         def __init__(self, pg=None):
             self.pg = pg or dist.group.WORLD
         def f(self, t):
             if self.pg is not None:
                 dist.all_reduce(t, group=self.pg)
     class N:
         def __init__(self, pg=None):
             self.pg = dist.group.WORLD if pg is None else pg
         def f(self, t):
             if self.pg is not None:
                 dist.all_reduce(t, group=self.pg)
     """, []),
    ("which None: a conditional world that does not stand for None keeps the None test", """
     class M:
         def __init__(self, tp=None, use_tp=True):
             self.pg = tp if use_tp else dist.group.WORLD
         def f(self, t):
             if self.pg is not None:
                 dist.all_reduce(t, group=self.pg)
     """, [("PG103", 5)]),
    ("size: a bound of the code's own that also rules out one rank is no None-only guard", """
     def f(t, g=None, min_ranks=4):
         if g is not None and dist.get_world_size(g) > 2:
             dist.all_reduce(t, group=g)
         if g is not None and dist.get_world_size(g) >= min_ranks:
             dist.all_reduce(t, group=g)
         if g is None or dist.get_world_size(g) < 4:
             return t
         dist.all_reduce(t, group=g)
     """, []),
    ("size: the size held equal to a count the code supplies is tested too: no None-only guard (LABELING.md: not"
     " none-only when the group's size is tested beside it); `!=` it is not", """
     def f(t, cp_size, g=None):
         if g is not None and dist.get_world_size(g) == cp_size:
             dist.all_gather([t] * cp_size, t, group=g)
         if g is not None and cp_size != dist.get_world_size(g):
             dist.all_reduce(t, group=g)
     """, [("PG103", 4)]),
    ("world: a helper's optional group that every call in the file hands the world is the world there", """
     def _stats(a, pg=None):
         n = dist.get_world_size(pg) if dist.is_initialized() else 1
         if n > 1:
             dist.all_reduce(a, group=pg)
         return a
     def _sum(a, pg=None):
         if dist.get_world_size(pg) > 1:
             dist.all_reduce(a, group=pg)
     def other(t, pg=None):
         if pg is not None:
             dist.barrier(group=pg)
     def one(a, tp=None):
         _sum(a, pg=tp)
         return _stats(a, pg=dist.group.WORLD)
     def two(a):
         return _stats(a, dist.group.WORLD)
     """, [("PG104", 7), ("PG103", 10)]),
    ("size: a bound one rank passes leaves the None test alone", """
     def f(t, g=None):
         if g is not None and dist.get_world_size(g) > 0:
             dist.all_reduce(t, group=g)
     """, [("PG103", 2)]),
    ("copy: `return bool(...)` of the predicate's chain", """
     def has_dp(g):
         return bool(g is not None and dist.get_world_size(g) > 1)
     """, [("PG107", 1)]),
    ("which None: buffers shaped by the group's size, but the docs say None is off", """
     def gather(t, sp_group=None):
         '''Gather t.

         Args:
             sp_group: the sequence-parallel group, or None when sequence parallelism is off.
         '''
         out = [t.clone() for _ in range(dist.get_world_size(sp_group))]
         dist.all_gather(out, t, group=sp_group)
         return out
     """, [("PG105", 8)]),
    ("which None: a size used only in a test is no such evidence", """
     def f(t, g=None):
         if dist.get_world_size(g) > 1:
             pass
         dist.all_gather([t], t, group=g)
     def h(t, g=None):
         if g is not None:
             dist.all_reduce(t, group=g)
     """, [("PG105", 4), ("PG103", 6)]),
    # ---------------------------------------------------------------- across functions
    ("across: a helper that fills a None group from a getter: a caller's None does not reach the collective", """
     from .state import get_sp_group
     def reduce_loss(loss, group):
         if group is None:
             group = get_sp_group()
         dist.all_reduce(loss, group=group)
     def loss_of(loss, group=None):
         # group is None when sequence parallelism is disabled
         return reduce_loss(loss, group)
     """, []),
    ("across: ... without the fill-in the caller's None reaches it: reported at the call", """
     def reduce_loss(loss, group):
         dist.all_reduce(loss, group=group)
     def loss_of(loss, group=None):
         # group is None when sequence parallelism is disabled
         return reduce_loss(loss, group)
     """, [("PG105", 5)]),
    ("across: a plain wrapper whose group defaults to None (the world, as torch's): a caller's absent group"
     " reaches the world through it, reported at each call that passes it unguarded", """
     def _reduce(t, group=None):
         dist.all_reduce(t, group=group)
         return t
     class Layer:
         def __init__(self, sp_group=None):
             self.sp_group = sp_group
         def backward(self, t):
             if self.sp_group is not None:
                 _reduce(t, self.sp_group)
             return _reduce(t, self.sp_group)
         def other(self, t):
             return _reduce(t, self.sp_group)
     """, [("PG103", 8), ("PG105", 10), ("PG105", 12)]),
    ("across: ... no call with an absent group, nothing", """
     def _reduce(t, group=None):
         dist.all_reduce(t, group=group)
         return t
     class Layer:
         def __init__(self, sp_group=None):
             self.sp_group = sp_group
         def backward(self, t):
             return _reduce(t, self.sp_group)
     """, []),
    ("across: ... a wrapper that says its None is absent is reported itself, not again at the call", """
     def _reduce(t, group=None):
         # group is None when sequence parallelism is off
         dist.all_reduce(t, group=group)
         return t
     def f(t, g=None):
         if g is not None:
             dist.broadcast(t, 0, group=g)
         return _reduce(t, g)
     """, [("PG105", 3), ("PG103", 6)]),
    ("across: ... a wrapper whose buffer is sized by the group (None counts the world there) is not reported"
     " through its callers either", """
     def _sync(t, group=None):
         out = [t for _ in range(dist.get_world_size(group))]
         dist.all_gather(out, t, group)
         return out
     def f(t, g=None):
         if g is not None:
             dist.broadcast(t, 0, group=g)
         return _sync(t, g)
     """, [("PG103", 6)]),
    ("across: ... the group it is given still gets through: a None test at the call is None-only", """
     from .state import get_sp_group
     def gather(t, group=None):
         group = get_sp_group() if group is None else group
         out = [t.clone() for _ in range(2)]
         dist.all_gather(out, t, group=group)
         return out
     def gather_outputs(t, group):
         if group is None:
             return t
         return gather(t, group)
     """, [("PG103", 8)]),
    ("calls: the guard around a call into a communicating helper is that collective's guard", """
     def _reduce(t, group):
         dist.all_reduce(t, group=group)
     def a(t, g=None):
         if g is None:
             return t
         if dist.get_world_size(g) == 1:
             return t
         _reduce(t, g)
     def b(t, g=None):
         n = dist.get_world_size(g) if g is not None else 1
         if n > 1:
             _reduce(t, g)
     def c(t, g=None):
         if g is not None:
             if dist.get_world_size(g) > 1:
                 _reduce(t, g)
     def d(t, g=None):
         if dist.get_world_size(g) > 1:
             _reduce(t, g)
     """, [("PG102", 4), ("PG101", 10), ("PG101", 14), ("PG104", 18)]),
    ("calls: a size and its group set together from a list, the collective in a helper", """
     def _a2a(x, group):
         dist.all_to_all_single(x, x, group=group)
     def forward(x, groups):
         sub, sub_n = None, 1
         if isinstance(groups, list):
             sub = groups[0]
             sub_n = get_distributed_world_size(sub)
         if sub_n > 1:
             _a2a(x, sub)
     """, [("PG101", 8)]),
    ("calls: an autograd Function's forward leaves the size and its group on ctx for backward", """
     import torch
     class _Mix(torch.autograd.Function):
         @staticmethod
         def forward(ctx, x, groups):
             sub, sub_n = None, 1
             if isinstance(groups, list):
                 sub = groups[0]
                 sub_n = dist.get_world_size(sub)
             ctx.sub, ctx.sub_n = sub, sub_n
             return x
         @staticmethod
         def backward(ctx, g):
             n = ctx.sub_n
             if n > 1:
                 dist.all_reduce(g, group=ctx.sub)
             return g, None
     """, [("PG101", 14)]),
    ("calls: a size an autograd forward leaves on ctx without its group is not read as one", """
     import torch
     class _Mix(torch.autograd.Function):
         @staticmethod
         def forward(ctx, x, g=None):
             ctx.n = dist.get_world_size(g) if g is not None else 1
             return x
         @staticmethod
         def backward(ctx, grad):
             if ctx.n > 1:
                 dist.all_reduce(grad, group=other_group())
             return grad, None
     """, []),
    ("size provenance: a size from an int argument on one path is supplied separately", """
     class RowProj:
         def __init__(self, shards=1, grp=None):
             self.grp = grp
             if grp is None:
                 self.shards = shards
             else:
                 self.shards = dist.get_world_size(grp)
         def forward(self, y):
             if self.shards > 1:
                 dist.all_reduce(y, group=self.grp)
             return y
     """, []),
    ("calls: a project's wrapper named for a collective, imported from another file, called with the group", """
     from .comm_utils import all_gather_raw, _fsdp_gather_tensors
     class Isp:
         def __init__(self, process_group=None):
             self.process_group = process_group
         def gather(self, t):
             if dist.get_world_size(self.process_group) <= 1:
                 return t
             return all_gather_raw(t, self.process_group)
     def refresh(ws, t, fsdp_group=None):
         if ws is not None and fsdp_group is not None:
             _fsdp_gather_tensors(fsdp_group, [t.shape], ws)
     """, [("PG104", 6), ("PG103", 10)]),
    ("calls: a wrapper's body is elsewhere: never reported unguarded, never for `.contiguous()`", """
     from mypkg.comm import reduce_scatter_raw, all_reduce
     def f(t, group=None):
         if group is not None:
             dist.barrier(group=group)
         reduce_scatter_raw(t, group)
         all_reduce(t.contiguous(), group=group)
     """, [("PG103", 3)]),
    ("calls: not wrappers: no group passed, a method of some object, a torch function", """
     from mypkg.comm import gather_stats
     from torch import gather
     def f(t, idx, coordinator, group=None):
         if group is not None:
             gather_stats(t)
             coordinator.all_gather(t, group)
             gather(t, 0, idx)
     """, []),
    ("calls: an imported autograd Function named for a collective, run with `.apply`", """
     from .functions import AllGather
     def f(x, tp_group=None):
         if tp_group is not None:
             x = AllGather.apply(x, tp_group)
         return x
     """, [("PG103", 3)]),
    ("calls: a collective-named function of an imported module", """
     from mypkg.distributed import utils as distributed_utils
     def load(t, group=None):
         if group is None:
             return t
         distributed_utils.broadcast(t, 0, group)
     """, [("PG103", 3)]),
    ("calls: a closure defined under a guard runs under it", """
     import tree
     class L:
         def __init__(self, slice_group=None):
             self.slice_group = slice_group
             if slice_group is None:
                 self.slice_size = 1
             else:
                 self.slice_size = slice_group.size()
         def forward(self, x):
             if self.slice_size > 1:
                 def gather(t):
                     dist.all_gather([t], t, group=self.slice_group)
                     return t
                 x = tree.map_structure(gather, x)
             return x
     """, [("PG101", 10)]),
    ("calls: ... a closure's own parameter shadows the guarded name", """
     def f(xs, g=None, h=None):
         if g is not None:
             def one(t, g):
                 dist.all_reduce(t, group=g)
             for t in xs:
                 one(t, h)
     """, []),
    ("calls: forward packs the group on ctx as a tuple, backward unpacks it", """
     import torch
     class _Split(torch.autograd.Function):
         @staticmethod
         def forward(ctx, x, n, grp):
             ctx.saved = n, grp
             return x
         @staticmethod
         def backward(ctx, g):
             n, grp = ctx.saved
             dist.all_reduce(g, group=grp)
             return g, None, None
     def f(x, tp_group=None):
         if tp_group is not None:
             x = _Split.apply(x, 2, tp_group)
         return x
     """, [("PG103", 13)]),
    ("calls: ... or as several attributes at once", """
     import torch
     class _Split(torch.autograd.Function):
         @staticmethod
         def forward(ctx, x, n, grp):
             ctx.n, ctx.grp = n, grp
             return x
         @staticmethod
         def backward(ctx, g):
             dist.all_reduce(g, group=ctx.grp)
             return g, None, None
     def f(x, tp_group=None):
         if tp_group is not None:
             x = _Split.apply(x, 2, tp_group)
         return x
     """, [("PG103", 12)]),
    ("calls: groups in a table of dicts, the test and the call spelled differently", """
     def reduce_tracker(tracker):
         for name in tracker:
             values = tracker[name]["values"]
             if tracker[name].get("avg_group") is not None:
                 dist.all_reduce(values, group=tracker[name]["avg_group"])
     """, [("PG103", 4)]),
    ("calls: a collective chosen into a local, then called with the group", """
     from .comm import all_reduce_raw, reduce_scatter_raw
     def finish(grad, process_group=None, sequence_parallel=False):
         if process_group is not None:
             reduce_fn = reduce_scatter_raw if sequence_parallel else all_reduce_raw
             grad, handle = reduce_fn(grad, process_group, async_op=True)
         return grad
     def finish_world(t, pg=None):
         op = dist.all_reduce
         if pg is not None:
             op(t, group=pg)
     """, [("PG103", 3), ("PG103", 9)]),
    ("calls: helper guarded by all callers", """
     def _reduce(t, group):
         dist.all_reduce(t, group=group)
     def f(t, g=None):
         if g is not None and dist.get_world_size(g) > 1:
             _reduce(t, g)
     """, [("PG101", 4)]),
    ("calls: optional group flows into a helper", """
     def _reduce(t, group):
         dist.all_reduce(t, group=group)
     def f(t, g=None):
         _reduce(t, g)
     def h(t, g=None):
         if g is not None:
             dist.barrier(group=g)
     """, [("PG105", 4), ("PG103", 6)]),
    ("calls: None-only guard before a helper", """
     def _reduce(t, group):
         dist.all_reduce(t, group=group)
     def f(t, g=None):
         if g is not None:
             _reduce(t, g)
     """, [("PG103", 4)]),
    ("calls: two helpers deep", """
     def _inner(t, group):
         dist.all_reduce(t, group=group)
     def _outer(t, group):
         _inner(t, group)
     def f(t, g=None):
         if g is not None:
             _outer(t, g)
     """, [("PG103", 6)]),
    ("calls: three helpers deep is as far as it goes", """
     def _a(t, group):
         dist.all_reduce(t, group=group)
     def _b(t, group):
         _a(t, group)
     def _c(t, group):
         _b(t, group)
     def f(t, g=None):
         if g is not None:
             _c(t, g)
     def _d(t, group):
         _c(t, group)
     def too_far(t, g=None):
         if g is not None:
             _d(t, g)
     """, [("PG103", 8)]),
    ("calls: autograd Function", """
     import torch
     class Reduce(torch.autograd.Function):
         @staticmethod
         def forward(ctx, group, x):
             ctx.group = group
             return x
         @staticmethod
         def backward(ctx, g):
             dist.all_reduce(g, group=ctx.group)
             return None, g
     def f(x, tp_group=None):
         if tp_group is not None:
             return Reduce.apply(tp_group, x)
         return x
     """, [("PG103", 12)]),
    ("calls: functools.partial", """
     import functools
     def f(t, g=None):
         if g is not None:
             reduce = functools.partial(dist.all_reduce, group=g)
             reduce(t)
     """, [("PG103", 3)]),
    ("calls: a collective handed to asyncio.to_thread runs there", """
     import asyncio
     async def f(t, g=None):
         if g is not None:
             await asyncio.to_thread(dist.all_reduce, t, group=g)
     """, [("PG103", 3)]),
    ("calls: functional collectives", """
     import torch.distributed._functional_collectives as funcol
     def f(t, g=None):
         if g is not None:
             return funcol.all_reduce(t, "sum", g)
     """, [("PG103", 3)]),
    ("calls: torch.distributed.nn.functional", """
     from torch.distributed.nn import functional as dnnf
     def f(t, g=None):
         if g is not None:
             return dnnf.all_reduce(t, group=g)
     """, [("PG103", 3)]),
    ("calls: a submodule of a comm module", """
     from torch.distributed import distributed_c10d as c10d
     def f(t, g=None):
         if g is not None:
             c10d.all_reduce(t, group=g)
     """, [("PG103", 3)]),
    ("calls: point-to-point sends are guarded like collectives", """
     def send_next(t, group=None):
         if group is not None:
             dist.send(t, 1, group=group)
     """, [("PG103", 2)]),
    ("calls: P2POp's group, positional, before batch_isend_irecv", """
     def roll(t, group=None, shifts=1):
         if group is None or shifts == 0:
             return t
         ops = [dist.P2POp(dist.isend, t, 1, group), dist.P2POp(dist.irecv, t, 0, group)]
         for work in dist.batch_isend_irecv(ops):
             work.wait()
         return t
     """, [("PG103", 2)]),
    ("calls: a static method called through its class is a helper", """
     import torch
     class Roll(torch.autograd.Function):
         @staticmethod
         def _impl(t, group):
             dist.all_reduce(t, group=group)
             return t
         @staticmethod
         def forward(ctx, t, group):
             if group is None:
                 return t
             return Roll._impl(t, group)
     """, [("PG103", 9)]),
    ("calls: ... a method called through its class binds the instance it is passed", """
     class Layer:
         def reduce(self, t, group):
             dist.all_reduce(t, group=group)
     class Sub(Layer):
         def forward(self, t, group=None):
             if group is not None:
                 Layer.reduce(self, t, group)
     """, [("PG103", 6)]),
    ("calls: torch_xla's collectives take replica lists, not process groups", """
     import torch_xla.core.xla_model as xm
     def share(t, replicas=None):
         if replicas is not None:
             xm.all_reduce(xm.REDUCE_SUM, [t], groups=replicas)
         return t
     """, []),
    ("copy: a predicate whose chain also checks the group can be asked (hasattr) is still a copy", """
     def _is_tp(tp_group):
         return tp_group is not None and hasattr(tp_group, "size") and tp_group.size() > 1
     def reduce(t, tp_group=None):
         if _is_tp(tp_group):
             dist.all_reduce(t, group=tp_group)
     """, [("PG107", 1)]),
    ("copy: ... but not when another operand decides too", """
     def _is_tp(tp_group, enabled):
         return tp_group is not None and enabled and tp_group.size() > 1
     """, [("PG101", 2)]),
    ("copy: a predicate that fetches its own group, False on every other return", """
     from .state import get_cp_group
     def is_cp_active():
         try:
             group = get_cp_group()
             return group is not None and dist.get_world_size(group) > 1
         except RuntimeError:
             return False
     """, [("PG107", 2)]),
    ("copy: ... not when another return says something else", """
     from .state import get_cp_group
     def is_cp_active():
         try:
             group = get_cp_group()
             return group is not None and dist.get_world_size(group) > 1
         except RuntimeError:
             return True
     """, [("PG101", 5)]),
    ("helpers: a None-safe size exit before a helper whose own optional group a supplied size decides", """
     def swap(t, group=None):
         out = t.new_empty(t.shape)
         dist.all_to_all_single(out, t, group=group)
         return out
     def scatter_in(t, n=1, grp=None):
         if n == 1:
             return t
         return swap(t, group=grp)
     def forward(t, grp=None):
         n = dist.get_world_size(grp) if grp is not None else 1
         if n == 1:
             return t
         return scatter_in(t, n=n, grp=grp)
     """, [("PG102", 10)]),
    ("helpers: ... and when the innermost helper tests the size itself, that test is size-only", """
     def swap(t, group=None):
         if dist.get_world_size(group) == 1:
             return t
         out = t.new_empty(t.shape)
         dist.all_to_all_single(out, t, group=group)
         return out
     def scatter_in(t, n=1, grp=None):
         if n == 1:
             return t
         return swap(t, group=grp)
     def forward(t, grp=None):
         n = dist.get_world_size(grp) if grp is not None else 1
         if n == 1:
             return t
         return scatter_in(t, n=n, grp=grp)
     """, [("PG104", 2), ("PG102", 12)]),
    ("helpers: a None test alone before such a helper is not None-only (the supplied size decides there)", """
     def swap(t, group=None):
         out = t.new_empty(t.shape)
         dist.all_to_all_single(out, t, group=group)
         return out
     def scatter_in(t, n=1, grp=None):
         if n == 1:
             return t
         return swap(t, group=grp)
     def forward(t, n, grp=None):
         if grp is not None:
             return scatter_in(t, n=n, grp=grp)
         return t
     """, []),
    ("helpers: a size-only test at the call, the size tested again inside: the helper's finding only", """
     def swap(t, group=None):
         if dist.get_world_size(group) == 1:
             return t
         out = t.new_empty(t.shape)
         dist.all_to_all_single(out, t, group=group)
         return out
     def forward(t, grp):
         if dist.get_world_size(grp) > 1:
             return swap(t, group=grp)
         return t
     """, [("PG104", 2)]),
    ("getter: a None test of what a getter hands back only for several ranks is the whole guard", """
     def tp_if_parallel(module):
         g = getattr(module, "tp_group", None)
         if g is None:
             return None
         n = dist.get_world_size(group=g)
         return g if n > 1 else None
     def sync(value, module):
         pg = tp_if_parallel(module)
         if pg is None:
             return value
         dist.all_reduce(value, group=pg)
         return value
     """, []),
    ("getter: ... not when it hands back a non-member group too (`n != 1`): None-only", """
     def tp_if_parallel(module):
         g = getattr(module, "tp_group", None)
         if g is None:
             return None
         return g if dist.get_world_size(group=g) != 1 else None
     def sync(value, module):
         pg = tp_if_parallel(module)
         if pg is not None:
             dist.all_reduce(value, group=pg)
         return value
     """, [("PG103", 8)]),
    ("getter: ... nor when it hands back the group whatever its size", """
     def tp_of(module):
         return getattr(module, "tp_group", None)
     def sync(value, module):
         pg = tp_of(module)
         if pg is not None:
             dist.all_reduce(value, group=pg)
         return value
     """, [("PG103", 5)]),
    ("size helper: an in-file size helper that answers 1 for None is the module's own guard, alone", """
     def pg_len(grp=None):
         if not dist.is_initialized() or grp is None:
             return 1
         return grp.size()
     class Shuttle:
         def __init__(self, ready):
             self.xp_grp = dist.new_group() if ready else None
         def collect(self, t):
             if pg_len(self.xp_grp) == 1:
                 return [t]
             parts = [t.clone() for _ in range(pg_len(self.xp_grp))]
             dist.all_gather(parts, t, group=self.xp_grp)
             return parts
     """, []),
    ("size helper: ... its exit says None is an absent dimension: a sibling's bare collective is unguarded", """
     def pg_len(grp=None):
         if not dist.is_initialized() or grp is None:
             return 1
         return grp.size()
     class Shuttle:
         def __init__(self, ready):
             self.xp_grp = dist.new_group() if ready else None
         def collect_scales(self, t):
             parts = [t.clone() for _ in range(pg_len(self.xp_grp))]
             dist.all_gather(parts, t, group=self.xp_grp)
             return parts
         def collect(self, t):
             if pg_len(self.xp_grp) == 1:
                 return [t]
             parts = [t.clone() for _ in range(pg_len(self.xp_grp))]
             dist.all_gather(parts, t, group=self.xp_grp)
             return parts
     """, [("PG105", 10)]),
    ("size helper: an in-file world-size wrapper tested alone on an optional group is size-only", """
     def pg_len(grp):
         return dist.get_world_size(grp)
     def sync(t, grp=None):
         if pg_len(grp) > 1:
             dist.all_reduce(t, group=grp)
     """, [("PG104", 4)]),
    ("size helper: ... its default parameter is what it answers for None, beside a None test: one early exit", """
     def grp_len(grp, default=1):
         if grp is None:
             return default
         return dist.get_world_size(grp)
     def sync_grad(g, xp_grp=None):
         if xp_grp is None or grp_len(xp_grp) <= 1:
             return g
         dist.all_reduce(g, group=xp_grp)
         return g
     """, [("PG102", 6)]),
    ("size helper: ... but a helper whose None test also names the group elsewhere measures nothing known", """
     def grp_len(grp):
         if grp is None or grp.rank() < 0:
             return 1
         return grp.size()
     def sync_grad(g, n, xp_grp=None):
         if n > 1 and grp_len(xp_grp) > 1:
             dist.all_reduce(g, group=xp_grp)
         return g
     """, []),
    ("spelling: the group's size method fetched with getattr: `callable` is the None test, its call the size", """
     def max_over_stages(vals, stage_grp):
         size_fn = getattr(stage_grp, "size", None)
         if not callable(size_fn) or size_fn() <= 1:
             return vals
         dist.all_reduce(vals, op=dist.ReduceOp.MAX, group=stage_grp)
         return vals
     """, [("PG102", 3)]),
    ("spelling: ... the None test alone before the collective is None-only", """
     def max_over_stages(vals, stage_grp):
         size_fn = getattr(stage_grp, "size", None)
         if callable(size_fn):
             dist.all_reduce(vals, op=dist.ReduceOp.MAX, group=stage_grp)
         return vals
     """, [("PG103", 3)]),
    ("spelling: ... not another method, nor a size method of something that is no group", """
     def max_over_stages(vals, stage_grp, table):
         rank_fn = getattr(stage_grp, "rank", None)
         if callable(rank_fn):
             dist.all_reduce(vals, op=dist.ReduceOp.MAX, group=stage_grp)
         size_fn = getattr(table, "size", None)
         if not callable(size_fn) or size_fn() <= 1:
             return vals
         dist.all_reduce(vals, op=dist.ReduceOp.MAX, group=stage_grp)
         return vals
     """, []),
    ("attributes: set from an optional parameter only where it is known present is never None", """
     class Shard:
         def __init__(self, mp_grp=None, sync=False):
             self.sync = sync
             if sync:
                 assert mp_grp is not None
                 self.mp_grp = mp_grp
         def norm(self, t):
             if self.sync:
                 dist.all_reduce(t, group=self.mp_grp)
     class Owner:  # (the name is tested for None elsewhere in the file: evidence that None means absent)
         def __init__(self, mp_grp=None):
             self.mp_grp = mp_grp
         def clip(self, t):
             if self.mp_grp is not None and dist.get_world_size(self.mp_grp) > 1:
                 dist.all_reduce(t, group=self.mp_grp)
     class Other:
         def __init__(self, mp_grp=None):
             if mp_grp is not None:
                 self.mp_grp = mp_grp
         def go(self, t):
             dist.all_reduce(t, group=self.mp_grp)
     class Third:
         def __init__(self, mp_grp=None):
             if mp_grp is None:
                 raise ValueError("needs a group")
             self.mp_grp = mp_grp
         def go(self, t):
             dist.all_reduce(t, group=self.mp_grp)
     """, [("PG101", 14)]),
    ("attributes: ... but set from it before the test, or on the path where it is None, it may be None", """
     class Shard:
         def __init__(self, mp_grp=None, sync=False):
             self.sync = sync
             self.mp_grp = mp_grp
             if sync:
                 assert mp_grp is not None
         def norm(self, t, grp=None):
             if self.mp_grp is not None and dist.get_world_size(self.mp_grp) > 1:
                 dist.all_reduce(t, group=self.mp_grp)
             if self.sync:
                 dist.all_reduce(t, group=self.mp_grp)
     class Other:
         def __init__(self, mp_grp=None):
             if mp_grp is None:
                 self.mp_grp = mp_grp
         def norm(self, t):
             if self.mp_grp is not None and dist.get_world_size(self.mp_grp) > 1:
                 dist.all_reduce(t, group=self.mp_grp)
             dist.all_reduce(t, group=self.mp_grp)
     """, [("PG101", 8), ("PG105", 11), ("PG101", 17), ("PG105", 19)]),
    ("calls: a process group's own collectives (`pg.allreduce(x)`, `pg.broadcast(t, 0)`) behind a None test", """
     def stamp(t, pg=None):
         if pg is None:
             return t
         pg.broadcast(t, 0)
         return t
     class Sync:
         def __init__(self, dp_group=None):
             self._dp_group = dp_group
         def step(self, t):
             if self._dp_group is not None:
                 self._dp_group.allreduce([t])
             if self._dp_group is not None and self._dp_group.size() > 1:
                 self._dp_group.allgather([t], [t])
     """, [("PG103", 2), ("PG103", 10), ("PG101", 12)]),
    ("calls: ... not a coordinator's like-named method, nor a module's, and no unguarded call (None raises there)", """
     import torch.distributed as pg
     def sync(t, tp_group=None, pg_handle=None):
         if tp_group is not None:
             tp_group.broadcast(t, 0)
         if tp_group is not None:
             tp_group.barrier()
         if pg_handle:
             pg.barrier()
         pg_handle.allreduce([t])
     """, []),
    ("helpers: an autograd forward that stores its group on ctx and gathers on `ctx.group` runs on that parameter", """
     class Gather(torch.autograd.Function):
         @staticmethod
         def forward(ctx, group, x):
             ctx.group = group
             out = torch.empty(4)
             dist.all_gather_into_tensor(out, x, group=ctx.group)
             return out
         @staticmethod
         def backward(ctx, g):
             return None, g
     def gather_heads(x, sp_group=None):
         if not sp_group:
             return x
         return Gather.apply(sp_group, x)
     """, [("PG103", 12)]),
    ("calls: positional group", """
     def f(t, g=None):
         if g is not None:
             dist.all_reduce(t, dist.ReduceOp.SUM, g)
     """, [("PG103", 2)]),
    ("narrow: a walrus bound in the None test, then tested by its name", """
     def f(t, tracker, g=None):
         for key in ("sum_group", "avg_group"):
             if (pg := tracker.get(key)) is not None:
                 dist.barrier(pg)
         if (h := g) is not None and dist.get_world_size(h) > 1:
             dist.all_reduce(t, group=h)
     """, [("PG103", 3), ("PG101", 5)]),
    ("rebind: a mapping's .get answers None for a missing key; an indexed entry does not", """
     def f(t, groups):
         ep = groups.get("ep")
         if dist.get_world_size(ep) > 1:
             dist.all_reduce(t, group=ep)
         tp = groups["tp"]
         if dist.get_world_size(tp) > 1:
             dist.all_reduce(t, group=tp)
     """, [("PG104", 3)]),
    ("closures: a lambda runs under the test it is made under; its parameters shadow", """
     def f(params, sp_group=None, g=None):
         if sp_group is not None:
             hooks = [p.register_hook(lambda x: dist.all_reduce(x, group=sp_group)) for p in params]
         if g is not None:
             fns = [lambda g: dist.all_reduce(params[0], group=g)]
     """, [("PG103", 2)]),
    ("closures: a partial bound under a size-only test is called in a nested hook", """
     import functools
     def make(sp_group=None):
         if dist.get_world_size(sp_group) > 1:
             reduce = functools.partial(dist.all_reduce, group=sp_group)
             def hook(grad):
                 reduce(grad)
             return hook
     """, [("PG104", 3)]),
    ("mpu: a fallback to a parallel-state object's group makes its None test out of scope", """
     from pkg.fsdp.parallel_state import ParallelState
     def f(x, group=None):
         ps = ParallelState()
         group = ps.get_group("cp") if group is None else group
         if not group:
             return x
         dist.all_reduce(x, group=group)
     def g(x, group=None):
         if not group:
             return x
         dist.all_reduce(x, group=group)
     """, [("PG103", 9)]),
    ("mpu: a parallel-state module's getter, named with a suffix, is no guard's concern", """
     from pkg.ldt.parallel_state_patch import get_pipeline_group_for_cross_cloud_tp, get_cross_cloud_group_size
     def f(t):
         g = get_pipeline_group_for_cross_cloud_tp()
         if g is not None:
             dist.all_reduce(t, group=g)
     """, []),
    ("size: a local aliasing a group on one branch and None on the other keeps the size it was given there", """
     class Mixer:
         def forward(self, z, use_cp=True):
             if use_cp:
                 cp_group = self.pg_collection.cp
                 cp_size = cp_group.size()
             else:
                 cp_group = None
                 cp_size = 1
             if cp_group is not None and cp_size > 1:
                 dist.all_reduce(z, group=cp_group)
             use = cp_group is not None and cp_size > 1
             return z, use
     """, [("PG101", 9), ("PG101", 11)]),
    ("size: ... and the same with the world size asked of the aliased key", """
     def mix(z, use_cp, pgc):
         if use_cp:
             cp_group = pgc.cp
             cp_size = dist.get_world_size(cp_group)
         else:
             cp_group, cp_size = None, 1
         if cp_group is not None and cp_size > 1:
             dist.all_reduce(z, group=cp_group)
     """, [("PG101", 7)]),
    ("which None: a getter that hands back None on one path and a group on another is optional", """
     class Attention:
         @property
         def sp_group(self):
             if len(self.ranks) == 1:
                 return None
             return dist.new_group(self.ranks)
         def scatter(self, x):
             if not self.sp_group:
                 return x
             dist.all_reduce(x, group=self.sp_group)
     def get_ring_group(ranks):
         return None if len(ranks) < 2 else dist.new_group(ranks)
     def get_sub_group(ranks):
         \"\"\"None stands for the default group.\"\"\"
         return None if len(ranks) < 2 else dist.new_group(ranks)
     def ring(x, ranks):
         g = get_ring_group(ranks)
         if dist.get_world_size(g) > 1:
             dist.all_reduce(x, group=g)
         h = get_sub_group(ranks)
         if dist.get_world_size(h) > 1:
             dist.all_reduce(x, group=h)
     """, [("PG103", 8), ("PG104", 18)]),
    ("flow: `finally:` runs on the way out of an early return too", """
     class Stage:
         def __init__(self, pp_group=None):
             self.pp_group = pp_group  # None for a single-stage pipeline
         def share(self, meta):
             try:
                 if self.pp_group is None:
                     return
                 dist.broadcast(meta, src=0, group=self.pp_group)
             finally:
                 dist.barrier(group=self.pp_group)
         def after(self, meta):
             try:
                 if self.pp_group is None:
                     return
             finally:
                 pass
             dist.broadcast(meta, src=0, group=self.pp_group)
     """, [("PG103", 6), ("PG105", 10), ("PG103", 13)]),
    ("which None: a helper that counts the world when its group is falsy takes None for the world", """
     def verify_steps(group, step):
         if group:
             n = group.size()
         else:
             n = dist.get_world_size()
         out = [step] * n
         dist.all_gather_object(out, step, group=group)
         return out
     class Engine:
         def __init__(self, loader_group=None):
             self.loader_group = loader_group
         def load(self, step):
             if self.loader_group is not None:
                 dist.barrier(group=self.loader_group)
             return verify_steps(self.loader_group, step)
     """, [("PG103", 13)]),
    ("guards: a class-level lambda called through self binds the instance first; a staticmethod's does not", """
     class Stage:
         peers = lambda self, g: g is not None and dist.get_world_size(g) > 1
         static_peers = staticmethod(lambda g: g is not None and dist.get_world_size(g) > 1)
         def __init__(self, pp_group=None):
             self.pp_group = pp_group
         def share(self, loss):
             if self.peers(self.pp_group):
                 dist.broadcast(loss, src=0, group=self.pp_group)
             if self.static_peers(self.pp_group):
                 dist.broadcast(loss, src=0, group=self.pp_group)
     """, [("PG107", 2), ("PG107", 3)]),
    ("rebind: a helper of no arguments returning a group and its size is unpacked place by place", """
     class Gate:
         def __init__(self, ep_group=None, cp_group=None):
             self.ep_group, self.cp_group = ep_group, cp_group
         def _ep(self):
             if self.ep_group is None:
                 return None, 1
             return self.ep_group, dist.get_world_size(self.ep_group)
         def _cp(self):
             return self.cp_group, dist.get_world_size(self.cp_group)
         def balance(self, counts):
             g, n = self._ep()
             if n > 1:
                 dist.all_reduce(counts, group=g)
             h, m = self._cp()
             if m > 1:
                 dist.all_reduce(counts, group=h)
     """, [("PG101", 12), ("PG104", 15)]),
    ("mpu: a loop over what a sibling helper collects from parallel-state getters", """
     def register(param, names):
         from megatron.core import parallel_state as ps
         def _groups():
             out = []
             for name in names:
                 if name == "tp":
                     out.append(ps.get_tensor_model_parallel_group())
             return out
         def _mixed():
             return [ps.get_tensor_model_parallel_group(), make_group()]
         def hook(grad):
             for grp in _groups():
                 if grp is not None and dist.get_world_size(grp) > 1:
                     dist.all_reduce(grad, group=grp)
             for grp in _mixed():
                 if grp is not None and dist.get_world_size(grp) > 1:
                     dist.all_reduce(grad, group=grp)
         param.register_hook(hook)
     """, [("PG101", 16)]),
    ("size: a size a typed holder's class caches (a dataclass's __post_init__), read through the holder", """
     from dataclasses import dataclass, field
     from typing import Optional
     @dataclass
     class Parallel:
         cp_group: Optional[dist.ProcessGroup] = None
         dp_group: Optional[dist.ProcessGroup] = None
         cp_size: int = field(init=False)
         dp_size: int = field(init=False, default=1)
         def __post_init__(self):
             self.cp_size = dist.get_world_size(self.cp_group)
             if self.dp_group is not None:
                 self.dp_size = dist.get_world_size(self.dp_group)
     class Ring:
         def __init__(self, cfg: Parallel):
             self.cfg = cfg
         def merge(self, lse):
             if self.cfg.cp_size > 1:
                 dist.all_reduce(lse, group=self.cfg.cp_group)
     def metrics(m, cfg: Parallel):
         if cfg.dp_size > 1:
             dist.all_reduce(m, group=cfg.dp_group)
     """, [("PG106", 17), ("PG101", 20)]),
    ("c10d: a gather or all-to-all on a group-named receiver takes an output and an input, a wrapper's one", """
     def relocate(x, allgather_group=None, pg=None):
         if allgather_group is not None:
             x = allgather_group.allgather(x.contiguous())
         if pg is not None:
             pg.allgather([[x]], [x])
         return x
     """, [("PG103", 4)]),
    ("which None: a None side that hands the same helper a group of its own has a fallback, not an absence", """
     from state import default_shard_group
     def _sum_over(t, grp):
         dist.all_reduce(t, group=grp)
         return t
     class Head:
         def __init__(self, shard_group=None):
             self.shard_group = shard_group
         def combine(self, partial):
             if self.shard_group is None:
                 return _sum_over(partial, default_shard_group())
             return _sum_over(partial, self.shard_group)
         def scatter(self, partial):
             if self.shard_group is None:
                 return partial
             return _sum_over(partial, self.shard_group)
     """, []),
    ("flow: a comprehension's filters narrow what it builds and are tests like any other", """
     def start(buckets, groups):
         works = [dist.all_reduce(b, group=g, async_op=True) for b, g in zip(buckets, groups) if g is not None]
         active = {k: g for k, g in groups.items() if g is not None and dist.get_world_size(g) > 1}
         return works, active
     """, [("PG103", 2), ("PG101", 3)]),
    ("copy: a size held in a local the copy reads once is read where it is read", """
     class Layer:
         def __init__(self, tp_group=None):
             self.tp_group = tp_group
         def _tp_on(self):
             if self.tp_group is None:
                 return False
             n = dist.get_world_size(self.tp_group)
             return n > 1
         def forward(self, x):
             if self._tp_on():
                 dist.all_reduce(x, group=self.tp_group)
             return x
     """, [("PG107", 4)]),
    ("flow: a size asked in `try` with a one-rank fallback in `except`, after a None exit, is the group's size", """
     class Counter:
         def __init__(self, group=None):
             self.group = group
         def aggregate(self, counts):
             if self.group is None:
                 return counts
             try:
                 n = dist.get_world_size(self.group)
             except RuntimeError:
                 n = 1
             if n == 1:
                 return counts
             dist.all_reduce(counts, group=self.group)
             return counts
     """, [("PG102", 5)]),
    ("flow: a group set to None when it has one rank, then None-tested: the two tests are one split guard", """
     def mix_heads(x, row_pg=None, col_pg=None):
         if dist.get_world_size(col_pg) == 1:
             col_pg = None
         if col_pg is not None:
             dist.all_to_all([x], [x], group=col_pg)
         return x
     """, [("PG101", 2)]),
    ("flow: ... not a None test that a path leaving the group as it was can pass (the size test is not on it)", """
     def mix_heads(x, col_pg=None, drop=False):
         if drop:
             col_pg = None
         if col_pg is not None:
             dist.all_to_all([x], [x], group=col_pg)
         return x
     """, [("PG103", 4)]),
    ("helpers: a caller documented 'None: absent' hands its None to a helper documented 'None: the world'", """
     def all_reduce_mean(t, group=None):
         \"\"\"Mean over ``group``; the default (None) averages over all ranks.\"\"\"
         dist.all_reduce(t, group=group)
         return t
     def reduce_expert_loss(aux_loss, ep_group=None):
         \"\"\"ep_group: expert-parallel group, or None when experts are not sharded.\"\"\"
         return all_reduce_mean(aux_loss, group=ep_group)
     def reduce_train_loss(loss, dp_group=None):
         return all_reduce_mean(loss, group=dp_group)
     """, [("PG105", 7)]),
    ("cached: a size of a field of the constructor's argument the instance keeps is the field's size there", """
     class Dispatcher:
         def __init__(self, cfg: MoEConfig):
             self.cfg = cfg
             self.ep_size = dist.get_world_size(cfg.ep_group)
         def dispatch(self, x):
             if self.ep_size > 1:
                 dist.all_reduce(x, group=self.cfg.ep_group)
             return x
     @dataclasses.dataclass
     class MoEConfig:
         ep_group: Optional[dist.ProcessGroup] = None
     """, [("PG106", 6)]),
    ("which None: an attribute set from an in-file getter reads the getter's docs", _SP_ATTENTION, [("PG105", 9)]),
    ("which None: ... not when another method sets the attribute from something else",
     _SP_ATTENTION.replace("         def reduce_lse(self, lse):",
                           "         def reset(self, registry):\n"
                           "             self.sp_group = registry.lookup(\"sp\")\n"
                           "         def reduce_lse(self, lse):"), []),
    ("which None: a base class's comment about an attribute a subclass tests by size only", """
     class MLP:
         def __init__(self, config):
             self.tp_group = config.tp_group  # None for a single-device MLP
     class GatedMLP(MLP):
         def forward(self, y):
             if dist.get_world_size(self.tp_group) > 1:
                 dist.all_reduce(y, group=self.tp_group)
             return y
     """, [("PG104", 6)]),
    ("separate: a tensor's dimension (`x.size(0) > 1`) counts no ranks: the None test beside it is None-only", """
     def average_stats(stats, sp_group=None):
         if sp_group is not None and stats.size(0) > 1:
             dist.all_reduce(stats, group=sp_group)
         return stats
     """, [("PG103", 2)]),
    ("optional: a getter handing back None or an entry of a container of groups", """
     class Dims:
         def __init__(self, groups, enabled):
             self.groups = groups
             self.enabled = enabled
         def _resolve(self, name):
             if name not in self.enabled:
                 return None
             return self.groups[name]
         def reduce_axis(self, t, name):
             grp = self._resolve(name)
             if dist.get_world_size(grp) > 1:
                 dist.all_reduce(t, group=grp)
             return t
     """, [("PG104", 11)]),
    ("which None: a docstring saying a group left out is the world (`If not specified`, `when omitted`)", """
     def agree(ok, t, grp=None):
         \"\"\"AND of ok over every rank (the whole job when grp is omitted).\"\"\"
         if dist.get_world_size(grp) == 1:
             return ok
         dist.all_reduce(t, group=grp)
         return ok
     def total(t, group=None):
         \"\"\"group: the process group to work on. If not specified, the default process group will be used.\"\"\"
         if dist.get_world_size(group) > 1:
             dist.all_reduce(t, group=group)
         return t
     """, []),
]


@pytest.mark.parametrize("sliced", [False, True], ids=["whole", "sliced"])
@pytest.mark.parametrize(("name", "body", "expected"), [pytest.param(*c, id=c[0]) for c in CASES])
def test_construct(name: str, body: str, expected: list[tuple[str, int]], sliced: bool,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Small files are parsed whole; sliced, the same program must give the same findings.
    monkeypatch.setattr(source, "_SLICE_MIN_CHARS", 0 if sliced else 1 << 40)
    assert sorted(found(body), key=lambda x: x[1]) == sorted(expected, key=lambda x: x[1])


def test_the_predicate_in_its_own_module_is_not_a_copy_of_itself() -> None:
    source = (
        "import deepspeed.comm as dist\n"
        "def is_parallel(group):\n"
        "    if group is None:\n"
        "        return False\n"
        "    return dist.get_world_size(group=group) > 1\n"
    )
    assert analyze_source("deepspeed/comm/pg_utils.py", source, CONFIG).findings == []
    elsewhere = analyze_source("deepspeed/moe/utils.py", source, CONFIG).findings
    assert [f.code for f in elsewhere] == ["PG107"]


def test_a_file_that_communicates_only_through_its_project_is_analysed() -> None:
    """No comm module named at all: a layer that calls its project's Functions and helpers (fastmoe, metaseq)."""
    source = textwrap.dedent("""\
        from .functions import AllGather
        from mypkg.distributed import utils as distributed_utils
        class L:
            def __init__(self, slice_group=None):
                self.slice_group = slice_group
                self.slice_size = 1 if slice_group is None else slice_group.size()
            def forward(self, x):
                if self.slice_size > 1:
                    x = AllGather.apply(x, self.slice_group)
                return x
        def load(t, group=None):
            if group is not None:
                distributed_utils.broadcast(t, 0, group)
        """)
    result = analyze_source("pkg/layers.py", source, CONFIG)
    assert [(f.code, f.span.line) for f in result.findings] == [("PG101", 8), ("PG103", 12)]


KIND_CODE = {"full-guard": "PG101", "full-early-exit": "PG102", "none-only-guard": "PG103", "size-only-guard": "PG104",
             "unguarded-optional": "PG105", "cached-size-guard": "PG106", "predicate-copy": "PG107",
             "discarded-contiguous": "PG108"}
VARIANTS = yaml.safe_load((Path(__file__).parent / "fixtures" / "construct_variants.yaml").read_text())


@pytest.mark.parametrize("variant", [
    pytest.param(v, marks=pytest.mark.xfail(strict=True, reason=v["known"])) if "known" in v else v
    for v in VARIANTS], ids=[v["name"][:60] for v in VARIANTS])
def test_construct_variants_written_blind(variant: dict[str, Any]) -> None:
    """Each positive label is met by a finding of its code on its lines; no finding falls outside them (a
    variant whose writer and pg-bot disagree on purpose says why under `known`, and must keep failing)."""
    result = analyze_source("pkg/mod.py", variant["source"], CONFIG)
    assert result.error is None, result.error
    wanted = [(KIND_CODE[e["kind"]], e["line"], e.get("end_line") or e["line"])
              for e in variant["expect"] if e["kind"] in KIND_CODE]
    found = [(f.code, f.span.line) for f in result.findings]
    for code, first, last in wanted:
        assert any(c == code and first <= line <= last for c, line in found), (code, first, found)
    for code, line in found:
        assert any(c == code and first <= line <= last for c, first, last in wanted), (code, line, wanted)
