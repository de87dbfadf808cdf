"""The DSL's operations as Python functions: signatures, documentation, the
error outside a kernel, and "did you mean" for a misspelt name."""

import inspect
import pathlib
import pydoc

import pytest

import located

import blockpipe
import blockpipe.language as pl
from blockpipe.language import ops
from blockpipe.language.lowering import program_ir

T = pl.Tensor[[64, 64], pl.FP32]


def test_every_operation_is_a_documented_function():
    assert len(ops.OPS) >= 35
    for qualname, public in ops.PUBLIC.items():
        assert inspect.isfunction(public), qualname
        assert ops.op_of(public) is ops.OPS[qualname]
        doc = inspect.getdoc(public)
        assert doc and len(doc.splitlines()) >= 2, f"pl.{qualname} has no documentation"
        # What help() shows is the DSL's signature, without the lowering's own
        # parameters.
        params = list(inspect.signature(public).parameters)
        assert "cx" not in params and "call" not in params, qualname


def test_help_shows_arguments_and_an_example():
    text = pydoc.render_doc(pl.load, renderer=pydoc.plaintext)
    assert (
        "load(tensor, offsets, shapes, valid_shape=None, target_memory=None, clamp=False)" in text
    )
    for word in ("offsets", "target_memory", "Vec", "Example"):
        assert word in text
    assert (
        "matmul(lhs, rhs, out_dtype=None, a_trans=False, b_trans=False, c_matrix_nz=False, acc=None)"
        in pydoc.render_doc(pl.matmul, renderer=pydoc.plaintext)
    )


def test_the_pl_namespace_holds_every_operation():
    for qualname, public in ops.PUBLIC.items():
        holder = pl
        for part in qualname.split("."):
            holder = getattr(holder, part)
        assert holder is public


def test_an_operation_outside_a_kernel_says_where_it_belongs():
    with pytest.raises(RuntimeError, match=r"pl.load can only be used inside a @pl.function"):
        pl.load(None, [0, 0], [16, 16])
    with pytest.raises(RuntimeError, match=r"pl.tile.get_block_idx can only be used"):
        pl.tile.get_block_idx()


def test_a_misspelt_operation_gets_a_suggestion():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                # error: unknown function 'pl.lod'; did you mean 'load'?
                t = pl.lod(x, [0, 0], [16, 16])
                return pl.store(t, [0, 0], out)

        return P

    located.expect_error(make, program_ir)


def test_a_misspelt_namespace_member_gets_a_suggestion():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                row = pl.tile.get_blok_idx() * 16  # error: did you mean 'get_block_idx'?
                t = pl.load(x, [row, 0], [16, 16])
                return pl.store(t, [0, 0], out)

        return P

    located.expect_error(make, program_ir)


def test_a_misspelt_name_gets_a_suggestion():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                tile = pl.load(x, [0, 0], [16, 16])
                # error: unknown name 'tiel'; did you mean 'tile'?
                return pl.store(tiel, [0, 0], out)

        return P

    located.expect_error(make, program_ir)


def test_an_unknown_keyword_lists_the_signature():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                # error: pl.load has no argument 'memory' (it takes tensor, offsets, shapes, valid_shape, target_memory, clamp)
                t = pl.load(x, [0, 0], [16, 16], memory=pl.MemorySpace.Vec)
                return pl.store(t, [0, 0], out)

        return P

    located.expect_error(make, program_ir)


def test_the_language_page_lists_every_operation():
    # The op table's operations are listed by `python -m blockpipe ops`
    # (made from the table), the others by the page.
    from blockpipe.__main__ import ops_markdown

    page = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "language.md").read_text()
    listing = ops_markdown()
    missing = [q for q in ops.OPS if f"`pl.{q}`" not in page and f"`pl.{q}`" not in listing]
    assert not missing, f"docs/language.md does not list {missing}"
    assert "python -m blockpipe ops" in page
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "docs/language.md" in readme and "docs/architecture.md" in readme
    assert "../shared" not in readme


def test_the_dialects_own_check_reaches_the_users_line():
    # The frontend does not restate the pipe's size rules: the verifier's
    # message arrives at the call.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def producer(self, x: T):
                # error: slot_size must be positive, got 0
                pl.aic_initialize_pipe(dir_mask=1, slot_size=0)
                pl.tpush_to_aiv(pl.load(x, [0, 0], [16, 16]))

            @pl.function(type=pl.FunctionType.AIV)
            def consumer(self, out: pl.Out[T]):
                pl.aiv_initialize_pipe(dir_mask=1, slot_size=1024)
                t = pl.tpop_from_aic()
                out = pl.store(t, [0, 0], out)
                pl.tfree_to_aic()
                return out

            @pl.function(type=pl.FunctionType.Group)
            def group(self, x: T, out: pl.Out[T]):
                self.producer(x)
                return self.consumer(out)

        return P

    located.expect_error(make, program_ir)


def test_result_types_come_from_the_dialect():
    """The typed builder: types made from the DSL's names, result types
    inferred by the dialect (matmul accumulates BF16 in FP32, INT32 in INT32)."""
    from blockpipe import _core

    session = _core.CompileSession("typed.py")
    loc = _core.SourceLoc("typed.py", 3, 5)
    for dtype, acc in (("BF16", "FP32"), ("INT32", "INT32")):
        args = session.begin_function(
            f"mm_{dtype}",
            [session.tile_type([16, 8], dtype, "left"), session.tile_type([8, 4], dtype, "right")],
            ["a", "b"],
            [{}, {}],
            [],
            {"bp.kind": session.function_kind("aic")},
            loc,
        )
        assert session.infer("bp.matmul", args, {}, loc) == [("tile", (16, 4), acc, "acc")]
        (c,) = session.create("bp.matmul", args, None, {}, loc)
        assert session.type_of(c) == ("tile", (16, 4), acc, "acc")
        session.create("func.return", [], [], {}, loc)
        session.end_function()
    assert str(session.tensor_type([None, 64], "FP16")) == "!bp.tensor<?x64xf16>"
    # A finite float beyond the dtype's range, an integer beyond INT32's.
    assert session.float_value(70000.0, "FP16") is None and session.float_value(
        float("inf"), "FP16"
    )
    assert session.int_value(2**31, "INT32") is None and session.int_value(2**31 - 1, "INT32")
    # The dialect's own message, at the user's line.
    (x,) = session.begin_function(
        "bad",
        [session.tile_type([16], "FP32", "left")],
        ["x"],
        [{}],
        [],
        {"bp.kind": session.function_kind("aic")},
        loc,
    )
    with pytest.raises(blockpipe.CompileError) as info:
        session.create("bp.matmul", [x, x], None, {}, _core.SourceLoc("typed.py", 9, 7))
    assert (info.value.line, info.value.column) == (9, 7)
    assert "operands and result must be 2-D tiles" in str(info.value)


def test_the_rules_come_from_the_dialect():
    from blockpipe.language import rules

    assert (pl.MemorySpace.Mat, pl.MemorySpace.Left) in rules.LEGAL_MOVES
    assert (pl.MemorySpace.Vec, pl.MemorySpace.Left) not in rules.LEGAL_MOVES
    assert rules.broadcast_shapes((16, 8)) == [(16, 1), (1, 8)]
    assert rules.broadcasts((16, 8), (1, 8)) and not rules.broadcasts((16, 8), (8, 1))
    from blockpipe.language import op_table

    assert op_table.dtype_rule("exp") == "float" and op_table.dtype_rule("relu") == "any"
