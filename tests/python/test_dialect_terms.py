"""Compile errors and warnings speak the DSL, not the bp dialect: ops as
pl.X, types as pl.Tile/pl.Tensor spell them, function kinds as
pl.FunctionType, no arith/scf/func words; users' names stay as written;
BLOCKPIPE_TRACEBACK=full and verify_ir keep the IR's terms."""

import textwrap

import pytest

import blockpipe
import blockpipe.language as pl
from blockpipe.dialect_terms import to_dsl


@pytest.mark.parametrize(
    "raw, words",
    [
        (
            "'bp.sub' op failed to verify that all of {lhs, result} have same type",
            "pl.sub failed to verify that all of {lhs, result} have same type",
        ),
        (
            "tile '!bp.tile<256x192xbf16, left>' is 98304 bytes",
            "tile 'Tile[[256, 192], BF16, Left]' is 98304 bytes",
        ),
        ("'bp.col_sum' op reduces the columns", "pl.col_sum reduces the columns"),
        ("'bp.and' op needs integers", "pl.and_ needs integers"),
        ("'bp.syncall' op x", "pl.system.syncall x"),
        ("'bp.stage' op runs 'f'", "the stage call runs 'f'"),
        ("got '!bp.tensor<?x64xf16>'", "got 'Tensor[[pl.dynamic, 64], FP16]'"),
        ("!bp.tile<*, mat> or !bp.tile<8x8xindex, ?>", "Tile[?, Mat] or Tile[[8, 8], INDEX]"),
        ("is #bp<kind incore>, not #bp<dir out>", "is pl.FunctionType.InCore, not pl.Out"),
        ("'bp.kind' must be a #bp<kind ...> on a func.func", None),
        ("its bounds and step must be arith.constant ops", None),
        ("is under a condition (scf.if)", "is under a condition (an if)"),
        ("is inside a 'scf.while', which", "is inside a while loop, which"),
        ("'func.return' op must return", "the return statement must return"),
        ("'bp.schedule' must be \"gpipe\"", 'pl.function\'s schedule must be "gpipe"'),
    ],
)
def test_dialect_terms_become_the_dsls(raw, words):
    translated = to_dsl(raw)
    if words is not None:
        assert translated == words
    for term in ("'bp.", "!bp.", "#bp", "arith.", "scf.", "func.func", "' op"):
        assert term not in translated, translated


def test_users_names_are_never_rewritten():
    # Python names hold no dots, quotes, ! or #: what looks like the dialect
    # without them is the user's.
    message = "'bp_sub' of 'bp' in 'tile', 'op', 'scf_if', 'arith' at @func (bp.txt)"
    assert to_dsl(message) == message


BIG = 512


@pl.program
class Big:
    @pl.function(type=pl.FunctionType.InCore)
    def op(
        self, x: pl.Tensor[[BIG, BIG], pl.FP32], y: pl.Out[pl.Tensor[[BIG, BIG], pl.FP32]]
    ) -> pl.Tensor[[BIG, BIG], pl.FP32]:
        bp_tile = pl.load(x, [0, 0], [BIG, BIG])
        return pl.store(pl.exp(bp_tile), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[BIG, BIG], pl.FP32], y: pl.Out[pl.Tensor[[BIG, BIG], pl.FP32]]
    ) -> pl.Tensor[[BIG, BIG], pl.FP32]:
        y = self.op(x, y)
        return y


def _capacity_error():
    with pytest.raises(blockpipe.CompileError) as info:
        blockpipe.compile(Big, quiet=True)
    return info.value


def test_a_compile_error_names_the_tile_as_the_dsl_does(monkeypatch):
    monkeypatch.delenv("BLOCKPIPE_TRACEBACK", raising=False)
    error = _capacity_error()
    assert "tile 'Tile[[512, 512], FP32, Vec]' is 1048576 bytes" in error.message, error
    assert all("!bp." not in d.message for d in error.diagnostics), error.diagnostics
    assert "!bp." not in str(error) and "bp_tile = pl.load" in str(error), error


def test_blockpipe_traceback_full_keeps_the_compilers_words(monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_TRACEBACK", "full")
    error = _capacity_error()
    assert "tile '!bp.tile<512x512xf32, vec>' is 1048576 bytes" in error.message, error


def test_verify_ir_answers_in_the_irs_terms():
    ir = textwrap.dedent(
        """\
        func.func @o(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
          bp.launch @missing(%t) core_num(2) : (!bp.tensor<16xf32>) -> ()
          return
        }
        """
    )
    with pytest.raises(blockpipe.CompileError) as info:
        blockpipe.verify_ir(ir, "o.mlir")
    assert info.value.message.startswith("'bp.launch' op"), info.value.message
