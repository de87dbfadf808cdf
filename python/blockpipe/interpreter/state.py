"""What an interpreted program runs in: which function and block is
running (a context variable, so each half of a group, on its own thread,
has its own), tiles as NumPy arrays, and errors at the user's line."""

from __future__ import annotations

import inspect
import os
import sys
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Optional, Tuple

import numpy as np

from blockpipe.errors import CompileError, execution_error
from blockpipe.language.types import DType, FunctionType


@dataclass(frozen=True)
class Running:
    """The function being interpreted and, in a kernel, its block."""

    kind: FunctionType
    name: str
    block_idx: int = 0
    block_num: int = 1
    # In an orchestration, inside `with pl.spmd(n)`: n.
    spmd: Optional[int] = None
    # In a group and its halves: the pipes between them (runner.Pipes).
    pipes: Any = None
    # In a group: the halves it started (runner.Halves).
    halves: Any = None
    # The device it runs on (pl.device_id()): a mesh run's device, or the
    # device a pipeline stage is placed on; None on a single device.
    device: Optional[int] = None
    # In a mesh run: the channels between its devices (mesh.Mesh).
    mesh: Any = None
    # In a Pipeline function: (microbatch k, of m microbatches).
    microbatch: Optional[Tuple[int, int]] = None
    # What run-time errors name before the kernel and block: the device of
    # a mesh run, or a pipeline's stage, device and microbatch.
    place: str = ""

    def but(self, **changes) -> Running:
        return replace(self, **changes)

    @property
    def in_kernel(self) -> bool:
        return self.kind not in (
            FunctionType.Orchestration,
            FunctionType.Opaque,
            FunctionType.Pipeline,
        )


RUNNING: ContextVar[Optional[Running]] = ContextVar("blockpipe_running", default=None)


def running() -> Running:
    return RUNNING.get()


class Tile(np.ndarray):
    """A tile while a program is interpreted: a NumPy array of the tile's
    shape and dtype (what pdb, print and NumPy see), which also knows its
    valid shape (None: all of it) and whether it is a comparison's 1/0
    result (`predicate`, which what is computed from it is not)."""

    valid: Optional[Tuple[int, ...]] = None
    predicate: bool = False

    def __array_finalize__(self, obj) -> None:
        self.valid = getattr(obj, "valid", None)


def as_tile(array, valid: Optional[Tuple[int, ...]] = None) -> Tile:
    """`array` as a Tile (a copy when it is a tensor's memory) with `valid`."""
    result = np.array(array, copy=True).view(Tile)
    result.valid = tuple(int(v) for v in valid) if valid is not None else None
    if result.valid is not None and result.valid == result.shape:
        result.valid = None
    return result


def numpy_dtype(dtype: DType) -> np.dtype:
    from blockpipe.dtypes import _numpy_dtype

    found = _numpy_dtype(dtype.name.lower())
    if found is None:
        raise TypeError(f"pl.{dtype.name} has no NumPy dtype")
    return found


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_site() -> Tuple[Optional[str], Optional[int], Optional[int]]:
    """The file, line and column of the innermost frame outside blockpipe:
    the user's call of the operation being run."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return None, None, None
    column = None
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions) and positions[index][2] is not None:
        column = positions[index][2] + 1
    return frame.f_code.co_filename, frame.f_lineno, column


def unsupported(what: str) -> CompileError:
    """The error for a construct the interpreter does not run, at the
    user's line."""
    file, line, column = user_site()
    return CompileError(
        f"{what} is not supported in interpreter mode (BLOCKPIPE_INTERPRET=1); "
        "run the program compiled (without BLOCKPIPE_INTERPRET) instead",
        file,
        line,
        column,
    )


def misuse(message: str) -> CompileError:
    """A CompileError at the user's line (what the compiler rejects too)."""
    file, line, column = user_site()
    return CompileError(message, file, line, column)


def failure(message: str) -> Exception:
    """A run-time failure (blockpipe.ExecutionError) naming the kernel, the
    block and the user's line, as a compiled run's does."""
    now = running()
    file, line, _ = user_site()
    where = f"{file}:{line}: " if file else ""
    who = f"kernel '{now.name}' block {now.block_idx}: " if now and now.in_kernel else ""
    place = now.place if now else ""
    return execution_error()(f"{where}{place}{who}{message}")


def annotations_of(fn) -> dict:
    """The parameter annotations of the program function `fn`, evaluated."""
    try:
        return inspect.get_annotations(fn, eval_str=True)
    except Exception:  # noqa: BLE001 - a string annotation naming what is gone
        return dict(getattr(fn, "__annotations__", {}))
