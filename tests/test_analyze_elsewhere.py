"""Size helpers imported from another file of the project: read as text (bot.analyze.elsewhere), never run."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bot.analyze import analyze_paths, analyze_source
from bot.analyze.elsewhere import HelperSize, ProjectHelpers
from bot.analyze.terms import UNREACHABLE
from bot.config import load
from bot.files import project_reader

CONFIG = load()

STATE = '''\
import torch.distributed as dist

def get_parallel_world_size(group):
    """The group's size."""
    return dist.get_world_size(group=group)

def get_safe_size(group):
    return 1 if group is None else dist.get_world_size(group)

def get_exit_size(group):
    if group is None:
        return 1
    return dist.get_world_size(group)

def get_other_size(group):
    return len(group.ranks)

def get_some_world_size(group, extra):
    return dist.get_world_size(group) * extra

def get_own_size(group):
    if not dist.is_initialized() or group is None:
        return 1
    return group.size()

def get_default_size(group, default=1):
    return default if group is None else group.size()

def get_member_size(group):
    if group is None or group.rank() < 0:
        return 1
    return group.size()

def get_bare_own_size(group):
    return group.size()

def get_init_size(group):
    return dist.get_world_size(group) if dist.is_initialized() else 1
'''

USER = '''\
import torch.distributed as dist
from pkg.state import get_parallel_world_size, get_safe_size

def _gather(x, group):
    n = get_parallel_world_size(group)
    if n == 1:
        return x
    dist.all_gather_into_tensor(x, x, group=group)
    return x

def gather(x, group=None):
    return _gather(x, group)

def gather_safe(x, group=None):
    if get_safe_size(group) == 1:
        return x
    dist.all_gather_into_tensor(x, x, group=group)
