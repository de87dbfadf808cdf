"""pypto's packed predicate masks: a comparison annotated as one feeds
pl.tile.sel / pl.tile.sels, and an 8, 16 or 32-bit integer mask loaded from
GM selects (i, j) by bit j mod W of word j div W of row i; misuse is an
error at its line, and the interpreter reads masks alike."""

import importlib.util

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
M, N = 16, 16
ROWS, COLS = 4, 40  # 40 columns: the last 16- and 32-bit words are partly used


@pl.program
class CmpSel:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[M, N], pl.FP32],
        b: pl.Tensor[[M, N], pl.FP32],
        i: pl.Tensor[[M, N], pl.INT32],
        lt: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ge: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        odd: pl.Out[pl.Tensor[[M, N], pl.INT32]],
    ) -> tuple[pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, N], pl.INT32]]:
        ta: pl.Tile[[M, N], pl.FP32] = pl.load(a, [0, 0], [M, N])
        tb: pl.Tile[[M, N], pl.FP32] = pl.load(b, [0, 0], [M, N])
        ti: pl.Tile[[M, N], pl.INT32] = pl.load(i, [0, 0], [M, N])
        tmp: pl.Tile[[1, 32], pl.UINT8] = pl.tile.create([1, 32], dtype=pl.UINT8)
        lt_mask: pl.Tile[[M, 32], pl.UINT8] = pl.tile.cmp(ta, tb, cmp_type=2)
        ge_mask: pl.Tile[[M, 2], pl.UINT32] = pl.tile.cmps(ta, 0.0, cmp_type=5)
        lt = pl.store(pl.tile.sel(lt_mask, ta, tb, tmp), [0, 0], lt)
        ge = pl.store(pl.tile.sels(ge_mask, ta, tmp, -1.5), [0, 0], ge)
        # An integer comparison's own 1/0 tile stays one mask bit per element.
        odd_mask = pl.tile.cmps(pl.tile.ands(ti, 1), 1, cmp_type=0)
        odd = pl.store(pl.tile.sels(odd_mask, ti, tmp, -7), [0, 0], odd)
        return lt, ge, odd

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[M, N], pl.FP32],
        b: pl.Tensor[[M, N], pl.FP32],
        i: pl.Tensor[[M, N], pl.INT32],
        lt: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ge: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        odd: pl.Out[pl.Tensor[[M, N], pl.INT32]],
    ) -> tuple[pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, N], pl.INT32]]:
        lt, ge, odd = self.kernel(a, b, i, lt, ge, odd)
        return lt, ge, odd


def cmp_inputs(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (M, N)).astype(np.float32)
    b = rng.integers(-4, 5, (M, N)).astype(np.float32)
    i = rng.integers(-100, 100, (M, N)).astype(np.int32)
    outs = [np.zeros((M, N), np.float32), np.zeros((M, N), np.float32), np.zeros((M, N), np.int32)]
    return a, b, i, outs


def check_cmp(a, b, i, outs):
    lt, ge, odd = outs
    np.testing.assert_array_equal(lt, np.where(a < b, a, b))
    np.testing.assert_array_equal(ge, np.where(a >= 0, a, np.float32(-1.5)))
    np.testing.assert_array_equal(odd, np.where(i & 1 == 1, i, -7))


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_a_comparison_annotated_as_packed_feeds_sel_and_sels(where):
    compiled = blockpipe.compile(CmpSel, quiet=True, **where)
    a, b, i, outs = cmp_inputs(seed=1)
    compiled(a, b, i, *outs)
    check_cmp(a, b, i, outs)


def carriers(signed: bool):
    """sel by an 8-bit, sels by a 16-bit and by a 32-bit mask from GM."""
    d8, d16, d32 = (pl.INT8, pl.INT16, pl.INT32) if signed else (pl.UINT8, pl.UINT16, pl.UINT32)

    @pl.program
    class Carriers:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[ROWS, COLS], pl.FP32],
            m8: pl.Tensor[[ROWS, 5], d8],
            m16: pl.Tensor[[ROWS, 3], d16],
            m32: pl.Tensor[[ROWS, 2], d32],
            o8: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
            o16: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
            o32: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
        ) -> tuple[
            pl.Tensor[[ROWS, COLS], pl.FP32],
            pl.Tensor[[ROWS, COLS], pl.FP32],
            pl.Tensor[[ROWS, COLS], pl.FP32],
        ]:
            t = pl.load(x, [0, 0], [ROWS, COLS])
            zero = pl.tile.full([ROWS, COLS], dtype=pl.FP32, value=0.0)
            tmp = pl.tile.create([1, 32], dtype=pl.UINT8)
            k8: pl.Tile[[ROWS, 5], d8] = pl.load(m8, [0, 0], [ROWS, 5])
            k16: pl.Tile[[ROWS, 3], d16] = pl.load(m16, [0, 0], [ROWS, 3])
            k32: pl.Tile[[ROWS, 2], d32] = pl.load(m32, [0, 0], [ROWS, 2])
            o8 = pl.store(pl.tile.sel(k8, t, zero, tmp), [0, 0], o8)
            o16 = pl.store(pl.tile.sels(k16, t, tmp, -1.0), [0, 0], o16)
            o32 = pl.store(pl.sels(k32, t, tmp, -1.0), [0, 0], o32)
            return o8, o16, o32

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[ROWS, COLS], pl.FP32],
            m8: pl.Tensor[[ROWS, 5], d8],
            m16: pl.Tensor[[ROWS, 3], d16],
            m32: pl.Tensor[[ROWS, 2], d32],
            o8: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
            o16: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
            o32: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
        ) -> tuple[
            pl.Tensor[[ROWS, COLS], pl.FP32],
            pl.Tensor[[ROWS, COLS], pl.FP32],
            pl.Tensor[[ROWS, COLS], pl.FP32],
        ]:
            o8, o16, o32 = self.kernel(x, m8, m16, m32, o8, o16, o32)
            return o8, o16, o32

    return Carriers


