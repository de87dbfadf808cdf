"""Calls: of DSL operations and builtins, of plain Python functions (inlined),
and of the program's own functions (launches, calls of kernels and
groups)."""

from __future__ import annotations

import ast
import types
from typing import TYPE_CHECKING

from blockpipe.errors import CompileError
from blockpipe.language import ops
from blockpipe.language.ops import debugging
from blockpipe.language.program import FunctionSpec
from blockpipe.language.types import (
    FunctionType,
    ParamDirection,
    ScalarType,
    TensorType,
    dynamic,
)
from blockpipe.language.unsupported import Unsupported
from blockpipe.language.values import (
    KERNEL_KINDS,
    LoweringError,
    Value,
    describe,
    launch_compatible,
    same_type,
)

if TYPE_CHECKING:
    pass


# Operations taking any number of arguments, lowered from the call itself.
VARIADIC = {"print": debugging.lower_print, "static_print": debugging.lower_static_print}


class Calls:
    """The part of a function's lowering that lowers calls."""

    def call(self, node: ast.Call, name, statement: bool, multi: bool, expected):
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ):
            return self.call_function(node, func.attr, name, multi)
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "bind_dynamic"
            and self.holds_shaped(func.value)
        ):
            return self.bind_dynamic(node)
        if (
            isinstance(func, ast.Name)
            and func.id in ("min", "max")
            and func.id not in self.env
            and func.id not in self.source.globals
        ):
            return self.min_max(node, {"min": min, "max": max}[func.id])
        if (
            isinstance(func, ast.Name)
            and func.id == "print"
            and func.id not in self.env
            and func.id not in self.source.globals
        ):
            return debugging.lower_print(self, node)  # Python's print: pl.print
        try:
            target = self.static_name(func)
        except LoweringError:
            raise self.error(
                node, f"unknown function '{ast.unparse(func)}'{self.suggestion(func)}"
            ) from None
        if isinstance(target, Unsupported):
            raise self.error(node, target.message)
        misuse = getattr(target, "__bp_misuse__", None)
        if misuse is not None:  # a pypto spelling rewrites.py did not rewrite
            found = misuse(node)
            where, message = found if isinstance(found, tuple) else (node, found)
            raise self.error(where, message)
        op = ops.op_of(target)
        if op is not None and op.qualname in VARIADIC:
            return VARIADIC[op.qualname](self, node)
        if op is None:
            jit_name = getattr(target, "__bp_jit_name__", None)
            if jit_name is not None and jit_name in self.program.functions:
                return self.call_function(node, jit_name, name, multi)
            adopted = self.program.adopted.get(id(target))
            if adopted is not None and self.kind not in KERNEL_KINDS:
                # A @pl.function from outside the class, called in a helper
                # (blockpipe.language.adopt): launched, not inlined.
                return self.call_function(node, adopted, name, multi)
            if isinstance(target, types.FunctionType):
                return self.inline(node, target, name, multi)
            raise self.error(
                node, f"'{ast.unparse(func)}' cannot be called in a blockpipe function"
            )
        return op.lower(self, node, name, expected)

    def min_max(self, node: ast.Call, fn):
        """Python's min(a, b, ...) / max(...) of numbers and index values."""
        if len(node.args) < 2 or node.keywords:
            raise self.error(
                node, f"{fn.__name__}() takes two or more numbers or index values here"
            )
        values = [self.expr(a) for a in node.args]
        numbers = [v for v in values if isinstance(v, (int, float))]
        others = [
            self.index_value(v, a)
            for v, a in zip(values, node.args)
            if not isinstance(v, (int, float))
        ]
        if numbers and any(isinstance(n, float) for n in numbers) and others:
            raise self.error(node, f"{fn.__name__}() of index values takes integers")
        result = fn(numbers) if numbers else None
        for value in others:
            if result is None:
                result = value
                continue
            op = "arith.minsi" if fn is min else "arith.maxsi"
            (result,) = self.create(op, [self.index_value(result, node), value], None, {}, node)
        return result

    def bind_dynamic(self, node: ast.Call):
        """pypto's `x.bind_dynamic(axis, pl.dynamic("M"))`: says that a
        dimension is dynamic (for @pl.jit's specialization); here it checks
        that it is."""
        tensor = self.expr(node.func.value)
        if len(node.args) != 2 or node.keywords:
            raise self.error(node, "bind_dynamic takes an axis and a pl.dynamic dimension")
        axis = self.static_int(node.args[0], "bind_dynamic's axis")
        rank = len(tensor.type.shape)
        if not -rank <= axis < rank:
            raise self.error(node.args[0], f"axis {axis} is out of range for a {rank}-D tensor")
        if tensor.type.shape[axis % rank] is not dynamic:
            raise self.error(
                node,
                f"dimension {axis % rank} of '{ast.unparse(node.func.value)}' is "
                f"{tensor.type.shape[axis % rank]}, not dynamic; annotate it with "
                "the pl.dynamic dimension",
            )
        return None

    # ------------------------------------------------------------ inlining

    def inline(self, node: ast.Call, fn, name, multi: bool):
        """A call of a plain Python function (or a @pl.inline one): its body
        is lowered here, its parameters bound to the arguments' values, its
        return statement giving the call's value."""
        import inspect

        from blockpipe.language.source import parse_function

        stack = self.__dict__.setdefault("_inlining", [])
        if fn in stack or len(stack) >= 32:
            raise self.error(
                node,
                f"'{fn.__name__}' calls itself; helpers are inlined, so recursion is not supported",
            )
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            raise self.error(node, f"'{fn.__name__}' is inlined: call it without *args or **kwargs")
        try:
            bound = inspect.signature(fn).bind(
                *node.args, **{k.arg: k.value for k in node.keywords}
            )
        except TypeError as exc:
            raise self.error(node, f"call of '{fn.__name__}': {exc}") from None
        values = {}
        for pname, arg in bound.arguments.items():
            values[pname] = self.expr(arg)
        for param in inspect.signature(fn).parameters.values():
            if param.name not in values:
                if param.default is inspect.Parameter.empty:
                    raise self.error(
                        node, f"'{fn.__name__}' takes *{param.name}, which inlining does not"
                    )
                values[param.name] = param.default
        spec = FunctionSpec(fn, self.kind)
        try:
            source = parse_function(spec, self.source.file)
        except CompileError as exc:
            raise self.error(node, str(exc)) from None
        body = [s for s in source.tree.body]
        returns = [s for s in body if isinstance(s, ast.Return)]
        nested = [
            n for s in body for n in ast.walk(s) if isinstance(n, ast.Return) and n not in returns
        ]
        if nested or (returns and body[-1] is not returns[0]) or len(returns) > 1:
            where = (nested or returns)[0]
            line = source.position(where)[0]
            raise self.error(
                node,
                f"'{fn.__name__}' is inlined and may return only at the end of its body "
                f"(a return at {source.file}:{line})",
            )
        saved = (self.source, self.env, self.assigned_at, self.out_of_scope)
        self.source, self.env, self.assigned_at, self.out_of_scope = source, dict(values), {}, {}
        stack.append(fn)
        try:
            self.block(body[:-1] if returns else body)
            result = None
            if returns and returns[0].value is not None:
                value = returns[0].value
                if isinstance(value, ast.Tuple):
                    result = [self.expr(e) for e in value.elts]
                else:
                    result = self.expr(value, name=name, multi=multi)
        except LoweringError as err:
            caller_file, (caller_line, _) = saved[0].file, saved[0].position(node)
            err = LoweringError(
                err.node,
                f"{err.message} (in '{fn.__name__}', inlined at {caller_file}:{caller_line})",
            )
            raise self._compile_error(err) from None
        finally:
            stack.pop()
            self.source, self.env, self.assigned_at, self.out_of_scope = saved
        if isinstance(result, list) and not multi and len(result) == 1:
            return result[0]
        return result

    # ------------------------------------------- calls of the program's functions

    def call_function(self, node: ast.Call, callee: str, name, multi: bool):
        program = self.program
        spec = program.functions.get(callee)
        if spec is None:
            raise self.error(node.func, f"'{callee}' is not a @pl.function of this program")
        if node.keywords:
            raise self.error(node, f"call '{callee}' with positional arguments only")
        values = None
        if callee in program.specializations.generic:
            # Its shape-less parameters take the arguments' types.
            values = [self.expr(a) for a in node.args]
            callee = program.specializations.specialize(self, node, callee, values)
            spec = program.functions[callee]
        param_types, result_types = program.signatures[callee]
        if len(node.args) != len(param_types):
            raise self.error(
                node, f"'{callee}' takes {len(param_types)} arguments, got {len(node.args)}"
            )
        args = []
        for index, (arg_node, ptype) in enumerate(zip(node.args, param_types)):
            value = self.expr(arg_node) if values is None else values[index]
            if isinstance(ptype, ScalarType) and isinstance(value, (int, float)):
                value = self.constant(value, ptype.dtype, arg_node)
            elif (
                isinstance(ptype, ScalarType)
                and ptype.dtype.name == "BOOL"
                and isinstance(value, Value)
                and isinstance(value.type, ScalarType)
                and not value.type.dtype.is_float
                and value.type.dtype.name != "BOOL"
            ):
                # pypto passes an integer flag (pl.yield_(1)) for a
                # pl.Scalar[pl.BOOL] parameter: its truth, as Python's.
                value = self.compare(ast.NotEq(), value, 0, arg_node, arg_node, arg_node)
            elif _widens(value, ptype):
                # pypto passes an INT64 scalar (pl.tensor.read of an INT64
                # tensor) for a pl.Scalar[pl.INDEX] parameter: every value
                # fits, so it converts; a narrowing one needs pl.cast.
                value = self.convert_scalar(value, ptype, arg_node)
            # A pipeline's stage may take a tensor split into microbatches:
            # bp.stage's verifier checks those (and stage boundaries).
            staged = (
                self.kind is FunctionType.Pipeline
                and isinstance(value, Value)
                and isinstance(value.type, TensorType)
                and isinstance(ptype, TensorType)
            )
            # An orchestration's launch may pass a tensor sized at run time
            # to a kernel compiled for a size (checked as it launches), and
            # the reverse.
            launched = self.kind is FunctionType.Orchestration and spec.kind in KERNEL_KINDS + (
                FunctionType.Group,
            )
            matches = (
                launch_compatible(value.type, ptype) if launched else same_type(value.type, ptype)
            )
            if not isinstance(value, Value) or not (staged or matches):
                raise self.error(
                    arg_node, f"argument of '{callee}' must be {ptype}, got {describe(value)}"
                )
            args.append(value)

        callee_kind = spec.kind
        if self.kind in (FunctionType.Orchestration, FunctionType.Group):
            callee_params = program.sources[callee].tree.args.args[1:]
            for arg_node, arg, direction, param in zip(
                node.args, args, program.param_dirs[callee], callee_params
            ):
                if direction is not ParamDirection.In:
                    self.check_writable(
                        arg,
                        arg_node,
                        f"'{callee}' writes its {direction.name} parameter '{param.arg}', given",
                    )
        if self.kind is FunctionType.Orchestration:
            if callee_kind not in KERNEL_KINDS + (FunctionType.Group,):
                raise self.error(
                    node,
                    f"orchestration functions launch incore, aic, aiv or group functions; '{callee}' is {callee_kind.name}",
                )
            # Result j is the j-th Out/InOut argument, written: typed like it
            # (it may be sized otherwise than the kernel's parameter).
            outs = [
                arg
                for arg, d in zip(args, program.param_dirs[callee])
                if d is not ParamDirection.In
            ]
            if len(outs) == len(result_types):
                result_types = [
                    out.type if launch_compatible(out.type, t) else t
                    for out, t in zip(outs, result_types)
                ]
            results = self.launch(node, callee, args, result_types, name)
        elif self.kind is FunctionType.Group:
            if callee_kind not in (FunctionType.AIC, FunctionType.AIV):
                raise self.error(
                    node,
                    f"a group calls its AIC and AIV functions; '{callee}' is {callee_kind.name}",
                )
            results = self.create(
                "func.call", args, result_types, {"callee": self.builder.symbol(callee)}, node, name
            )
        elif self.kind is FunctionType.Pipeline:
            if callee_kind is not FunctionType.Orchestration:
                raise self.error(
                    node, f"a pipeline calls orchestration stages; '{callee}' is {callee_kind.name}"
                )
            # Result j is typed like the argument of the j-th Out/InOut
            # parameter (whole or split).
            outs = [
                arg
                for arg, d in zip(args, program.param_dirs[callee])
                if d is not ParamDirection.In
            ]
            staged_types = (
                [arg.type for arg in outs] if len(outs) == len(result_types) else result_types
            )
            results = self.create(
                "bp.stage", args, staged_types, {"callee": self.builder.symbol(callee)}, node, name
            )
        else:
            raise self.error(node, f"{self.kind.name} functions cannot call other functions")
        if self.kind in (FunctionType.Orchestration, FunctionType.Group):
            # Result j is the tensor of the j-th Out/InOut argument, written.
            outs = [
                arg
                for arg, d in zip(args, program.param_dirs[callee])
                if d is not ParamDirection.In
            ]
            if len(outs) == len(results):
                for result, out in zip(results, outs):
                    self.tensor_roots[result.handle] = self.root_of(out)
        if callee in program.visible_results:
            results = [results[i] for i in program.visible_results[callee]]
        if multi:
            return results
        if len(results) == 1:
            return results[0]
        if not results:
            return None
        return results

    def launch(self, node, callee, args, result_types, name):
        if self.spmd_args is None:
            core_num, sync_start, name_hint = 1, False, None
        else:
            core_num, sync_start, name_hint = self.spmd_args
        b = self.builder
        operands = list(args)
        dynamic = isinstance(core_num, Value)
        if dynamic:
            operands = [core_num] + operands
        attrs = {
            "callee": b.symbol(callee),
            "operandSegmentSizes": b.i32_array([int(dynamic), len(args)]),
        }
        if not dynamic:
            attrs["core_num"] = b.i64(core_num)
        if sync_start:
            attrs["sync_start"] = b.unit()
        if name_hint:
            attrs["name_hint"] = b.string(name_hint)
        return self.create("bp.launch", operands, result_types, attrs, node, name)


# Integer scalar types by the values they hold: INDEX is carried as int64.
_INT_WIDTH = {"INT8": 8, "INT16": 16, "INT32": 32, "INT64": 64, "INDEX": 64}


def _widens(value, ptype) -> bool:
    """Whether `value` is a signed integer scalar whose every value a
    parameter of the signed integer scalar type `ptype` holds (INT8 ->
    INT16 -> INT32 -> INT64 <-> INDEX), of another type than `ptype`."""
    if not (
        isinstance(ptype, ScalarType)
        and isinstance(value, Value)
        and isinstance(value.type, ScalarType)
        and value.type.dtype != ptype.dtype
    ):
        return False
    src = _INT_WIDTH.get(value.type.dtype.name)
    dst = _INT_WIDTH.get(ptype.dtype.name)
    return src is not None and dst is not None and src <= dst
