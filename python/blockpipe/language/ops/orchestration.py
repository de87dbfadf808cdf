"""Orchestration and block identity: launching kernels over blocks
(`pl.spmd`), loops in kernels (`pl.range`), tensors an orchestration makes,
and the block a kernel runs as."""

from __future__ import annotations

import ast

from blockpipe.language.ops import operation
from blockpipe.language.ops.memory import offsets_arg
from blockpipe.language.types import DType, FunctionType, ScalarType, SplitMode, TensorType, dynamic
from blockpipe.language.values import KERNEL_KINDS, Value, is_int


@operation()
def spmd(cx, call, core_num, sync_start=False, name_hint=None, optimizations=None):
    """Launches the kernels called in its block on `core_num` blocks:
    `with pl.spmd(n):` or `for i in pl.spmd(n):`.

    core_num: a positive number, or an index value computed at run time
        (e.g. from `pl.tensor.dim`). Each block reads its own index with
        `pl.tile.get_block_idx()`; the loop variable of `for i in pl.spmd(n)`
        has no value in the orchestration.
    sync_start: all blocks start together (their core groups are held until
        every block has one).
    name_hint: a name for the launch in traces and generated code.
    optimizations: `[pl.split(mode)]` on a scope outlined into a kernel
        (an Opaque or @pl.jit function), as for pl.at.

    Valid in orchestration functions; not nested. A kernel called outside
    pl.spmd runs as one block.

    Example::

        with pl.spmd(rows // 16):
            out = self.add_rows(x, y, out)
    """
    raise cx.error(
        call.node, "pl.spmd is only valid as 'with pl.spmd(n):' or 'for i in pl.spmd(n):'"
    )


@operation(name="range")
def range_(cx, call, start, stop=None, step=None):
    """A loop in a kernel: `for k in pl.range(stop)`, `pl.range(start, stop)`
    or `pl.range(start, stop, step)`, bounds known at compile time or at run
    time (index values, INT32/INT64 scalars), a positive step.

    Names the body reassigns are carried from one iteration to the next
    (tiles, scalars, index values); the loop variable has no value after the
    loop. Valid in InCore, AIC and AIV functions.

    Example::

        acc = pl.full([16, 16], pl.FP32, 0.0)
        for k in pl.range(0, K, 32):
            acc = pl.matmul(pl.load(a, [0, k], [16, 32]), pl.load(b, [k, 0], [32, 16]), acc=acc)
    """
    raise cx.error(call.node, "pl.range is only valid as the iterable of a for loop")


@operation()
def parallel(cx, call, start, stop=None, step=None, init_values=None):
    """pypto's loop whose iterations are independent, `for i in
    pl.parallel(n)`: the same bounds, carried values and loop as
    `pl.range`. The iterations may run in any order; blockpipe runs them in
    order, which is one of those (a body whose iterations depend on each
    other is the program's race, as in pypto)."""
    raise cx.error(call.node, "pl.parallel is only valid as the iterable of a for loop")


@operation()
def unroll(cx, call, start, stop=None, step=None):
    """pypto's loop unrolled at compile time, `for i in pl.unroll(4)` or
    `pl.unroll(start, stop, step)`: the body is repeated once per value of
    Python's `range(start, stop, step)`, the loop variable a number in each
    copy. The bounds are integers known at compile time, the step is not 0
    (it may be negative), and there are no init_values: names the body
    reassigns hold their values from one copy to the next, as Python runs
    it. At most 1024 copies; valid wherever `range()` of numbers is."""
    raise cx.error(call.node, "pl.unroll is only valid as the iterable of a for loop")


@operation()
def pipeline(cx, call, start, stop=None, step=None, stage=None, init_values=None):
    """pypto's software-pipelined loop, `for k in pl.pipeline(n, stage=2)`:
    the same bounds and loop as `pl.range`. `stage` (a positive integer
    known at compile time) is pypto's hint to replicate the body for
    ping-pong buffering; on blockpipe's targets the loop runs as written.
    """
    raise cx.error(call.node, "pl.pipeline is only valid as the iterable of a for loop")


