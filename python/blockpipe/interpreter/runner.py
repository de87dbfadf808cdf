"""Running a program's own Python functions with the `pl.*` operations
bound to NumPy: the orchestration runs once, each kernel call runs the
kernel once per block in block order, and a group's AIC and AIV halves run
on two threads that pass tiles through the pipes in order."""

from __future__ import annotations

import contextlib
import inspect
import threading
import types as _types
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from blockpipe.interpreter import gather_ops, kernel_ops, mesh, sort_ops  # noqa: F401 - IMPLS
from blockpipe.interpreter.state import (
    RUNNING,
    Running,
    annotations_of,
    as_tile,
    failure,
    misuse,
    numpy_dtype,
    running,
    unsupported,
)
from blockpipe.language.ops import INTERPRETER, Op
from blockpipe.language.types import FunctionType

KERNELS = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV, FunctionType.Group)


def run_op(op: Op, args: tuple, kwargs: dict):
    """Runs the DSL operation `op` on NumPy: what `pl.X(...)` does while a
    program is interpreted."""
    impl = kernel_ops.IMPLS.get(op.qualname) or ORCHESTRATION_OPS.get(op.qualname)
    if op.qualname in _AS_WRITTEN:
        # Spellings the compiler rewrites before it reads them (a loop's
        # init_values=) run here as the user wrote them.
        try:
            inspect.signature(impl).bind(*args, **kwargs)
        except TypeError as error:
            raise misuse(f"pl.{op.qualname}: {error}") from None
        return impl(*args, **kwargs)
    try:
        bound = op.signature.bind(*args, **kwargs)
    except TypeError as error:
        raise misuse(f"pl.{op.qualname}: {error}") from None
    bound.apply_defaults()
    if impl is None:
        raise unsupported(f"pl.{op.qualname}")
    now = running()
    if op.qualname in kernel_ops.IMPLS and not now.in_kernel and (now.spmd or 1) > 1:
        # The body of `with pl.spmd(n)` runs once here, not once per block.
        raise unsupported(
            f"pl.{op.qualname} directly in a 'with pl.spmd(n)' scope (a scope outlined into "
            "a kernel); call a kernel function there, or use 'for i in pl.spmd(n)'"
        )
    return impl(**bound.arguments)


# ------------------------------------------------------------ orchestration


class _Spmd:
    """`with pl.spmd(n)`: kernels called inside run n blocks; `for b in
    pl.spmd(n)`: the body runs once per block b, as that block."""

    def __init__(self, core_num):
        if isinstance(core_num, bool) or int(core_num) != core_num or core_num < 1:
            raise failure(f"pl.spmd needs a positive number of blocks, got {core_num!r}")
        self.core_num = int(core_num)
        self._token = None

    def __enter__(self):
        now = running()
        if now.spmd is not None:
            raise misuse("pl.spmd scopes do not nest")
        self._token = RUNNING.set(now.but(spmd=self.core_num))
        return self

    def __exit__(self, *exc):
        RUNNING.reset(self._token)
        return False

    def __iter__(self):
        now = running()
        for block in range(self.core_num):
            token = RUNNING.set(now.but(block_idx=block, block_num=self.core_num))
            try:
                yield block
            finally:
                RUNNING.reset(token)


def _loop(start, stop=None, step=None, init_values=None, stage=None):
    if stop is None:
        start, stop = 0, start
    indices = range(int(start), int(stop), 1 if step is None else int(step))
    if init_values is not None:
        return _Carried(indices, tuple(init_values))
    return indices


_CARRIED = threading.local()
_AS_WRITTEN = ("range", "parallel", "pipeline")


class _Carried:
    """`for i, (a, b) in pl.range(n, init_values=(x, y))`: each iteration
    sees the values the previous one gave pl.yield_ (the last statement
    of the body; a yield in an if before it is overridden by it)."""

    def __init__(self, indices, values: tuple):
        self.indices, self.values = indices, values

    def __iter__(self):
        stack = _CARRIED.__dict__.setdefault("stack", [])
        stack.append(self)
        try:
            for i in self.indices:
                yield i, self.values
        finally:
            stack.pop()


def carry(values: tuple):
    """pl.yield_(*values) while interpreting: the next iteration's values
    of the innermost loop that carries some; returned as the names it
    assigns receive them."""
    stack = getattr(_CARRIED, "stack", [])
    if stack:
        stack[-1].values = tuple(values)
    return values[0] if len(values) == 1 else tuple(values)