'''


def _helpers(files: dict[str, str]) -> ProjectHelpers:
    reads: list[str] = []

    def read(path: str) -> str | None:
        reads.append(path)
        return files.get(path)

    helpers = ProjectHelpers(read)
    helpers.reads = reads  # type: ignore[attr-defined]
    return helpers


@pytest.mark.parametrize(("name", "expected"), [
    ("get_parallel_world_size", HelperSize(None)),  # the world's size for None, as get_world_size
    ("get_safe_size", HelperSize(1)),
    ("get_exit_size", HelperSize(1)),
    ("get_other_size", None),  # measures something else
    ("get_some_world_size", None),  # arithmetic on the size
    ("get_missing_size", None),  # not defined there
    ("get_own_size", HelperSize(UNREACHABLE)),  # Megatron-Core's get_pg_size: its group, its own answer for None
    ("get_default_size", None),  # a conditional expression's fallback must be a constant
    ("get_member_size", None),  # the exit asks more of the group than None
    ("get_bare_own_size", None),  # `None.size()` raises: no answer for None
    # 1 only when distributed is down: not read (readers disagree whether a size test on it is size-only)
    ("get_init_size", None),
])
def test_what_a_helper_measures_is_read_from_its_definition(name: str, expected: HelperSize | None) -> None:
    helpers = _helpers({"pkg/state.py": STATE})
    assert helpers.size_of(f"pkg.state.{name}") == expected


def test_each_file_is_read_once_and_only_names_that_say_size_are_looked_up() -> None:
    helpers = _helpers({"pkg/state/__init__.py": STATE})
    assert helpers.size_of("pkg.state.get_parallel_world_size") == HelperSize(None)
    assert helpers.size_of("pkg.state.get_safe_size") == HelperSize(1)
    assert helpers.size_of("pkg.state.reduce_scatter") is None
    # pkg/state.py is absent, the package's __init__ holds it; then src/ layouts are not needed
    assert helpers.reads == ["pkg/state.py", "pkg/state/__init__.py"]  # type: ignore[attr-defined]


def test_a_src_layout_is_found_and_unreadable_text_is_no_helper() -> None:
    assert _helpers({"src/pkg/state.py": STATE}).size_of("pkg.state.get_safe_size") == HelperSize(1)
    assert _helpers({"pkg/state.py": "def get_parallel_world_size(g:\n"}).size_of(
        "pkg.state.get_parallel_world_size") is None

    def broken(path: str) -> str | None:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")

    assert ProjectHelpers(broken).size_of("pkg.state.get_parallel_world_size") is None


def test_a_helper_read_elsewhere_decides_a_size_only_test_and_a_full_early_exit() -> None:
    helpers = _helpers({"pkg/state.py": STATE})
    found = analyze_source("pkg/user.py", USER, CONFIG, project_path="pkg/user.py", helpers=helpers).findings
    assert [(f.code, f.span.line) for f in found] == [("PG104", 6), ("PG102", 15)]
    # without the other file only the name is known: what it answers for None is not, so nothing is said
    assert analyze_source("pkg/user.py", USER, CONFIG, project_path="pkg/user.py").findings == []


def test_a_check_reads_the_helper_from_the_project_on_disk(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "state.py").write_text(STATE)
    (tmp_path / "pkg" / "user.py").write_text(USER)
    [result] = [r for r in analyze_paths([tmp_path / "pkg" / "user.py"], CONFIG)]
    assert [(f.code, f.span.line) for f in result.findings] == [("PG104", 6), ("PG102", 15)]


def test_the_project_reader_stays_below_the_root(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "setup.py").write_text("")
    (tmp_path / "proj" / "a.py").write_text("x = 1\n")
    (tmp_path / "secret.py").write_text("s = 1\n")
    found = project_reader(tmp_path / "proj" / "a.py")
    assert found is not None
    root, read = found
    assert root == (tmp_path / "proj").resolve()
    assert read("a.py") == "x = 1\n"
    assert read("../secret.py") is None and read("/etc/passwd") is None and read("missing.py") is None


def test_a_helper_handed_an_optional_parameter_further_up_is_size_only_too() -> None:
    body = textwrap.dedent('''\
        import torch
        import torch.distributed as dist

        def _reduce_scatter(x, group):
            n = dist.get_world_size(group)
            if n == 1:
                return x
            dist.reduce_scatter_tensor(x, x, group=group)
            return x

        class _Gather(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, group=None):
                ctx.group = group
                return x

            @staticmethod
            def backward(ctx, grad):
                return _reduce_scatter(grad, ctx.group), None
        ''')
    found = analyze_source("m.py", body, CONFIG).findings
    assert [(f.code, f.span.line) for f in found] == [("PG104", 6)]


UTILS = '''\
import torch.distributed as dist

def tie_shared(model, process_group):
    for p in model.parameters():
        dist.broadcast(p, src=dist.get_global_rank(process_group, 0), group=process_group)

def count_shared(model, process_group):
    return sum(1 for _ in model.parameters())
'''

MODEL = '''\
import torch.distributed as dist
from pkg.utils import tie_shared, count_shared

class Model:
    def __init__(self, process_group=None):
        self.process_group = process_group

    def tie(self):
        if self.process_group is not None:
            tie_shared(self, self.process_group)

    def count(self):
        if self.process_group is not None:
            return count_shared(self, self.process_group)
        return 0

    def sum_loss(self, loss):
        dist.all_reduce(loss, group=self.process_group)