@operation()
def split_aiv(cx, call, n, mode):
    """A region run by each AIV lane of the core group on its own half:
    `for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):` in a
    `pl.at(level=pl.Level.CORE_GROUP)` scope (an InCore kernel).

    The loop variable is the lane, `pl.tile.get_subblock_idx()` (0 or 1);
    `pl.aiv_shard(t)` is the lane's half of a tile the cube computed (the
    top or bottom rows for UP_DOWN, the left or right columns for
    LEFT_RIGHT), and the body says itself where its results go. Regions may
    sit in loops and ifs, and sibling regions may differ in mode. A kernel
    with a region runs its vector work in regions only.

    n: 2, the AIV sub-blocks of a core group. mode: UP_DOWN or LEFT_RIGHT
    (data-parallel halves), or NONE: task-parallel lanes, both running the
    body for work they divide by the lane index (no pl.aiv_shard there).
    """
    raise cx.error(
        call.node, "pl.split_aiv is only valid as 'for aiv_id in pl.split_aiv(2, mode=...):'"
    )


@operation(kinds=KERNEL_KINDS)
def aiv_shard(cx, call, x):
    """This AIV lane's half of the tile `x`, inside a `pl.split_aiv` region:
    rows `[lane * r/2, (lane + 1) * r/2)` under UP_DOWN, columns likewise
    under LEFT_RIGHT. A tile the cube computed crosses to the lanes here,
    each receiving only its half.
    """
    from blockpipe.language import valid_shapes
    from blockpipe.language.ops.vector import vector_operand
    from blockpipe.language.types import MemorySpace, TileType

    mode = cx.lane
    if mode is None:
        raise cx.error(
            call.node,
            "pl.aiv_shard is only valid inside a 'for aiv_id in pl.split_aiv(...)' region",
        )
    if mode is SplitMode.NONE:
        raise cx.error(
            call.node,
            "pl.aiv_shard in a pl.split_aiv(mode=pl.SplitMode.NONE) region would hand the "
            "whole tile to both lanes, which blockpipe does not support; use an UP_DOWN or "
            "LEFT_RIGHT region",
        )
    value = cx.typed_tile(cx.tile_arg(x, "pl.aiv_shard's tile"), call.node, "pl.aiv_shard's tile")
    shape = value.type.shape
    axis = 0 if mode is SplitMode.UP_DOWN else 1
    if len(shape) != 2 or shape[axis] % 2:
        raise cx.error(
            call.node,
            f"pl.aiv_shard under {mode.name} halves the {('rows', 'columns')[axis]} of a "
            f"2-D tile with an even number of them, not a {list(shape)} tile",
        )
    half = shape[axis] // 2
    dims = list(shape)
    dims[axis] = half
    zero = cx.index_value(0, call.node)
    start = cx.index_value(
        cx.arith_binop(ast.Mult(), cx.lane_value, half, call.node, None), call.node
    )
    first = [start, zero] if axis == 0 else [zero, start]
    t = vector_operand(cx, value, call.node, "pl.aiv_shard's tile")
    valid = valid_shapes.of_window(cx, t, first, dims, call.node)
    (result,) = cx.create(
        "bp.extract",
        [valid_shapes.with_valid(t, None)] + first,
        [TileType(tuple(dims), t.type.dtype, MemorySpace.Vec)],
        {"bp.aiv_shard": cx.builder.split_mode(mode.name.lower())},
        call.node,
        call.name,
    )
    return valid_shapes.with_valid(result, valid)


@operation(
    kinds=(
        FunctionType.Orchestration,
        FunctionType.Pipeline,
        FunctionType.InCore,
        FunctionType.AIV,
        FunctionType.AIC,
    )
)
def create_tensor(cx, call, shape, dtype):
    """A new GM tensor for the orchestration's intermediate results:
    `pl.create_tensor([rows, 64], pl.FP32)`.

    shape: a list of sizes, numbers or index values known at run time.
    Valid in orchestration and pipeline functions. In a kernel (pypto's
    local tensor in a `pl.at` scope) it is a tile of that shape, zero until
    written, as pl.tile.create makes (sizes known at compile time).
    """
    if cx.kind in (FunctionType.InCore, FunctionType.AIV, FunctionType.AIC):
        from blockpipe.language.ops.scratch import _create

        return _create(cx, call, shape, dtype, None, "pl.create_tensor")
    element = cx.dtype_arg(dtype, "pl.create_tensor's dtype")
    if not isinstance(shape, (ast.List, ast.Tuple)) or not shape.elts:
        raise cx.error(shape, "pl.create_tensor's shape must be a list of sizes")
    dims, sizes = [], []
    for elt in shape.elts:
        value = cx.expr(elt)
        if isinstance(value, int):
            if value <= 0:
                raise cx.error(elt, f"tensor sizes must be positive, got {value}")
            dims.append(value)
        else:
            sizes.append(cx.index_value(value, elt))
            dims.append(dynamic)
    (result,) = cx.create(
        "bp.tensor_create", sizes, [TensorType(tuple(dims), element)], {}, call.node, call.name
    )
    return result


