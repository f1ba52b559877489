"""PG105: a collective on a group that can be None (meaning "absent") with nothing guarding it."""

from __future__ import annotations

from bot.analyze.rules.base import Reporter, code_span
from bot.model import Invalid, Rule, UnguardedPayload

RULE = Rule(
    code="PG105",
    name="unguarded-optional-collective",
    summary=(
        "A collective with `group=g` where g can be None at that point (default None, Optional, attribute set to "
        "None, `getattr(..., None)`) and None means the dimension is absent here, with no guard on the path; or a "
        "call that hands such a g to an in-file helper whose collective runs on it unguarded. Evidence that None "
        "means absent: the same group is None-checked before a collective or a size elsewhere in the class or "
        "file, or the docs say so. Never reported when the code falls back to the world group explicitly or its "
        "docs say None is the default/world group, nor when every in-file caller of the helper guards."
    ),
    why=(
        "When the parallel dimension is absent, g is None, and `dist.all_reduce(t, group=None)` reduces over the "
        "WORLD group: the tensor is summed across data-parallel ranks instead of left alone. That is silently "
        "wrong whenever data-parallel size > 1."
    ),
    fix="Wrap the statement in `if pg_utils.is_parallel(g):`.",
    fix_safety=(
        "Needs `--unsafe-fixes`, and only for in-place collectives and barriers whose result is unused; an "
        "output-buffer collective gets a suggestion only (the buffer would stay unfilled). Findings of medium "
        "confidence (the evidence is the same name elsewhere in the file) go to the PR summary, not inline."
    ),
    invalid=(
        Invalid(  # the file states its convention in a comment block at the module level
            "import torch.distributed as dist\n"
            "\n"
            "# Every *_group argument here may be None: that parallel dimension is not used on this run.\n"
            "\n"
            "def allreduce_tp(t, tp_group=None):\n"
            "    dist.all_reduce(t, group=tp_group)\n"
            "    return t\n",
            flagged="dist.all_reduce(t, group=tp_group)",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n"
            "\n"
            "# Every *_group argument here may be None: that parallel dimension is not used on this run.\n"
            "\n"
            "def allreduce_tp(t, tp_group=None):\n"
            "    if pg_utils.is_parallel(tp_group):\n"
            "        dist.all_reduce(t, group=tp_group)\n"
            "    return t\n",
            unsafe=True,
        ),
        Invalid(  # a reducer lambda runs later, with the optional group it closes over; fixed where it is made
            "import torch.distributed as dist\n"
            "def make_reducer(tp_group=None):\n"
            "    \"\"\"tp_group is None when tensor parallelism is off.\"\"\"\n"
            "    return lambda t: dist.all_reduce(t, group=tp_group)\n",
            flagged="dist.all_reduce(t, group=tp_group)",
        ),
        Invalid(  # an attribute set to None by a condition, handed to an in-file helper that communicates on it
            "import deepspeed.comm as dist\n"
            "def _sum(t, group):\n"
            "    dist.all_reduce(t, group=group)\n"
            "    return t\n"
            "class MoEGrads:\n"
            "    def __init__(self, ep_size, ep_ranks):\n"
            "        self.ep_group = dist.new_group(ep_ranks) if ep_size > 1 else None\n"
            "    def reduce_expert(self, grads):\n"
            "        for g in grads:\n"
            "            _sum(g, self.ep_group)\n",
            flagged="_sum(g, self.ep_group)",
            fixed=(
                "import deepspeed.comm as dist\n"
                "from deepspeed.comm import pg_utils\n"
                "\n"
                "def _sum(t, group):\n"
                "    dist.all_reduce(t, group=group)\n"
                "    return t\n"
                "class MoEGrads:\n"
                "    def __init__(self, ep_size, ep_ranks):\n"
                "        self.ep_group = dist.new_group(ep_ranks) if ep_size > 1 else None\n"
                "    def reduce_expert(self, grads):\n"
                "        for g in grads:\n"
                "            if pg_utils.is_parallel(self.ep_group):\n"
                "                _sum(g, self.ep_group)\n"
            ),
            unsafe=True,
        ),
        Invalid(  # a module global's comment, where the module sets it, says what its None means
            "import deepspeed.comm as dist\n"
            "# the sequence-parallel group; stays None when sequence parallelism is off\n"
            "_SP_GROUP = None\n"
            "def init_sp(ranks):\n"
            "    global _SP_GROUP\n"
            "    _SP_GROUP = dist.new_group(ranks)\n"
            "def reduce_grads(grads):\n"
            "    for g in grads:\n"
            "        dist.all_reduce(g, group=_SP_GROUP)\n",
            flagged="dist.all_reduce(g, group=_SP_GROUP)",
            fixed=(
                "import deepspeed.comm as dist\n"
                "from deepspeed.comm import pg_utils\n"
                "\n"
                "# the sequence-parallel group; stays None when sequence parallelism is off\n"
                "_SP_GROUP = None\n"
                "def init_sp(ranks):\n"
                "    global _SP_GROUP\n"
                "    _SP_GROUP = dist.new_group(ranks)\n"
                "def reduce_grads(grads):\n"
                "    for g in grads:\n"
                "        if pg_utils.is_parallel(_SP_GROUP):\n"
                "            dist.all_reduce(g, group=_SP_GROUP)\n"
            ),
            unsafe=True,
        ),
        Invalid(  # None "unless" something is configured: the dimension is absent until then
            "import torch.distributed as dist\n"
            "class Head:\n"
            "    def __init__(self):\n"
            "        self.tp_group = None  # stays None unless tensor parallelism is configured\n"
            "    def configure(self, topo):\n"
            "        self.tp_group = topo.tp_group\n"
            "    def forward(self, m):\n"
            "        dist.all_reduce(m, group=self.tp_group)\n"
            "        return m\n",
            flagged="dist.all_reduce(m, group=self.tp_group)",
            fixed=(
                "import torch.distributed as dist\n"
                "from deepspeed.comm import pg_utils\n"
                "\n"
                "class Head:\n"
                "    def __init__(self):\n"
                "        self.tp_group = None  # stays None unless tensor parallelism is configured\n"
                "    def configure(self, topo):\n"
                "        self.tp_group = topo.tp_group\n"
                "    def forward(self, m):\n"
                "        if pg_utils.is_parallel(self.tp_group):\n"
                "            dist.all_reduce(m, group=self.tp_group)\n"
                "        return m\n"
            ),
            unsafe=True,
        ),
        Invalid(  # a comment at the end of the line that sets the attribute says what its None means
            "import deepspeed.comm as dist\n"
            "class TiedHead:\n"
            "    def __init__(self, emb, tp_group=None):\n"
            "        self.emb = emb\n"
            "        self.tp_group = tp_group  # None: no tensor parallelism\n"
            "    def sync(self):\n"
            "        dist.all_reduce(self.emb.grad, group=self.tp_group)\n",
            flagged="dist.all_reduce(self.emb.grad, group=self.tp_group)",
            fixed=(
                "import deepspeed.comm as dist\n"
                "from deepspeed.comm import pg_utils\n"
                "\n"
                "class TiedHead:\n"
                "    def __init__(self, emb, tp_group=None):\n"
                "        self.emb = emb\n"
                "        self.tp_group = tp_group  # None: no tensor parallelism\n"
                "    def sync(self):\n"
                "        if pg_utils.is_parallel(self.tp_group):\n"
                "            dist.all_reduce(self.emb.grad, group=self.tp_group)\n"
            ),
            unsafe=True,
        ),
        Invalid(  # the constructor writes None where the dimension is not used; a test of the data, not of the
            # object's state, is all that stands before the collective
            "import torch.distributed as dist\n"
            "class Loader:\n"
            "    def __init__(self, mesh, use_tp):\n"
            "        if use_tp:\n"
            "            self.tp_grp = mesh.get_group('tp')\n"
            "        else:\n"
            "            self.tp_grp = None\n"
            "    def spread(self, metas, buf):\n"
            "        for meta in metas:\n"
            "            if meta['sharded']:\n"
            "                dist.barrier(group=self.tp_grp)\n",
            flagged="dist.barrier(group=self.tp_grp)",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "class Loader:\n"
            "    def __init__(self, mesh, use_tp):\n"
            "        if use_tp:\n"
            "            self.tp_grp = mesh.get_group('tp')\n"
            "        else:\n"
            "            self.tp_grp = None\n"
            "    def spread(self, metas, buf):\n"
            "        for meta in metas:\n"
            "            if meta['sharded']:\n"
            "                if pg_utils.is_parallel(self.tp_grp):\n"
            "                    dist.barrier(group=self.tp_grp)\n",
            unsafe=True,
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def reduce(t, tp_group=None):\n"
            "    dist.all_reduce(t, group=tp_group)\n"
            "    return t\n"
            "def norm(t, tp_group=None):\n"
            "    if tp_group is not None:\n"
            "        dist.all_reduce(t, group=tp_group)\n",
            flagged="dist.all_reduce(t, group=tp_group)",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def reduce(t, tp_group=None):\n"
            "    if pg_utils.is_parallel(tp_group):\n"
            "        dist.all_reduce(t, group=tp_group)\n"
            "    return t\n"
            "def norm(t, tp_group=None):\n"
            "    if tp_group is not None:\n"
            "        dist.all_reduce(t, group=tp_group)\n",
            unsafe=True,
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "class Layer:\n"
            "    def __init__(self):\n"
            "        self.mp_group = None\n"
            "    def forward(self, x):\n"
            "        dist.inference_all_reduce(x, group=self.mp_group)\n"
            "    def backward(self, x):\n"
            "        if self.mp_group is None:\n"
            "            return x\n"
            "        dist.all_reduce(x, group=self.mp_group)\n",
            flagged="dist.inference_all_reduce(x, group=self.mp_group)",
        ),
        Invalid(  # the docs say None means no parallelism
            "from typing import Optional\n"
            "import torch.distributed as dist\n"
            "def gather(out, t, group: Optional[object]):\n"
            '    """group: the expert group; None when there is no expert parallelism."""\n'
            "    dist.all_gather_into_tensor(out, t, group=group)\n",
            flagged="dist.all_gather_into_tensor(out, t, group=group)",
        ),
        Invalid(  # an optional group handed to a helper that runs the collective on its parameter
            "import torch.distributed as dist\n"
            "def _reduce(t, group):\n"
            "    dist.all_reduce(t, group=group)\n"
            "def step(t, ep_group=None):\n"
            "    _reduce(t, ep_group)\n"
            "def other(t, ep_group=None):\n"
            "    if ep_group is not None:\n"
            "        dist.all_reduce(t, group=ep_group)\n",
            flagged="_reduce(t, ep_group)",
        ),
    ),
    valid=(
        # the holder's own state decides: the object builds the group for the direction that gathers
        "import torch.distributed as dist\n"
        "class Bridge:\n"
        "    def __init__(self, fan_in, ranks):\n"
        "        self.fan_in = fan_in\n"
        "        self.gather_pg = dist.new_group(ranks) if fan_in else None\n"
        "    def close(self):\n"
        "        if self.gather_pg is not None:\n"
        "            dist.barrier(group=self.gather_pg)\n"
        "def exchange(out, x, bridge: Bridge):\n"
        "    if bridge.fan_in:\n"
        "        dist.all_gather_into_tensor(out, x, group=bridge.gather_pg)\n",
        # the docs say None is the world; the word nearer after None decides (`single` here is about the writer)
        "import torch\n"
        "import torch.distributed as dist\n"
        "def save_on_leader(state, path, group=None):\n"
        "    \"\"\"``group=None`` uses the global process group (a single writer).\"\"\"\n"
        "    if dist.get_rank(group) == 0:\n"
        "        torch.save(state, path)\n"
        "    dist.barrier(group=group)\n",
        # the caller's size-only exit is the finding (PG104); the helper's collective behind it is not a second one
        "import deepspeed.comm as dist\n"
        "class Combine:\n"
        "    def __init__(self, ep_group=None):\n"
        "        # ep_group=None: experts are not sharded\n"
        "        self.ep_group = ep_group\n"
        "    def combine(self, out, buf):\n"
        "        if dist.get_world_size(self.ep_group) == 1:\n"
        "            return out\n"
        "        return self._exchange(out, buf)\n"
        "    def _exchange(self, out, buf):\n"
        "        dist.all_to_all_single(buf, out, group=self.ep_group)\n"
        "        return buf\n",
        # a docstring clause about another group is not about this one
        "import torch.distributed as dist\n"
        "class Hier:\n"
        "    \"\"\"intra_group is always a real group; inter_group is None on a single node.\"\"\"\n"
        "    def __init__(self, intra_group, inter_group):\n"
        "        self.intra_group = intra_group\n"
        "        self.inter_group = inter_group\n"
        "    def __call__(self, t):\n"
        "        dist.all_reduce(t, group=self.intra_group)\n"
        "        return t\n",
        # a docstring's entry for the group says None is the world; the next line is about another group
        "import deepspeed.comm as dist\n"
        "class Sync:\n"
        "    \"\"\"Averages gradients.\n"
        "\n"
        "    Dense params: over ``dp_group`` (None = the default world group).\n"
        "    Expert params: over ``expert_group``; None when experts are not replicated.\n"
        "    \"\"\"\n"
        "    def __init__(self, dp_group=None, expert_group=None):\n"
        "        self.dp_group = dp_group\n"
        "        self.expert_group = expert_group\n"
        "    def dense(self, g):\n"
        "        dist.all_reduce(g, group=self.dp_group)\n",
        # the collective runs only where the condition that picked the group holds
        "import torch.distributed as dist\n"
        "def train_step(layout, logits):\n"
        "    on = layout.seq_enabled\n"
        "    seq_pg = layout.mesh['seq'].get_group() if on else None\n"
        "    if on:\n"
        "        dist.all_reduce(logits, group=seq_pg)\n"
        "    return logits\n",
        # a flag every method that sets the group sets with it (True beside a group, False beside None)
        "import torch.distributed as dist\n"
        "class Experts:\n"
        "    def __init__(self):\n"
        "        self.xp_group = None\n"
        "        self._sharded = False\n"
        "    def width(self):\n"
        "        return dist.get_world_size(self.xp_group) if self.xp_group is not None else 1\n"
        "    def shard(self, mesh):\n"
        "        self.xp_group = mesh.get_group()\n"
        "        self._sharded = True\n"
        "    def forward(self, counts, out):\n"
        "        if not self._sharded:\n"
        "            return counts\n"
        "        dist.all_to_all_single(out, counts, group=self.xp_group)\n"
        "        return out\n",
        # the None branch clears a flag of the object that the collective's path tests: it follows the group
        "import torch.distributed as dist\n"
        "class Sync:\n"
        "    def __init__(self, reg, axis):\n"
        "        if reg.size_of(axis) > 1:\n"
        "            self.grp = reg.group_of(axis)\n"
        "            self.enabled = True\n"
        "        else:\n"
        "            self.grp = None\n"
        "            self.enabled = False\n"
        "    def run(self, flat):\n"
        "        if self.enabled:\n"
        "            dist.all_reduce(flat, group=self.grp)\n",
        # the same flag tested where the method that communicates is called, the only call of it in the file
        "import torch.distributed as dist\n"
        "class BufferSync:\n"
        "    def __init__(self, reg, axis):\n"
        "        if reg.size_of(axis) > 1:\n"
        "            self.grp = reg.group_of(axis)\n"
        "            self.sync = True\n"
        "        else:\n"
        "            self.grp = None\n"
        "            self.sync = False\n"
        "    def _push(self, flat):\n"
        "        dist.all_reduce(flat, group=self.grp)\n"
        "    def step(self, flat):\n"
        "        if self.sync:\n"
        "            self._push(flat)\n",
        # None is a placeholder for a group made later (the one handed in exists), filled before use
        "import torch.distributed as dist\n"
        "class Exchange:\n"
        "    def __init__(self, dp_group, on_host=True):\n"
        "        self.grp = None if on_host else dp_group\n"
        "    def load(self, buf):\n"
        "        dist.broadcast(buf, src=0, group=self.grp)\n",
        # the size counts the world when the group is None: None is the world here, as a docstring could say
        "import torch.distributed as dist\n"
        "class Strategy:\n"
        "    def __init__(self):\n"
        "        self.n_all = dist.get_world_size()\n"
        "    def mean(self, t, group=None):\n"
        "        t /= dist.get_world_size(group) if group is not None else self.n_all\n"
        "        dist.all_reduce(t, group=group)\n"
        "    def peek(self, t, group=None):\n"
        "        if group is not None:\n"
        "            dist.barrier(group=group)\n",
        "import deepspeed.comm as dist\n"
        "def reduce(t, tp_group):\n"
        "    dist.all_reduce(t, group=tp_group)\n",
        "import deepspeed.comm as dist\n"
        "def reduce(t):\n"
        "    dist.all_reduce(t, group=None)\n",
        "import deepspeed.comm as dist\n"
        "def reduce(t, tp_world_size, tp_group=None):\n"
        "    if tp_world_size == 1:\n"
        "        return t\n"
        "    dist.all_reduce(t, group=tp_group)\n",
        "import deepspeed.comm as dist\n"
        "def reduce(t, tp_group=None):\n"
        "    dist.all_reduce(t, group=tp_group)  # pg-bot: ignore[PG105] None means the world here\n",
        # no evidence that None means "absent" here
        "import deepspeed.comm as dist\n"
        "def reduce(t, group=None):\n"
        "    dist.all_reduce(t, group=group)\n",
        # explicit world fallback
        "import torch.distributed as dist\n"
        "def reduce(t, group=None):\n"
        "    group = group or dist.group.WORLD\n"
        "    dist.all_reduce(t, group=group)\n"
        "def other(t, group=None):\n"
        "    if group is not None:\n"
        "        dist.all_reduce(t, group=group)\n",
        # the docs say None is the default group
        "import torch.distributed as dist\n"
        "def reduce(t, group=None):\n"
        '    """group: the process group; if None, the default process group is used."""\n'
        "    dist.all_reduce(t, group=group)\n"
        "def other(t, group=None):\n"
        "    if group is not None:\n"
        "        dist.all_reduce(t, group=group)\n",
        # every caller in the file already returns early when the group is absent
        "import deepspeed.comm as dist\n"
        "class Layer:\n"
        "    def __init__(self, mp_group=None):\n"
        "        self.mp_group = mp_group\n"
        "    def _gather(self, out, x):\n"
        "        dist.all_gather_into_tensor(out, x, group=self.mp_group)\n"
        "    def gather(self, out, x):\n"
        "        if self.mp_group is None:\n"
        "            return x\n"
        "        self._gather(out, x)\n",
    ),
)