'''


def test_a_helper_elsewhere_that_communicates_on_the_group_it_is_given_is_that_groups_collective() -> None:
    helpers = _helpers({"pkg/utils.py": UTILS})
    found = analyze_source("pkg/model.py", MODEL, CONFIG, project_path="pkg/model.py", helpers=helpers).findings
    # the broadcasting helper's call is guarded by a None test alone; the counting helper communicates nothing
    assert [(f.code, f.span.line) for f in found if f.code == "PG103"] == [("PG103", 9)]
    assert helpers.communicates("pkg.utils.tie_shared", frozenset(CONFIG.collectives))
    assert not helpers.communicates("pkg.utils.count_shared", frozenset(CONFIG.collectives))
    # without the other file nothing says that tie_shared communicates
    alone = analyze_source("pkg/model.py", MODEL, CONFIG, project_path="pkg/model.py").findings
    assert [f.code for f in alone if f.code == "PG103"] == []


def test_a_package_under_a_folder_of_its_own_and_a_groups_own_collective_are_found() -> None:
    # `python/tuner/utils.py` defines `barrier_async(pg)`, which runs the group's own `pg.allreduce`: the file that
    # imports it from its own package (`python/tuner/tune.py`) shows where the package sits
    utils = "import torch\n\ndef barrier_async(pg):\n    x = torch.empty(1)\n    pg.allreduce(x)\n"
    tune = ("from tuner.utils import barrier_async\nimport torch.distributed as dist\n\n"
            "def bench(fn, autotune_pg=None):\n    if autotune_pg:\n        barrier_async(autotune_pg)\n    fn()\n\n"
            "def stamp(t, pg=None):\n    if pg is not None:\n        pg.broadcast(t, 0)\n")
    helpers = _helpers({"python/tuner/utils.py": utils})
    found = analyze_source("python/tuner/tune.py", tune, CONFIG, project_path="python/tuner/tune.py",
                           helpers=helpers).findings
    assert [(f.code, f.span.line) for f in found] == [("PG103", 5), ("PG103", 10)]
    # only the folder the importing file shows is looked in, never guessed
    assert "python/tuner/utils.py" in helpers.reads  # type: ignore[attr-defined]
    other = _helpers({"python/tuner/utils.py": utils})
    assert not other.communicates("tuner.utils.barrier_async", frozenset(CONFIG.collectives))


OPS = '''\
import torch
import torch.distributed as dist


def _gather_rows(x, group):
    out = torch.empty(x.shape[0] * dist.get_world_size(group), *x.shape[1:])
    dist.all_gather_into_tensor(out, x, group=group)
    return out


def exchange_tails(tails, group):
    return _send_recv(tails, group, True)


def _send_recv(t, pg, forward):
    return _gather_rows(t, group=pg)


def count_tails(tails, group):
    return _count(tails, group)


def _count(t, pg):
    return len(t)


class _Slice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, group, x):
        ctx.group = group
        return x.chunk(dist.get_world_size(group))[dist.get_rank(group)]

    @staticmethod
    def backward(ctx, g):
        return None, _gather_rows(g, group=ctx.group)


class _Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, group, x):
        ctx.n = dist.get_world_size(group)
        return x / ctx.n

    @staticmethod
    def backward(ctx, g):
        return None, g / ctx.n
'''

CP_INIT = "from .ops import (\n    _Scale,\n    _Slice,\n    count_tails,\n    exchange_tails,\n)\n"

LAYER = '''\
import torch.distributed as dist
from pkg.cp import _Scale, _Slice, count_tails, exchange_tails


def shift(x, group=None):
    if group is None:
        return x
    return exchange_tails(x, group)


def tally(x, group=None):
    if group is None:
        return 0
    return count_tails(x, group)


def split(x, group=None):
    if not group:
        return x
    return _Slice.apply(group, x)


def scale(x, group=None):
    if group is None:
        return x
    return _Scale.apply(group, x)


def width(group=None):  # (a world-size query: the prefilter keeps the file)
    return dist.get_world_size(group) if group is not None else 1