def _dump_tag(cx, call, tensor):
    """pypto's selective-dump marker, `pl.dump_tag(q)`: on Ascend, with
    partial argument dumps on, the kernel launches after it that take `q`
    dump it. A debugging aid with no effect on results: blockpipe checks
    that `q` is a tensor and ignores the tag (it has no argument dumps; see
    docs/tracing.md for what it records). Returns `q`. Valid in
    orchestration functions (and the helpers and Opaque functions they come
    from), as in pypto."""
    return cx.tensor_arg(tensor, "pl.dump_tag's argument")


dump_tag = operation(name="dump_tag", kinds=(FunctionType.Orchestration,))(_dump_tag)
tensor_dump_tag = operation(name="tensor.dump_tag", kinds=(FunctionType.Orchestration,))(_dump_tag)


def _block_query(op: str, doc: str):
    def lower(cx, call):
        if op == "get_subblock_idx" and cx.spec.dual_aiv_dispatch:
            raise cx.error(
                call.node,
                f"'{cx.spec.name}' has attrs={{'dual_aiv_dispatch': True}}, which blockpipe "
                "runs once per block on sub-block 0: pl.tile.get_subblock_idx() would always "
                "be 0 here, unlike pypto's second lane; split the work with "
                "attrs={'split': pl.SplitMode...} or pl.split_aiv instead",
            )
        (result,) = cx.create(f"bp.{op}", [], None, {}, call.node, call.name)
        return result

    lower.__name__ = op
    lower.__doc__ = doc + "\n\n    An index value; valid in InCore, AIC and AIV functions.\n    "
    return operation(name=f"tile.{op}", kinds=KERNEL_KINDS)(lower)


get_block_idx = _block_query(
    "get_block_idx",
    "The index of the block this kernel runs as, 0 .. core_num - 1 of its pl.spmd launch.",
)
get_block_num = _block_query(
    "get_block_num", "The number of blocks of this kernel's launch (core_num)."
)
get_subblock_idx = _block_query(
    "get_subblock_idx",
    "The index of the vector sub-block running this AIV function within its core group:\n"
    "    0 or 1 in a kernel split UP_DOWN or LEFT_RIGHT (or with pl.split_aiv regions), else 0.",
)


@operation()
def at(
    cx,
    call,
    level,
    role=None,
    optimizations=None,
    deps=None,
    no_dep_args=None,
    dumps=None,
    allow_early_resolve=False,
    name_hint=None,
    windowize=False,
):
    """A scope outlined into a kernel: `with pl.at(level=pl.Level.CORE_GROUP):`
    in an Opaque or orchestration function (pypto's form).

    The body works on the function's tensors with tile operations (a tensor
    where a tile is expected is loaded whole; `pl.slice` and `pl.assemble`
    take windows); it becomes an InCore kernel `<function>_incore_<i>` (or
    `name_hint`) launched on one block where the scope is. A parameter the
    body assigns is written (the kernel takes it InOut).

    optimizations: `[pl.split(mode)]`, the split of the vector work over the
        AIV sub-blocks. deps= and dumps= are accepted and change nothing
        (blockpipe orders tasks by their tensors; dumps are pypto's
        debugging aid, see pl.dump_tag). role=, no_dep_args=,
        allow_early_resolve= and windowize= are pypto's and not supported.
    """
    raise cx.error(
        call.node,
        "pl.at is only valid as 'with pl.at(level=pl.Level.CORE_GROUP):' at the top "
        "of an Opaque or orchestration function",
    )