def carrier_inputs(signed: bool, seed: int):
    """Random bits, row 0 every word's high bit alone (negative when signed),
    row 1 all ones, row 2 pypto's alternating 0xAA..."""
    rng = np.random.default_rng(seed)
    masks = []
    for bits, words in ((8, 5), (16, 3), (32, 2)):
        unsigned = np.dtype(f"<u{bits // 8}")
        m = rng.integers(0, 1 << bits, (ROWS, words), dtype=np.uint64).astype(unsigned)
        m[0] = 1 << (bits - 1)
        m[1] = (1 << bits) - 1
        m[2] = int("AA" * (bits // 8), 16)
        masks.append(m.view(f"<i{bits // 8}") if signed else m)
    x = (np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) + 1) * 0.5
    outs = [np.zeros((ROWS, COLS), np.float32) for _ in range(3)]
    return x, masks, outs


def selected(mask: np.ndarray, cols: int) -> np.ndarray:
    """The rule as pypto's byte view states it: bit j mod 8 of byte j div 8
    of the row's little-endian bytes."""
    row_bytes = np.ascontiguousarray(mask).view(np.uint8).reshape(mask.shape[0], -1)
    return np.unpackbits(row_bytes, axis=1, bitorder="little")[:, :cols].astype(bool)


def check_carriers(x, masks, outs):
    m8, m16, m32 = masks
    o8, o16, o32 = outs
    np.testing.assert_array_equal(o8, np.where(selected(m8, COLS), x, 0))
    np.testing.assert_array_equal(o16, np.where(selected(m16, COLS), x, -1))
    np.testing.assert_array_equal(o32, np.where(selected(m32, COLS), x, -1))
    assert (o8[0] != 0).sum() == 5 and (o8[1] != 0).all()  # the patterns took


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_integer_masks_select_by_their_bits(where, signed):
    compiled = blockpipe.compile(carriers(signed), quiet=True, **where)
    x, masks, outs = carrier_inputs(signed, seed=2 + signed)
    compiled(x, *masks, *outs)
    check_carriers(x, masks, outs)


def test_the_interpreter_reads_masks_as_compiled(monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    a, b, i, outs = cmp_inputs(seed=5)
    blockpipe.compile(CmpSel)(a, b, i, *outs)
    check_cmp(a, b, i, outs)
    x, masks, outs = carrier_inputs(True, seed=6)
    blockpipe.compile(carriers(True))(x, *masks, *outs)
    check_carriers(x, masks, outs)


@pytest.mark.parametrize(
    "lines,message",
    [
        (
            ["m: pl.Tile[[16, 32], pl.UINT8] = pl.tile.cmp(t, t, cmp_type=0)", "u = pl.add(m, m)"],
            r"'m' is a packed predicate mask \(the comparison at line 9, annotated "
            r"Tile\[\[16, 32\], UINT8\]\).*only pl.sel's, pl.sels' or pl.where's mask",
        ),
        (
            ["m: pl.Tile[[16, 32], pl.UINT8] = pl.tile.cmp(t, t, cmp_type=0)", "u = m"],
            "'m' is a packed predicate mask",
        ),
        (
            ["m: pl.Tile[[16, 1], pl.UINT8] = pl.tile.cmps(t, 0.0)", "u = t"],
            "a packed mask of 16 columns needs 16 bits a row, but Tile",
        ),
        (
            ["m = pl.load(k, [0, 0], [16, 1])", "u = pl.tile.sels(m, t, t, 0.0)"],
            r"the mask's rows hold 8 bits \(1 x UINT8\) but the tiles have 16 columns",
        ),
        (
            ["m = pl.load(k, [0, 0], [8, 2])", "u = pl.tile.sel(m, t, t, t)"],
            "the mask has 8 rows but the tiles have 16",
        ),
    ],
)
def test_misuse_is_an_error_at_its_line(tmp_path, lines, message):
    first, second = lines
    source = tmp_path / "misuse.py"
    source.write_text(
        "import blockpipe.language as pl\n\n\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, x: pl.Tensor[[16, 16], pl.FP32], k: pl.Tensor[[16, 2], pl.UINT8],\n"
        "          y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        f"        t = pl.load(x, [0, 0], [16, 16]); {first}\n"
        f"        {second}\n"
        "        return pl.store(u, [0, 0], y)\n\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def main(self, x: pl.Tensor[[16, 16], pl.FP32], k: pl.Tensor[[16, 2], pl.UINT8],\n"
        "             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        y = self.k(x, k, y)\n"
        "        return y\n"
    )
    spec = importlib.util.spec_from_file_location("misuse", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(blockpipe.CompileError, match=message) as info:
        blockpipe.compile(module.P, quiet=True)
    where = 9 if "needs 16 bits" in message else 10
    assert (info.value.file, info.value.line) == (str(source), where)