'''


def test_helpers_reexported_by_a_package_and_communicating_through_their_files_functions_are_followed() -> None:
    # `from pkg.cp import exchange_tails` names what `pkg/cp/__init__.py` takes from `.ops`, where it hands its
    # group to `_send_recv`, which all-gathers on it through `_gather_rows`: the call is that group's collective
    helpers = _helpers({"pkg/cp/__init__.py": CP_INIT, "pkg/cp/ops.py": OPS})
    collectives = frozenset(CONFIG.collectives)
    assert helpers.communicates("pkg.cp.exchange_tails", collectives)
    assert not helpers.communicates("pkg.cp.count_tails", collectives)  # hands the group on, to nothing that communicates
    # an autograd Function of the project, run with `.apply`, that gathers in its backward on `ctx.group`
    assert helpers.applies("pkg.cp._Slice", collectives)
    assert not helpers.applies("pkg.cp._Scale", collectives)  # it only asks the size
    found = analyze_source("pkg/layer.py", LAYER, CONFIG, project_path="pkg/layer.py", helpers=helpers).findings
    assert [(f.code, f.span.line) for f in found] == [("PG103", 6), ("PG103", 18)]


def test_relative_imports_resolve_in_any_project_package() -> None:
    # `from .cp import exchange_tails` in pkg/layer.py is pkg.cp.exchange_tails (not only inside deepspeed/)
    helpers = _helpers({"pkg/cp/__init__.py": CP_INIT, "pkg/cp/ops.py": OPS})
    relative = LAYER.replace("from pkg.cp import", "from .cp import")
    found = analyze_source("pkg/layer.py", relative, CONFIG, project_path="pkg/layer.py", helpers=helpers).findings
    assert [(f.code, f.span.line) for f in found] == [("PG103", 6), ("PG103", 18)]


def test_a_project_modules_functions_called_through_the_module_are_read_as_its_helpers() -> None:
    # `from pkg import utils` then `utils.tie_shared(self, pg)`: the module's function broadcasts on pg
    model = MODEL.replace("from pkg.utils import tie_shared, count_shared", "from pkg import utils") \
        .replace("tie_shared(self,", "utils.tie_shared(self,").replace("count_shared(self,", "utils.count_shared(self,")
    helpers = _helpers({"pkg/utils.py": UTILS})
    found = analyze_source("pkg/model.py", model, CONFIG, project_path="pkg/model.py", helpers=helpers).findings
    assert [(f.code, f.span.line) for f in found if f.code == "PG103"] == [("PG103", 9)]
    alone = analyze_source("pkg/model.py", model, CONFIG, project_path="pkg/model.py").findings
    assert [f.code for f in alone if f.code == "PG103"] == []


LOSS_UTILS = '''\
import torch
import torch.distributed as dist


def sp_gather(x, sp_mesh, dim):
    if sp_mesh.size() == 1:
        return x
    return torch.cat(dist.all_gather(x, group=sp_mesh.get_group()), dim=dim)


def sp_all_gather(x, sp_mesh, dim):
    return torch.cat(dist.all_gather(x, group=sp_mesh.get_group()), dim=dim)
'''

LOSS = '''\
from .utils import sp_gather, sp_all_gather


def loss(labels, sp_mesh=None):
    if sp_mesh is not None:
        labels = sp_gather(labels, sp_mesh=sp_mesh, dim=1)
    if sp_mesh is not None:
        labels = sp_all_gather(labels, sp_mesh=sp_mesh, dim=1)
    return labels