@operation()
def split(cx, call, mode, slot_num=None):
    """`pl.split(pl.SplitMode.UP_DOWN)`: an entry of
    `pl.at(..., optimizations=[...])`. slot_num= is pypto's older spelling
    of pl.cross_core_slot's."""
    raise cx.error(call.node, "pl.split(mode) is only valid in pl.at(..., optimizations=[...])")


@operation()
def cross_core_slot(cx, call, slot_num):
    """`pl.cross_core_slot(slot_num=4)`: an entry of
    `pl.at(..., optimizations=[...])`, the slots per direction of the pipe
    the compiler puts between the scope's cube and vector work (default: the
    target's). At most the target's pipe.max_slot_num; the compiler raises
    it to the tiles one side holds at once when that is more."""
    raise cx.error(
        call.node, "pl.cross_core_slot(slot_num=) is only valid in pl.at(..., optimizations=[...])"
    )


@operation()
def const(cx, call, value, dtype):
    """A scalar constant of a dtype: `pl.const(0, pl.INT32)` (pypto's).

    value: a number known at compile time that `dtype` can hold.
    """
    number = cx.static(value)
    kind = cx.static(dtype)
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise cx.error(
            value, f"pl.const's value must be a number known at compile time, got {number!r}"
        )
    if not isinstance(kind, DType):
        raise cx.error(dtype, f"pl.const's dtype must be a pl dtype, got {kind!r}")
    return cx.constant(number, kind, value)


@operation(name="system.syncall", kinds=KERNEL_KINDS)
def syncall(cx, call, core_type=None, mode=None, gm_workspace=None, used_cores=None):
    """A barrier of every block of the launch: none goes on until all have
    reached it, so what each wrote to GM before it is there for all after
    it. `pl.system.syncall()`.

    core_type: which halves take part: "aiv_only" (the vector half, each
        AIV sub-block counting; the default in AIV and vector-only InCore
        functions) or "aic_only" (the cube half; the default in AIC
        functions). A barrier across both halves ("mix") is not supported.
    mode, gm_workspace, used_cores: pypto's "hard" and "soft" forms are
        the same barrier here, of all the launch's blocks (the workspace is
        not used).

    The launch must start all its blocks at once: `pl.spmd(n,
    sync_start=True)` (a CompileError at the launch otherwise), with n at
    most the device's core groups (a launch error otherwise). Valid in
    InCore, AIC and AIV functions.
    """
    kinds = {None: None, "aiv_only": False, "aiv": False, "aic_only": True, "aic": True}
    value = cx.static(core_type) if core_type is not None else None
    if value not in kinds:
        raise cx.error(
            core_type,
            f'pl.system.syncall\'s core_type is "aiv_only" or "aic_only", got {value!r}'
            + (
                "; a barrier across both halves is not supported by blockpipe"
                if value == "mix"
                else ""
            ),
        )
    cube = kinds[value]
    if cube is None:
        cube = cx.kind is FunctionType.AIC
    if mode is not None and cx.static(mode) not in ("hard", "soft"):
        raise cx.error(
            mode, f'pl.system.syncall\'s mode is "hard" or "soft", got {cx.static(mode)!r}'
        )
    if gm_workspace is not None:
        cx.tensor_arg(gm_workspace, "pl.system.syncall's gm_workspace")
    if used_cores is not None:
        cx.expr(used_cores)
    cx.create("bp.syncall", [], [], {"cube": cx.builder.unit()} if cube else {}, call.node)
    return None