def _at(level=None, role=None, optimizations=None, **_):
    # A scope run as one block: its body runs in place.
    return contextlib.nullcontext()


def _create_tensor(shape, dtype):
    return np.zeros([int(s) for s in shape], numpy_dtype(dtype))


ORCHESTRATION_OPS: Dict[str, Callable] = {
    "spmd": lambda core_num, **_: _Spmd(core_num),
    "range": _loop,
    "parallel": _loop,
    "pipeline": _loop,
    "unroll": _loop,
    "at": _at,
    "split": lambda mode, slot_num=None: ("split", mode, slot_num),
    "cross_core_slot": lambda slot_num: ("cross_core_slot", slot_num),
    "create_tensor": _create_tensor,
}


# ------------------------------------------------------------------ pipes


class Deadlock:
    """Marks the ExecutionError of a pop no push can ever answer."""

    @staticmethod
    def wrap(error: Exception) -> Exception:
        error.deadlock = True
        return error


class Pipes:
    """The pipes of one block of a group: a FIFO per direction and pipe id.
    A pop waits for the other half's push; when every half still running
    waits, no push can come, and the pop fails (as the compiled run's
    bounded wait does)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._queues: Dict[tuple, List[np.ndarray]] = {}
        self.running = 0
        self._waiters: Dict[tuple, int] = {}
        self.stuck = False

    def push(self, key: tuple, value) -> None:
        with self._cond:
            self._queues.setdefault(key, []).append(as_tile(value))
            self._cond.notify_all()

    def pop(self, key: tuple):
        with self._cond:
            queue = self._queues.setdefault(key, [])
            self._waiters[key] = self._waiters.get(key, 0) + 1
            try:
                while not queue:
                    # Stuck when every half still running waits on an empty
                    # queue (one woken for a push it can take is not stuck).
                    blocked = sum(n for k, n in self._waiters.items() if not self._queues[k])
                    if self.stuck or blocked >= self.running:
                        self.stuck = True
                        self._cond.notify_all()
                        raise Deadlock.wrap(
                            failure("a pipe pop waits for a push that never comes (deadlock)")
                        )
                    self._cond.wait()
            finally:
                self._waiters[key] -= 1
            return queue.pop(0)

    def started(self) -> None:
        with self._cond:
            self.running += 1

    def finished(self) -> None:
        with self._cond:
            self.running -= 1
            self._cond.notify_all()


def _pipe_ops() -> Dict[str, Callable]:
    def key(direction: str, pipe_id, aiv_idx, split, id):  # noqa: A002 - pypto's name
        if split not in (None, 0) or aiv_idx not in (0, None):
            raise unsupported("a split pipe (split= or aiv_idx=)")
        pipes = running().pipes
        if pipes is None:
            raise misuse("pipe operations run in the AIC and AIV functions of a group")
        return pipes, (direction, id if id is not None else pipe_id)

    def push(direction: str):
        def run(tile, pipe_id=0, aiv_idx=0, split=None, id=None):  # noqa: A002
            pipes, k = key(direction, pipe_id, aiv_idx, split, id)
            pipes.push(k, tile)

        return run

    def pop(direction: str):
        def run(pipe_id=0, aiv_idx=0, split=None, id=None):  # noqa: A002
            pipes, k = key(direction, pipe_id, aiv_idx, split, id)
            return pipes.pop(k)

        return run

    def nothing(*_, **__):
        return None

    return {
        "tpush_to_aiv": push("c2v"),
        "tpop_from_aic": pop("c2v"),
        "tpush_to_aic": push("v2c"),
        "tpop_from_aiv": pop("v2c"),
        # A popped tile is a copy here, so freeing its slot has nothing to do.
        "tfree_to_aic": nothing,
        "tfree_to_aiv": nothing,
        "aic_initialize_pipe": nothing,
        "aiv_initialize_pipe": nothing,
    }


ORCHESTRATION_OPS.update(_pipe_ops())
ORCHESTRATION_OPS.update(mesh.P2P_OPS)


class Halves:
    """The AIC and AIV functions a group started for one block, each on its
    own thread (pdb works in either)."""

    def __init__(self):
        self.threads: List[threading.Thread] = []
        self.errors: List[BaseException] = []


def _start_half(call: Callable, now: Running) -> None:
    halves, pipes = now.halves, now.pipes
    pipes.started()

    def body():
        token = RUNNING.set(now)
        interp = INTERPRETER.set(run_op)
        try:
            call()
        except BaseException as error:  # noqa: BLE001 - re-raised by the group
            halves.errors.append(error)
        finally:
            INTERPRETER.reset(interp)
            RUNNING.reset(token)
            pipes.finished()

    thread = threading.Thread(target=body, name=f"{now.name} block {now.block_idx}")
    halves.threads.append(thread)
    thread.start()


# --------------------------------------------------------------- functions


def outputs_of(fn: Callable, args: tuple):
    """What a call of a kernel returns: its Out/InOut tensors (written in
    place), in order: bp-normalize-return-order's rule."""
    from blockpipe.language.types import ParamDirection, ParamType

    found = annotations_of(fn)
    names = [p for p in inspect.signature(fn).parameters][1:]
    outs = [
        a
        for name, a in zip(names, args)
        if isinstance(found.get(name), ParamType) and found[name].direction is not ParamDirection.In
    ]
    if not outs:
        return None
    return outs[0] if len(outs) == 1 else tuple(outs)