'''


def test_a_none_test_before_a_helper_elsewhere_that_tests_the_size_is_half_of_one_guard() -> None:
    helpers = _helpers({"pkg/loss/utils.py": LOSS_UTILS})
    found = analyze_source("pkg/loss/ce.py", LOSS, CONFIG, project_path="pkg/loss/ce.py", helpers=helpers).findings
    # the None test before `sp_gather` (which exits on one rank itself) and that exit are one guard split across
    # files: nothing at the call (the predicate goes into the helper); `sp_all_gather` tests no size, so the
    # None test before it is None-only
    assert [(f.code, f.span.line) for f in found] == [("PG103", 7)]
    assert "a single-rank or non-member group still runs it" in found[0].message
    assert helpers.tests_size("pkg.loss.utils.sp_gather") and not helpers.tests_size("pkg.loss.utils.sp_all_gather")
    # without the project's other files, the helper is a wrapper like any other: its None test is None-only
    alone = analyze_source("pkg/loss/ce.py", LOSS, CONFIG, project_path="pkg/loss/ce.py").findings
    assert [(f.code, f.span.line) for f in alone] == [("PG103", 5), ("PG103", 7)]


def test_a_helper_elsewhere_tests_the_size_held_in_a_local_or_through_its_project_size_function() -> None:
    utils = ("import torch.distributed as dist\nfrom pkg import comm\n\n"
             "def reduce_(x, group=None):\n    n = dist.get_world_size(group=group)\n    if n == 1:\n        return x\n"
             "    dist.all_reduce(x, group=group)\n    return x\n\n"
             "def gather_(x, name):\n    if comm.get_size(name) == 1:\n        return x\n"
             "    dist.all_gather([x], x, group=comm.get_group(name))\n    return x\n\n"
             "def other_(x, group=None):\n    n = len(x)\n    if n == 1:\n        return x\n"
             "    dist.all_reduce(x, group=group)\n    return x\n")
    helpers = _helpers({"pkg/utils.py": utils})
    assert helpers.tests_size("pkg.utils.reduce_") and helpers.tests_size("pkg.utils.gather_")
    assert not helpers.tests_size("pkg.utils.other_")  # a count of something else
    # a size tested on the None path only leaves a group it is given untested (Hetu-Galvatron's gather)
    none_path = ("import torch.distributed as dist\n\n"
                 "def gather_(x, group):\n    n = dist.get_world_size(group)\n    if group is None:\n"
                 "        if n == 1:\n            return x\n    dist.all_gather([x], x, group=group)\n    return x\n")
    assert not _helpers({"pkg/g.py": none_path}).tests_size("pkg.g.gather_")
    assert _helpers({"pkg/g.py": none_path.replace("group is None", "group is not None")}).tests_size("pkg.g.gather_")


def test_a_none_test_before_a_project_helper_keeps_a_file_that_names_no_comm_module() -> None:
    # Fast-LLM's layers import no torch.distributed: `check_match` (its own file) gathers on the group through the
    # group's c10d method `_allgather_base`; the file that None-tests the group before handing it over is read
    comm = ("import torch\n\ndef gather_into(out, t, group):\n    assert group is not None\n"
            "    group._allgather_base(out, t, None)\n\n"
            "def check_match(t, group, name):\n    out = t.new_empty((group.size(),) + t.shape)\n"
            "    gather_into(out, t.unsqueeze(0), group)\n")
    layer = ("from pkg.core.comm import check_match\n\nclass Stage:\n    def log(self, out):\n"
             "        if self.debug and self.dist.tensor_group is not None:\n"
             "            check_match(out, self.dist.tensor_group, 'fw')\n")
    helpers = _helpers({"pkg/core/comm.py": comm})
    found = analyze_source("pkg/stage.py", layer, CONFIG, project_path="pkg/stage.py", helpers=helpers).findings
    assert [(f.code, f.span.line) for f in found] == [("PG103", 5)]
    # the same file with no None test before the call is not worth a parse: nothing there can be reported
    plain = layer.replace("self.debug and self.dist.tensor_group is not None", "self.debug")
    assert analyze_source("pkg/stage.py", plain, CONFIG, project_path="pkg/stage.py", helpers=helpers).findings == []


ULYSSES = '''\
import torch
import torch.distributed as dist


class _SeqAllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, group, x, scatter_dim, gather_dim):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, grad):
        out = [torch.empty_like(grad) for _ in range(dist.get_world_size(ctx.group))]
        dist.all_to_all(out, [grad], group=ctx.group)
        return None, torch.cat(out), None, None


class _Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x * dist.get_world_size(group)


def seq_attention(q, group):
    return _SeqAllToAll.apply(group, q, 2, 1)


def scaled(q, group):
    return _Scale.apply(q, group)


