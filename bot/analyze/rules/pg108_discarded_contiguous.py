"""PG108: `all_reduce(x.contiguous(), ...)` reduces a temporary copy and throws the result away."""

from __future__ import annotations

import ast

from bot.analyze.env import binding_before
from bot.analyze.rules.base import Reporter, code_span
from bot.analyze.verdicts import made_contiguous, on_the_source_rank
from bot.model import ContiguousPayload, Invalid, Rule

RULE = Rule(
    code="PG108",
    name="discarded-contiguous-result",
    summary=(
        "An in-place collective (rules.yaml `inplace_collectives`) applied to `x.contiguous()`, x not a local that "
        "straight-line code before it made contiguous (`flat = torch.cat(parts)`, `buf = torch.zeros(n)`, "
        "`w = w.contiguous()`: then `.contiguous()` is x)."
    ),
    why=(
        "`x.contiguous()` returns a copy when x is not contiguous; the collective writes its result into that "
        "temporary, which nothing keeps, so x is left unreduced. It only works by accident when x is contiguous."
    ),
    fix="Reduce a named contiguous tensor and copy it back into x when they differ.",
    fix_safety=(
        "Needs `--unsafe-fixes` (results change for a non-contiguous x; `copy_` fails on a leaf that requires "
        "grad); never applied with `async_op` or a used result."
    ),
    invalid=(
        Invalid(  # in a hook's lambda: reported, fixed by hand where the hook is made
            "import torch.distributed as dist\n"
            "def attach(params, group):\n"
            "    for p in params:\n"
            "        p.register_post_accumulate_grad_hook(lambda q: dist.all_reduce(q.grad.contiguous(), group=group))\n",
            flagged="dist.all_reduce(q.grad.contiguous(), group=group)",
            unsafe=True,
        ),
        Invalid(  # made contiguous on one path only: the parameter may not be
            "import torch\n"
            "import torch.distributed as dist\n"
            "def share(w, src, grp, is_src):\n"
            "    if not is_src:\n"
            "        w = torch.empty(8, 8)\n"
            "    dist.broadcast(w.contiguous(), src, group=grp)\n"
            "    return w\n",
            flagged="dist.broadcast(w.contiguous(), src, group=grp)",
            fixed=(
                "import torch\n"
                "import torch.distributed as dist\n"
                "def share(w, src, grp, is_src):\n"
                "    if not is_src:\n"
                "        w = torch.empty(8, 8)\n"
                "    w_c = w.contiguous()\n"
                "    dist.broadcast(w_c, src, group=grp)\n"
                "    w.copy_(w_c)\n"
                "    return w\n"
            ),
            unsafe=True,
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def f(x, group):\n"
            "    dist.all_reduce(x.contiguous(), group=group)\n"
            "    return x\n",
            flagged="dist.all_reduce(x.contiguous(), group=group)",
            fixed="import deepspeed.comm as dist\n"
            "def f(x, group):\n"
            "    x_c = x.contiguous()\n"
            "    dist.all_reduce(x_c, group=group)\n"
            "    x.copy_(x_c)\n"
            "    return x\n",
            unsafe=True,
        ),
        Invalid(  # the tensor passed by keyword, after another
            "import torch.distributed as dist\n"
            "def f(x, group):\n"
            "    dist.broadcast(src=0, tensor=x.contiguous(), group=group)\n",
            flagged="dist.broadcast(src=0, tensor=x.contiguous(), group=group)",
            fixed="import torch.distributed as dist\n"
            "def f(x, group):\n"
            "    x_c = x.contiguous()\n"
            "    dist.broadcast(src=0, tensor=x_c, group=group)\n"
            "    x.copy_(x_c)\n",
            unsafe=True,
        ),
        Invalid(  # made contiguous on one branch only: on the other the result is still thrown away
            "import torch.distributed as dist\n"
            "def f(x, group, packed):\n"
            "    if packed:\n"
            "        x = x.contiguous()\n"
            "    dist.all_reduce(x.contiguous(), group=group)\n"
            "    return x\n",
            flagged="dist.all_reduce(x.contiguous(), group=group)",
            fixed="import torch.distributed as dist\n"
            "def f(x, group, packed):\n"
            "    if packed:\n"
            "        x = x.contiguous()\n"
            "    x_c = x.contiguous()\n"
            "    dist.all_reduce(x_c, group=group)\n"
            "    x.copy_(x_c)\n"
            "    return x\n",
            unsafe=True,
        ),
        Invalid(  # on the receivers' branch the broadcast writes into the temporary
            "import torch.distributed as dist\n"
            "def recv_batch(value, src_rank, group):\n"
            "    if dist.get_rank() != src_rank:\n"
            "        dist.broadcast(value.contiguous(), src=src_rank, group=group)\n",
            flagged="dist.broadcast(value.contiguous(), src=src_rank, group=group)",
            fixed="import torch.distributed as dist\n"
            "def recv_batch(value, src_rank, group):\n"
            "    if dist.get_rank() != src_rank:\n"
            "        value_c = value.contiguous()\n"
            "        dist.broadcast(value_c, src=src_rank, group=group)\n"
            "        value.copy_(value_c)\n",
            unsafe=True,
        ),
        Invalid(  # asynchronous: a copy-back right after the call would run before the reduction completes
            "import torch.distributed as dist\n"
            "def f(x, group):\n"
            "    dist.all_reduce(x.contiguous(), group=group, async_op=True)\n",
            flagged="dist.all_reduce(x.contiguous(), group=group, async_op=True)",
            unsafe=True,
        ),
    ),
    valid=(
        # the last value it was given before the collective is contiguous (another, earlier, was not)
        "import torch.distributed as dist\n"
        "def sync(emb, group):\n"
        "    w = emb.weight.data\n"
        "    w = w.contiguous()\n"
        "    dist.all_reduce(w.contiguous(), group=group)\n"
        "    emb.weight.data.copy_(w)\n",
        # torch.cat makes a contiguous tensor: `.contiguous()` returns it, and the result lands in it
        "import torch\n"
        "import torch.distributed as dist\n"
        "def bucket(grads):\n"
        "    flat = torch.cat([g.reshape(-1) for g in grads])\n"
        "    dist.all_reduce(flat.contiguous())\n"
        "    return flat\n",
        "import deepspeed.comm as dist\n"
        "def f(x, group):\n"
        "    x = x.contiguous()\n"
        "    dist.all_reduce(x, group=group)\n"
        "    return x\n",
        "import deepspeed.comm as dist\n"
        "def f(x, out, group):\n"
        "    dist.all_gather_into_tensor(out, x.contiguous(), group=group)\n",
        # the source of a broadcast only reads its tensor: on the source's own branch nothing is written
        "import torch.distributed as dist\n"
        "def send_batch(value, out, src_rank, group):\n"
        "    if dist.get_rank() == src_rank:\n"
        "        dist.broadcast(value.contiguous(), src=src_rank, group=group)\n"
        "    else:\n"
        "        dist.broadcast(out, src=src_rank, group=group)\n",
        # a functional collective returns its result: nothing is written into the temporary
        "import torch.distributed._functional_collectives as fc\n"
        "def f(grad, group):\n"
        "    grad = fc.all_reduce(grad.contiguous(), 'sum', group)\n"
        "    return grad\n",
    ),
)