class Self:
    """What `self` is in an interpreted program's functions: its functions
    run as calls of the program (kernels launched over blocks), its other
    attributes are the class's."""

    def __init__(self, program):
        self._program = program

    def __getattr__(self, name: str):
        spec = self._program.functions.get(name)
        if spec is not None:
            return lambda *args, **kwargs: call_function(self, spec, args, kwargs)
        value = getattr(self._program.cls, name)
        if isinstance(value, _types.FunctionType):
            return _types.MethodType(value, self)
        return value


def call_function(this, spec, args: tuple, kwargs: dict):
    """Runs the program function `spec` called with `args` from the
    function running now."""
    fn = spec.pyfunc
    if spec.unsupported:
        raise unsupported(spec.unsupported)
    if kwargs:
        bound = inspect.signature(fn).bind(this, *args, **kwargs)
        args = tuple(bound.args[1:])
    now = running()
    kind = spec.kind
    if kind not in KERNELS:
        if kind is not FunctionType.Orchestration:
            raise unsupported(f"a call of a {kind.name} function")
        if now.kind is FunctionType.Pipeline:
            return _stage(spec, this, args, now)
        # An orchestration calling one: it runs on the caller's device.
        state = Running(kind, spec.name, device=now.device, mesh=now.mesh, place=now.place)
        return _as(state, fn, this, *args)
    if not now.in_kernel:
        return launch(spec.name, kind, lambda: fn(this, *args), now)
    if now.kind is FunctionType.Group and kind in (FunctionType.AIC, FunctionType.AIV):
        _start_half(lambda: fn(this, *args), now.but(kind=kind, name=spec.name))
        return outputs_of(fn, args)
    # A kernel calling a kernel function: inlined into this block.
    return _as(now.but(kind=kind if kind is not FunctionType.InCore else now.kind), fn, this, args)


def launch(name: str, kind: FunctionType, body: Callable, now: Running):
    """Runs a kernel's `body` once per block of the launch, in block order
    (a kernel called outside pl.spmd runs as one block)."""
    if now.spmd is None and now.block_num > 1:
        # Inside `for b in pl.spmd(n)`: the kernel runs as that one block.
        blocks, count = [now.block_idx], now.block_num
    else:
        count = now.spmd or 1
        blocks = list(range(count))
    result = None
    for block in blocks:
        state = Running(
            kind, name, block_idx=block, block_num=count, device=now.device, place=now.place
        )
        if kind is FunctionType.Group:
            state = state.but(pipes=Pipes(), halves=Halves())
        result = _as(state, body)
    return result


def _as(state: Running, fn: Callable, *args):
    """`fn(*args)` run as `state`; a group waits for the halves it started."""
    token = RUNNING.set(state)
    group = state.kind is FunctionType.Group and state.halves is not None
    if group:
        state.pipes.started()  # the group's body, until it started its halves
    try:
        result = fn(*args)
    finally:
        RUNNING.reset(token)
        if group:
            state.pipes.finished()
    if group:
        for thread in state.halves.threads:
            thread.join()
        if state.halves.errors:
            # The root cause first: a half's own error, not the other's wait.
            errors = sorted(state.halves.errors, key=lambda e: getattr(e, "deadlock", False))
            raise errors[0]
    return result


