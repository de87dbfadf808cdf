"""From a `@pl.program` to `bp` IR.

Each `@pl.function` body is read from its Python AST and built op by op
through a `blockpipe._core.CompileSession`, every op at the user's file:line:col
(`function_lowering.FunctionLowering`; the DSL's operations are in `ops/`).

Each function is lowered once. A `pl.load` or `pl.full` without
`target_memory=` gets the memory space `?`; the compiler's
bp-infer-memory-spaces pass places it from its uses (a load feeding matmul's
left operand lands in `left`). A `pl.tpop_from_*` takes the type its peer
pushes when the peer is built already (the halves of a group that pop are
built after those that do not); otherwise its type is left to the
compiler's bp-infer-pipe-types pass, which also checks every pop's type
against its pipe's pushes.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from blockpipe.errors import CompileError
from blockpipe.language.adopt import adopt_called_functions
from blockpipe.language.function_lowering import FunctionLowering
from blockpipe.language.outline import outline_program
from blockpipe.language.program import Program
from blockpipe.language.source import Source, parse_function
from blockpipe.language.specialize import Specializations
from blockpipe.language.types import (
    MemorySpace,
    ParamDirection,
    ScalarType,
    TensorType,
    TileType,
    dynamic,
)
from blockpipe.language.values import IRType, LoopValueNeeded, dtype_named


def _located_error(source: Source, err) -> CompileError:
    line, col = source.position(err.node) if err.node is not None else (None, None)
    return CompileError(err.message, file=source.file, line=line, column=col)


class ProgramLowering:
    """Lowers every function of a program into one module."""

    def __init__(
        self,
        program: Program,
        core,
        devices: Optional[int] = None,
        loop_hints: Optional[Dict[tuple, Dict[str, IRType]]] = None,
    ):
        self.program = program
        self.loop_hints = loop_hints or {}
        # The program's functions with their scopes outlined
        # (blockpipe.language.outline): what is lowered.
        self.functions = dict(program.functions)
        self.devices = devices
        self.core = core
        self.sources: Dict[str, Source] = {}
        self.signatures: Dict[str, Tuple[List[IRType], List[IRType]]] = {}
        # Per function, its tensor parameters with pl.dynamic("M") dims:
        # (index, name, the name of each dim or None).
        self.named_dims: Dict[str, List[Tuple[int, str, Tuple[Optional[str], ...]]]] = {}
        self.param_dirs: Dict[str, List[ParamDirection]] = {}
        # Per kernel that returns only some of its Out/InOut tensors: the
        # places of those among its results (statements.py,
        # with_unreturned_outputs); its callers see only those.
        self.visible_results: Dict[str, List[int]] = {}
        self.builder = core.CompileSession(program.source_file)
        self._ir_types: Dict[IRType, Any] = {}
        self._frontend_types: Dict[tuple, IRType] = {}
        self.specializations = Specializations(self)
        # The program's name of each @pl.function defined outside the class
        # that it calls (by id of the Python function): blockpipe.language.adopt.
        self.adopted: Dict[int, str] = {}

    def run(self):
        for name, spec in self.functions.items():
            self.sources[name] = parse_function(spec, self.program.source_file)
        self.adopted = adopt_called_functions(
            self.functions, self.sources, self.program.source_file
        )
        for name, spec in self.functions.items():
            if spec.unsupported:
                src = self.sources[name]
                line, col = src.position(
                    src.tree.decorator_list[0] if src.tree.decorator_list else src.tree
                )
                raise CompileError(spec.unsupported, file=src.file, line=line, column=col)
        outline_program(self.functions, self.sources, self.program.scope, _located_error)
        self.specializations.find()
        placed = [f for f in self.functions.values() if f.device is not None]
        devices = mesh_size(self.functions, self.devices)
        for spec in placed:
            if spec.device >= devices:
                src = self.sources[spec.name]
                # The decorator that places it, where there is one.
                line, col = src.position(
                    src.tree.decorator_list[0] if src.tree.decorator_list else src.tree
                )
                raise CompileError(
                    f"'{spec.name}' is placed on device {spec.device}, outside the "
                    f"mesh of {devices} devices (compile(..., devices={devices}))",
                    file=src.file,
                    line=line,
                    column=col,
                )
        if devices is not None:
            self.builder.set_module_attr("bp.num_devices", self.builder.i64(devices))
        self.devices = devices
        # The halves of a group that pop are built after those that do not,
        # so that a pop finds its peer's pushes built; the module keeps the
        # functions in callees-first program order.
        for name in self._callees_first(pops_last=True):
            if name not in self.specializations.generic:
                self._lower(name)
        self.specializations.lower_pending(self._lower)
        for name in self.specializations.unused():
            self.specializations.report_unused(name)
        self.builder.order_functions(self._callees_first())
        return self.builder

    def _lower(self, name: str) -> None:
        FunctionLowering(self, self.functions[name], self.sources[name]).lower()

    def ir_type(self, t: IRType):
        """The session's type for a frontend type."""
        ir = self._ir_types.get(t)
        if ir is None:
            b = self.builder
            if isinstance(t, TileType) and t.unknown:
                # For bp-infer-pipe-types to infer.
                ir = b.unknown_tile_type(t.space.value)
            elif isinstance(t, TileType):
                # No space yet: `?`, for bp-infer-memory-spaces to decide.
                ir = b.tile_type(list(t.shape), t.dtype.name, t.space.value if t.space else "?")
            elif isinstance(t, TensorType):
                ir = b.tensor_type([None if d is dynamic else d for d in t.shape], t.dtype.name)
            else:
                ir = b.scalar_type(t.dtype.name)
            self._ir_types[t] = ir
        return ir

    def frontend_type(self, desc: tuple) -> IRType:
        """The frontend type of the session's description of a type
        (`CompileSession.type_of`)."""
        t = self._frontend_types.get(desc)
        if t is None:
            kind, *rest = desc
            if kind == "tile":
                space = None if rest[2] == "?" else MemorySpace(rest[2])
                if rest[1] is None:  # inferred by bp-infer-pipe-types
                    t = TileType(None, None, space)
                else:
                    t = TileType(tuple(rest[0]), dtype_named(rest[1]), space)
            elif kind == "tensor":
                t = TensorType(
                    tuple(dynamic if d is None else d for d in rest[0]), dtype_named(rest[1])
                )
            else:
                t = ScalarType(dtype_named(rest[0]))
            self._frontend_types[desc] = t
        return t

    def _callees_first(self, pops_last: bool = False) -> List[str]:
        order: List[str] = []
        state: Dict[str, int] = {}

        def ordered(names) -> List[str]:
            if not pops_last:
                return list(names)
            return sorted(names, key=lambda c: c in self.sources and self.sources[c].pops)

        def visit(name: str, stack: List[str]) -> None:
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                cycle = " -> ".join(stack[stack.index(name) :] + [name])
                src = self.sources[name]
                line, col = src.position(src.tree)
                raise CompileError(
                    f"recursive calls are not supported: {cycle}",
                    file=src.file,
                    line=line,
                    column=col,
                )
            state[name] = 1
            callees = list(self.sources[name].self_calls)
            callees += self.specializations.calls.get(name, [])
            for callee in ordered(callees):
                if callee in self.functions and callee not in self.specializations.unused():
                    visit(callee, stack + [name])
            state[name] = 2
            order.append(name)

        for name in ordered(self.functions):
            visit(name, [])
        return order