def check(r: Reporter) -> None:
    for u in r.verdicts.unguarded:
        site = u.site
        group = site.key
        assert group is not None
        if u.at_call is not None:
            call = u.at_call
            passed = u.passed or group
            r.report(
                RULE, r.span(call.call),
                f"{code_span(r.text(call.call.func))} runs {code_span(site.collective.name)} on the group it is "
                f"given, and this call passes {code_span(str(passed))}, which may be None (group=None means the "
                f"WORLD group): guard the call with {code_span(f'if {r.predicate}({passed}):')}",
                call.function, group=str(passed), kind="call",
                payload=UnguardedPayload(
                    statement=r.span(call.statement) if call.statement is not None else r.span(call.call),
                    result_used=call.result_used, collective=site.collective.name, helper=call.callee.qualname,
                    deferred=call.deferred),
                confidence=u.confidence, evidence=u.evidence,
            )
            continue
        r.report(
            RULE, r.span(site.call),
            f"{code_span(f'{site.collective.name}(..., group={group})')} runs with {code_span(group)}, which may be "
            f"None, and group=None means the WORLD group: guard it with {code_span(f'if {r.predicate}({group}):')}",
            site.function, group=group, kind="call",
            payload=UnguardedPayload(statement=r.span(site.statement), result_used=site.result_used,
                                     collective=site.collective.name, deferred=site.deferred),
            confidence=u.confidence, evidence=u.evidence,
        )