def tensor_view(cx, call, tensor, shape, offset, valid_shape=None, pad_value=None):
    """`pl.slice` of a tensor in an orchestration: bp.tensor_view."""
    t = cx.tensor_arg(tensor, "pl.slice's tensor")
    if pad_value is not None:
        raise cx.error(
            pad_value,
            "pl.slice(pad_value=...) of a tensor in an orchestration is not supported by "
            "blockpipe: a view is all data (the kernel it is given to may load a valid "
            "shape of it and pl.fillpad it)",
        )
    if not isinstance(shape, (ast.List, ast.Tuple)):
        raise cx.error(shape, "pl.slice's shape must be a list of sizes")
    if len(shape.elts) != len(t.type.shape):
        raise cx.error(
            shape,
            f"pl.slice's shape has {len(shape.elts)} dimensions but the tensor has "
            f"{len(t.type.shape)}",
        )
    offsets = offsets_arg(cx, offset, t.type, "pl.slice")
    if valid_shape is not None:
        _check_view_valid(cx, valid_shape, shape)
    dims, sizes = [], []
    for elt, whole in zip(shape.elts, t.type.shape):
        size = cx.expr(elt)
        if is_int(size):
            if size <= 0 or (is_int(whole) and size > whole):
                raise cx.error(
                    elt, f"pl.slice's size {size} does not fit the tensor's {list(t.type.shape)}"
                )
            dims.append(size)
        else:
            sizes.append(cx.index_value(size, elt))
            dims.append(dynamic)
    b = cx.builder
    (view,) = cx.create(
        "bp.tensor_view",
        [t, *offsets, *sizes],
        [TensorType(tuple(dims), t.type.dtype)],
        {"operandSegmentSizes": b.i32_array([1, len(offsets), len(sizes)])},
        call.node,
        call.name,
    )
    # Writing the view writes the tensor.
    cx.tensor_roots[view.handle] = cx.root_of(t)
    return view


def _check_view_valid(cx, valid_shape, shape) -> None:
    """pl.slice(valid_shape=...) of a tensor in an orchestration: one size
    per dim, within it. pypto records it in the view's type, for its
    kernels' loads; a blockpipe kernel reads what its parameter's
    pl.TensorView and its loads say (the view stays all data), so the
    sizes are checked only."""
    if not isinstance(valid_shape, (ast.List, ast.Tuple)):
        raise cx.error(valid_shape, "pl.slice's valid_shape must be a list such as [rows, 64]")
    if len(valid_shape.elts) != len(shape.elts):
        raise cx.error(
            valid_shape,
            f"pl.slice's valid_shape has {len(valid_shape.elts)} dimensions but the shape has "
            f"{len(shape.elts)}",
        )
    for elt, dim in zip(valid_shape.elts, shape.elts):
        size, whole = cx.expr(elt), cx.expr(dim)
        if is_int(size):
            if size < 0 or (is_int(whole) and size > whole):
                raise cx.error(elt, f"pl.slice's valid_shape size {size} is outside [0, {whole}]")
        elif not (isinstance(size, Value) and isinstance(size.type, ScalarType)):
            raise cx.error(elt, "pl.slice's valid_shape sizes are numbers or index values")


@operation(name="tensor.slice", kinds=KERNEL_KINDS + (FunctionType.Orchestration,))
def tensor_slice(cx, call, tensor, shape, offset, valid_shape=None, drop_dims=None, pad_value=None):
    """A window of a tensor as a tensor sharing its memory (a view):
    `q = pl.tensor.slice(query, [16, 128], [row, 0])` (pl.slice in an
    orchestration is the same). Sizes may be known only at run time.

    The view is what launches read and write: a kernel writing it writes
    the tensor. It must lie inside the tensor and be contiguous (after the
    first dim it takes more than one of, every dim whole: whole rows of a
    2-D tensor), which is checked when the orchestration runs, at this
    line. valid_shape= (the part of the view that holds data, pypto's
    metadata for kernels' loads) is checked, the view stays all data: a
    kernel reads what its parameter's pl.TensorView and its loads'
    valid_shape say. pad_value= is not supported.

    In a kernel (or a pl.at scope outlined into one), where no tensor is
    made, the window is read as a tile, as pl.slice there (pypto converts
    it to a tile op the same way): it is read, not written through.
    """
    if drop_dims is not None:
        raise cx.error(call.node, "pl.tensor.slice(drop_dims=...) is not supported by blockpipe")
    if cx.kind is not FunctionType.Orchestration:
        from blockpipe.language.ops.memory import slice_

        return slice_.__bp_op__.impl(
            cx, call, tensor, shape, offset, valid_shape=valid_shape, pad_value=pad_value
        )
    return tensor_view(cx, call, tensor, shape, offset, valid_shape, pad_value)