def run_entry(fn: Callable, args: tuple, this: Any = None, kind=FunctionType.Orchestration):
    """Runs the entry function `fn` (an orchestration) with the
    interpreter bound."""
    token = INTERPRETER.set(run_op)
    try:
        call_args = args if this is None else (this, *args)
        return _as(Running(kind, getattr(fn, "__name__", "main")), fn, *call_args)
    finally:
        INTERPRETER.reset(token)


def run_mesh(fn: Callable, args: tuple, this: Any, devices: int) -> None:
    """Runs the orchestration `fn` on every device of a mesh of `devices`:
    device d gets slice d of each array's axis 0 (its own memory), scalars
    alike; the first device's own error is raised once all have ended."""
    channels = mesh.Mesh(devices)

    def on_device(device: int) -> None:
        mine = tuple(a[device] if isinstance(a, np.ndarray) else a for a in args)
        state = Running(
            FunctionType.Orchestration,
            getattr(fn, "__name__", "main"),
            device=device,
            mesh=channels,
            place=f"device {device}: ",
        )
        token = INTERPRETER.set(run_op)
        try:
            _as(state, fn, this, *mine)
        finally:
            INTERPRETER.reset(token)

    error = mesh.root_cause(channels.run(on_device))
    if error is not None:
        raise error


def run_pipeline(spec, args: tuple, this: Any) -> None:
    """Runs the Pipeline function `spec` once per microbatch, in order; each
    stage it calls runs there on that microbatch's slice of the split
    arguments. Stages read only their inputs and write only their output,
    so this order gives what any schedule of the compiled run gives."""
    count = spec.microbatches or 1
    token = INTERPRETER.set(run_op)
    try:
        for k in range(count):
            _as(
                Running(FunctionType.Pipeline, spec.name, microbatch=(k, count)),
                spec.pyfunc,
                this,
                *args,
            )
    finally:
        INTERPRETER.reset(token)


def _stage(spec, this, args: tuple, pipeline: Running):
    """A Pipeline function's call of the stage `spec` on its microbatch: an
    argument whose leading dim is microbatches times the stage parameter's
    is split (bp.stage's rule); the others are passed whole."""
    from blockpipe.language.types import ParamType, TensorType

    k, count = pipeline.microbatch
    found = annotations_of(spec.pyfunc)
    names = list(inspect.signature(spec.pyfunc).parameters)[1:]
    mine = []
    for name, arg in zip(names, args):
        ann = found.get(name)
        ann = ann.inner if isinstance(ann, ParamType) else ann
        lead = ann.shape[0] if isinstance(ann, TensorType) and ann.shape else None
        if isinstance(arg, np.ndarray) and isinstance(lead, int) and count > 1:
            if arg.shape[0] == count * lead:
                arg = arg[k * lead : (k + 1) * lead]
        mine.append(arg)
    state = Running(
        FunctionType.Orchestration,
        spec.name,
        device=spec.device,
        place=f"stage '{spec.name}' (device {spec.device}) microbatch {k}: ",
    )
    return _as(state, spec.pyfunc, this, *mine)


def interpreting() -> bool:
    return INTERPRETER.get() is not None


def kernel_call(name: str, fn: Callable, args: tuple, kind=FunctionType.InCore) -> Optional[Any]:
    """A call of a kernel function that is no method (a @pl.jit.incore
    function): launched from an orchestration, inlined in a kernel."""
    now = running()
    if now.in_kernel:
        return _as(now, fn, *args)
    return launch(name, kind, lambda: fn(*args), now)


class Tensor(np.ndarray):
    """A tensor argument while interpreted: the array, with pypto's
    tensor methods that only inform the compiler."""

    def bind_dynamic(self, axis, name) -> None:
        return None


def copy_arguments(values: List[Any], writes: List[bool]) -> List[Any]:
    """The arguments a call runs on: copies of the tensors it writes, so a
    call that fails leaves them as they were."""
    return [
        (np.array(v, copy=True) if w else v).view(Tensor) if isinstance(v, np.ndarray) else v
        for v, w in zip(values, writes)
    ]


def write_back(originals: List[Any], copies: List[Any], writes: List[bool]) -> None:
    for original, copy, written in zip(originals, copies, writes):
        if written:
            original[...] = copy