def misplaced(q, group):
    return _SeqAllToAll.apply(None, group, 2, 1)
'''


def test_a_helper_elsewhere_that_communicates_through_an_autograd_function_of_its_file_is_followed() -> None:
    # `seq_attention(q, group)` hands its group to `_SeqAllToAll.apply` in forward's slot of the group, saved on ctx
    # there and all-to-all'd in backward: a call of it is that group's collective
    helpers = _helpers({"pkg/ulysses.py": ULYSSES})
    collectives = frozenset(CONFIG.collectives)
    assert helpers.communicates("pkg.ulysses.seq_attention", collectives)
    assert not helpers.communicates("pkg.ulysses.scaled", collectives)  # its Function only asks the size
    assert not helpers.communicates("pkg.ulysses.misplaced", collectives)  # the group lands in forward's `x`
    model = ("from pkg.ulysses import seq_attention\n\n\ndef attend(q, sp_group=None):\n"
             "    if sp_group is not None:\n        q = seq_attention(q, sp_group)\n    return q\n")
    found = analyze_source("pkg/model.py", model, CONFIG, project_path="pkg/model.py", helpers=helpers).findings
    assert [(f.code, f.span.line) for f in found] == [("PG103", 5)]


def test_a_helper_elsewhere_tests_the_size_through_an_autograd_function_and_an_import_of_its_own() -> None:
    # reduce_t hands the group to an autograd Function of its file, whose forward hands it to a helper that file
    # imports from a third, which exits on one rank: the None test before reduce_t is half of that guard
    prims = ("import torch.distributed as dist\n\n"
             "def _reduce(x, group=None):\n    if dist.get_world_size(group=group) == 1:\n        return x\n"
             "    dist.all_reduce(x, group=group)\n    return x\n\n"
             "def _plain(x, group=None):\n    dist.all_reduce(x, group=group)\n    return x\n")
    graph = ("import torch\nfrom .prims import _reduce, _plain\n\n"
             "class _Reduce(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, group):\n"
             "        return _reduce(x, group=group)\n\n"
             "class _Plain(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, group):\n"
             "        return _plain(x, group=group)\n\n"
             "def reduce_t(x, group):\n    return _Reduce.apply(x, group)\n\n"
             "def plain_t(x, group):\n    return _Plain.apply(x, group)\n")
    helpers = _helpers({"pkg/dist/prims.py": prims, "pkg/dist/graph.py": graph})
    assert helpers.tests_size("pkg.dist.graph.reduce_t")
    assert not helpers.tests_size("pkg.dist.graph.plain_t")


def test_a_namespace_package_split_over_distributions_is_followed_to_its_sibling() -> None:
    # anemoi-core: `training/src/anemoi/training/losses/base.py` imports `anemoi.models.distributed.graph`, which
    # sits in `models/src/`: the folder the importing file shows, with its subpackage swapped for the import's
    graph = ("import torch.distributed as dist\n\n"
             "def reduce_tensor(x, group):\n    if dist.get_world_size(group=group) == 1:\n        return x\n"
             "    dist.all_reduce(x, group=group)\n    return x\n")
    loss = ("from anemoi.models.distributed.graph import reduce_tensor\n\n"
            "def total(x, group=None):\n    return x if group is None else reduce_tensor(x, group)\n")
    path = "training/src/anemoi/training/losses/base.py"
    helpers = _helpers({"models/src/anemoi/models/distributed/graph.py": graph})
    found = analyze_source(path, loss, CONFIG, project_path=path, helpers=helpers).findings
    assert found == []  # the None test and the helper's size exit are one guard split across files
    assert "models/src/anemoi/models/distributed/graph.py" in helpers.reads  # type: ignore[attr-defined]
    # in the file's own distribution the helper is not there, so that folder is asked first
    assert "training/src/anemoi/models/distributed/graph.py" in helpers.reads  # type: ignore[attr-defined]
