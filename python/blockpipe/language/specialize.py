"""Functions with shape-less parameters (`a: pl.Tensor`,
`out: pl.Out[pl.Tensor]`, pypto's @pl.jit.incore kernels) or captured ones
(a kernel outlined from a scope takes the names it reads from its function
as parameters of the value's type at the launch): each call specializes
one on its arguments' types.

Such a function is lowered after its callers, once per distinct signature
its calls give it (the first keeps its name, the others are `<name>_1`,
...). The call is built before the callee, so it takes the callee's
results to be its Out/InOut parameters' tensors in order, which is what
such a kernel returns (bp-normalize-return-order holds every kernel to
it); once the callee is built its results are checked against that.
"""

from __future__ import annotations

import ast
import dataclasses
import types as _types
from typing import TYPE_CHECKING, Any, Dict, List, Tuple

from blockpipe.language.program import FunctionSpec
from blockpipe.language.types import (
    CAPTURED,
    FP32,
    INDEX,
    SHAPELESS,
    ParamDirection,
    ParamType,
    ScalarType,
    TensorType,
    is_shapeless,
    param_annotation,
)
from blockpipe.language.values import Value, describe, same_type

if TYPE_CHECKING:
    from blockpipe.language.lowering import ProgramLowering


class Specializations:
    """The program's functions with shape-less parameters and the
    specializations their calls asked for."""

    def __init__(self, program: ProgramLowering):
        self.program = program
        # Per generic function: its spec and its parameters' annotations.
        self.generic: Dict[str, Tuple[FunctionSpec, List[Tuple[str, Any]]]] = {}
        # Per generic function: (its parameter types) -> specialized name.
        self.made: Dict[str, Dict[tuple, str]] = {}
        # Specialized names still to lower, in the order asked for.
        self.pending: List[str] = []
        # Per specialized name: the results its calls took, and the first
        # call (its function's source and node) for errors.
        self.expected: Dict[str, Tuple[List[Any], Any, ast.AST]] = {}
        # Per caller: the specialized functions it calls.
        self.calls: Dict[str, List[str]] = {}

    def find(self) -> None:
        """Marks the program's functions whose parameters are shape-less."""
        p = self.program
        for name, spec in p.functions.items():
            params = [a.arg for a in p.sources[name].tree.args.args[1:]]
            anns = [(n, self._evaluate(spec, name, n)) for n in params]
            if any(is_shapeless(a) for _, a in anns):
                self.generic[name] = (spec, anns)

    def _evaluate(self, spec: FunctionSpec, name: str, param: str):
        ann = spec.pyfunc.__annotations__.get(param)
        if isinstance(ann, str):
            try:
                ann = eval(  # the user's own annotation
                    ann, dict(self.program.sources[name].globals), self.program.program.scope
                )
            except Exception:  # noqa: BLE001 - the lowering reports it at the parameter
                return ann
        return param_annotation(ann)

    def specialize(self, lowering, node: ast.Call, callee: str, values: List[Any]) -> str:
        """The name of `callee` specialized on the types of the call's
        argument values, made (and queued to lower) on its first call."""
        spec, anns = self.generic[callee]
        if len(values) != len(anns):
            raise lowering.error(node, f"'{callee}' takes {len(anns)} arguments, got {len(values)}")
        types_: Dict[str, Any] = {}
        dirs: List[ParamDirection] = []
        for (pname, ann), value, arg in zip(anns, values, node.args):
            direction = ParamDirection.In
            inner = ann
            if isinstance(ann, ParamType):
                direction, inner = ann.direction, ann.inner
            if inner is CAPTURED and direction is ParamDirection.In:
                inner = self._captured(lowering, value, arg, pname, callee)
            elif inner is SHAPELESS or inner is CAPTURED:
                if not (isinstance(value, Value) and isinstance(value.type, TensorType)):
                    what = "is a pl.Tensor" if inner is SHAPELESS else "is written: a tensor"
                    raise lowering.error(
                        arg, f"argument '{pname}' of '{callee}' {what}, got {describe(value)}"
                    )
                inner = value.type
            types_[pname] = inner if direction is ParamDirection.In else ParamType(direction, inner)
            dirs.append(direction)
        key = tuple((n, str(t)) for n, t in types_.items())
        made = self.made.setdefault(callee, {})
        name = made.get(key)
        if name is None:
            name = callee if not made else self._fresh(f"{callee}_{len(made)}")
            made[key] = name
            self._queue(spec, name, types_, dirs, values, lowering, node)
        caller = lowering.spec.name
        if name not in self.calls.setdefault(caller, []):
            self.calls[caller].append(name)
        return name

    @staticmethod
    def _captured(lowering, value, arg, pname: str, callee: str):
        """The type a scope's kernel takes a name it reads from its
        function as: the value's (a number, an index value)."""
        if isinstance(value, Value) and isinstance(value.type, (TensorType, ScalarType)):
            return value.type
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise lowering.error(
                arg,
                f"the scope '{callee}' reads '{pname}', {describe(value)}; a scope reads "
                "tensors, scalars and numbers from its function",
            )
        return ScalarType(INDEX if isinstance(value, int) else FP32)

    def _fresh(self, name: str) -> str:
        taken = self.program.functions
        base, n = name, 1
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        return name

    def _queue(self, spec, name, types_, dirs, values, lowering, node) -> None:
        p = self.program
        annotations = dict(types_)
        if "return" in spec.pyfunc.__annotations__:
            annotations["return"] = spec.pyfunc.__annotations__["return"]
        made = dataclasses.replace(
            spec, pyfunc=_types.SimpleNamespace(__name__=name, __annotations__=annotations)
        )
        source = p.sources[spec.name] if spec.name in p.sources else p.sources[name]
        p.functions[name] = made
        p.sources[name] = source
        params = [t.inner if isinstance(t, ParamType) else t for t in types_.values()]
        outs = [
            v.type
            for v, d in zip(values, dirs)
            if d is not ParamDirection.In and isinstance(v, Value)
        ]
        p.signatures[name] = (params, outs)
        p.param_dirs[name] = list(dirs)
        self.expected[name] = (outs, lowering.source, node)
        self.pending.append(name)

    def lower_pending(self, lower) -> None:
        """Lowers each specialization asked for (theirs may ask for more)."""
        while self.pending:
            name = self.pending.pop(0)
            lower(name)
            expected, source, node = self.expected[name]
            _, results = self.program.signatures[name]
            if len(results) != len(expected) or any(
                not same_type(a, b) for a, b in zip(results, expected)
            ):
                got = ", ".join(str(t) for t in results) or "nothing"
                want = ", ".join(str(t) for t in expected) or "nothing"
                raise source.error(
                    node,
                    f"'{name}' takes shape-less parameters, so its call expects it to return "
                    f"its Out/InOut tensors in order ({want}); it returns {got}",
                )

    def report_unused(self, name: str) -> None:
        """A function with shape-less parameters that nothing calls has no
        types to take: an error at its first such parameter."""
        spec, anns = self.generic[name]
        source = self.program.sources[name]
        params = source.tree.args.args[1:]
        param = next(p for p, (_, ann) in zip(params, anns) if is_shapeless(ann))
        raise source.error(
            param,
            f"parameter '{param.arg}' of '{name}' is a pl.Tensor without shape and dtype, and "
            f"no call of '{name}' gives it them: annotate it pl.Tensor[[dims...], dtype]",
        )

    def unused(self) -> List[str]:
        """Generic functions no call specialized: not part of the module."""
        return [n for n in self.generic if n not in self.made]
