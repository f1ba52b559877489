"""``pg_utils.is_parallel`` without processes: which comm module it uses, and that None needs no torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import pg_utils
from pg_utils import is_parallel

REPO = Path(__file__).resolve().parents[1]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter that imports pg_utils from this checkout."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True,
                          text=True, timeout=60)


class FakeComm(ModuleType):
    """Stands in for deepspeed.comm / torch.distributed: records calls, answers a fixed size."""

    def __init__(self, name: str, size: int) -> None:
        super().__init__(name)
        self.size = size
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def get_world_size(self, *args: Any, **kwargs: Any) -> int:
        self.calls.append((args, kwargs))
        return self.size


def _install(monkeypatch: pytest.MonkeyPatch, name: str, module: ModuleType | None) -> None:
    # None in sys.modules makes `import name` raise ImportError: the package is "not installed".
    monkeypatch.setitem(sys.modules, name, module)  # type: ignore[arg-type]


def _fake_deepspeed(monkeypatch: pytest.MonkeyPatch, size: int) -> FakeComm:
    comm = FakeComm("deepspeed.comm", size)
    package = ModuleType("deepspeed")
    package.__path__ = []  # a package, so `deepspeed.comm` is a submodule
    package.comm = comm  # type: ignore[attr-defined]
    _install(monkeypatch, "deepspeed", package)
    _install(monkeypatch, "deepspeed.comm", comm)
    return comm


def test_exports_only_the_predicate() -> None:
    assert pg_utils.__all__ == ["is_parallel"]
    assert pg_utils.is_parallel is is_parallel


def test_none_is_false_with_torch_blocked() -> None:
    result = _python("""
        import sys
        sys.modules["torch"] = None  # any import of torch now raises ImportError
        sys.modules["deepspeed"] = None
        from pg_utils import is_parallel
        assert is_parallel(None) is False
        try:
            is_parallel(object())  # a real group does need a comm module: proves the block is effective
        except RuntimeError as exc:
            print("blocked:", exc)
    """)
    assert result.returncode == 0, result.stderr
    assert "blocked: is_parallel needs deepspeed.comm or torch.distributed" in result.stdout


def test_import_and_none_load_no_comm_module() -> None:
    result = _python("""
        import sys
        from pg_utils import is_parallel
        assert is_parallel(None) is False
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "deepspeed")))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_none_does_not_call_get_world_size(monkeypatch: pytest.MonkeyPatch) -> None:
    comm = _fake_deepspeed(monkeypatch, size=8)
    assert is_parallel(None) is False
    assert comm.calls == []


@pytest.mark.parametrize(("size", "expected"), [(2, True), (8, True), (1, False), (-1, False), (0, False)])
def test_prefers_deepspeed_comm(monkeypatch: pytest.MonkeyPatch, size: int, expected: bool) -> None:
    deepspeed_comm = _fake_deepspeed(monkeypatch, size)
    torch_dist = FakeComm("torch.distributed", size=-size)  # opposite answer: shows which one was asked
    _install(monkeypatch, "torch.distributed", torch_dist)
    group = object()
    assert is_parallel(group) is expected
    assert deepspeed_comm.calls == [((), {"group": group})]
    assert torch_dist.calls == []


@pytest.mark.parametrize(("size", "expected"), [(3, True), (1, False), (-1, False)])
def test_falls_back_to_torch_distributed(monkeypatch: pytest.MonkeyPatch, size: int, expected: bool) -> None:
    _install(monkeypatch, "deepspeed", None)
    torch_dist = FakeComm("torch.distributed", size)
    _install(monkeypatch, "torch.distributed", torch_dist)
    group = object()
    assert is_parallel(group) is expected
    assert torch_dist.calls == [((), {"group": group})]


def test_no_comm_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _install(monkeypatch, "deepspeed", None)
    _install(monkeypatch, "torch.distributed", None)
    with pytest.raises(RuntimeError, match=r"needs deepspeed\.comm or torch\.distributed"):
        is_parallel(object())


def test_none_with_real_torch_distributed_uninitialised(monkeypatch: pytest.MonkeyPatch) -> None:
    dist = pytest.importorskip("torch.distributed")
    _install(monkeypatch, "deepspeed", None)
    assert not dist.is_initialized()
    assert is_parallel(None) is False
    # before init torch's WORLD handle is itself None, so a guard on it is False rather than an error
    assert dist.group.WORLD is None
    assert is_parallel(dist.group.WORLD) is False