def check(r: Reporter) -> None:
    inplace = r.ctx.config.inplace_collectives
    for site in r.verdicts.module.sites.collectives.values():
        # only torch.distributed's own collectives write into their argument; the functional ones
        # (`_functional_collectives`, `nn.functional`) return their result, and a wrapper's body is elsewhere
        if site.collective.name not in inplace or site.partial or site.collective.family != "c10d":
            continue
        first = written(site.call)
        if not (isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) and first.func.attr == "contiguous"
                and not first.args and not first.keywords):
            continue
        held = first.func.value
        # `flat = torch.cat(parts)`, `w = w.contiguous()` (its value where the collective runs, set in straight-line
        # code before it): contiguous already, so `.contiguous()` returns flat itself
        if isinstance(held, ast.Name) and site.function is not None and \
                (made := binding_before(site.function.node, held.id, site.statement)) is not None and made_contiguous(made):
            continue
        if on_the_source_rank(r.verdicts.module, site):  # (the source only reads what it broadcasts)
            continue
        tensor = r.text(held)
        r.report(
            RULE, r.span(site.call),
            f"{code_span(f'{site.collective.name}({tensor}.contiguous(), ...)')} writes into a temporary when "
            f"{code_span(tensor)} is not contiguous, and that result is thrown away",
            site.function, group=site.key, kind="call",
            payload=ContiguousPayload(tensor=tensor, statement=r.span(site.statement),
                                      collective=site.collective.name, result_used=site.result_used,
                                      argument=r.span(first), asynchronous=_asynchronous(site.call),
                                      deferred=site.deferred),
        )


def written(call: ast.Call) -> ast.expr | None:
    """The argument an in-place collective writes into: the first positional one, or `tensor=` (the name of that
    parameter in every one of torch's and deepspeed.comm's in-place collectives)."""
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "tensor"), None)


def _asynchronous(call: ast.Call) -> bool:
    """Is `async_op=` passed as anything but a literal False?"""
    return any(k.arg == "async_op" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
               for k in call.keywords)