def mesh_size(functions, devices: Optional[int]) -> Optional[int]:
    """The devices a program runs on: `compile(devices=)`, else one past
    the highest device a function is placed on (a pipeline's), else None
    (one device)."""
    placed = [f.device for f in functions.values() if f.device is not None]
    if devices is None and placed:
        return max(placed) + 1
    return devices


def lower_program(
    program: Program, core, devices: Optional[int] = None, named_dims: Optional[dict] = None
) -> Any:
    """Returns the compile session holding the program's module (not yet
    verified: its `run_pipeline` does that).
    `devices` is the size of the mesh the program runs on (default: one
    device more than the highest `device=` placement, if any).
    `named_dims`, when given, receives each function's tensor parameters
    with pl.dynamic("M") dims (ProgramLowering.named_dims)."""
    # Names set in a loop and read after it, per loop: found by lowering,
    # each try carrying those the one before found.
    hints: Dict[tuple, Dict[str, IRType]] = {}
    for _ in range(256):  # each try adds a name; a bound all the same
        lowering = ProgramLowering(program, core, devices=devices, loop_hints=hints)
        try:
            session = lowering.run()
            break
        except LoopValueNeeded as need:
            hints.setdefault(need.key, {})[need.name] = need.type
    else:  # pragma: no cover - each try carries one more name
        raise RuntimeError("lowering did not settle which names loops carry")
    if named_dims is not None:
        named_dims.update(lowering.named_dims)
    return session


def program_ir(program: Program, locations: bool = False) -> str:
    """The verified bp IR of `program` with its popped tiles typed and its
    memory spaces decided (bp-infer-pipe-types, bp-infer-memory-spaces),
    optionally with its locations."""
    from blockpipe import _core

    text = lower_program(program, _core).text(True)
    return _core.run_passes(
        text, "bp-infer-pipe-types,bp-infer-memory-spaces", program.source_file, locations
    )
