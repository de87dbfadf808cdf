"""pypto's spellings of explicit pipes: consumer buffers (pl.reserve_buffer
in the consumer, pl.import_peer_buffer in the producer) passed positionally
to pl.a*_initialize_pipe with id=, pl.const, split= and id= on pushes and
pops, pl.tfree_to_*(tile), and group halves taking an Out parameter they do
not write; run against numpy, misuse is a CompileError at the line: a
popped tile used after its tfree, or never freed."""

import pathlib

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

N = 16
SLOT = N * N * 4


def program(buffer_size=SLOT * 8, producer_reserves=False, c2v_buffer=False):
    @pl.program
    class TwoPipes:
        """(a + b) @ (a - b), the operands on two pipes pushed in reverse id
        order (mixing the ids up would swap them)."""

        @pl.function(type=pl.FunctionType.AIV, attrs={"dual_aiv_dispatch": True})
        def vector(
            self,
            a: pl.Tensor[[N, N], pl.FP32],
            b: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
        ):
            if producer_reserves:
                p0 = pl.reserve_buffer(name="v2c_0", size=buffer_size, base=pl.AUTO)
            else:
                p0 = pl.import_peer_buffer(name="v2c_0", peer_func="cube")
            p1 = pl.import_peer_buffer(name="v2c_1", peer_func="cube")
            c2v = p1 if c2v_buffer else pl.const(0, pl.INT32)
            pl.aiv_initialize_pipe(c2v, p0, dir_mask=2, slot_size=SLOT, id=0)
            pl.aiv_initialize_pipe(pl.const(0, pl.INT32), p1, dir_mask=2, slot_size=SLOT, id=1)
            ta = pl.load(a, [0, 0], [N, N])
            tb = pl.load(b, [0, 0], [N, N])
            pl.tpush_to_aic(pl.sub(ta, tb), split=0, id=1)
            pl.tpush_to_aic(pl.add(ta, tb), split=0, id=0)

        @pl.function(type=pl.FunctionType.AIC)
        def cube(
            self,
            a: pl.Tensor[[N, N], pl.FP32],
            b: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
        ) -> pl.Tensor[[N, N], pl.FP32]:
            b0 = pl.reserve_buffer(name="v2c_0", size=buffer_size, base=pl.AUTO)
            b1 = pl.reserve_buffer(name="v2c_1", size=SLOT * 8)
            pl.aic_initialize_pipe(pl.const(0, pl.INT32), b0, dir_mask=2, slot_size=SLOT, id=0)
            pl.aic_initialize_pipe(0, b1, dir_mask=2, slot_size=SLOT, id=1)
            s: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=0)
            d: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=1)
            r = pl.matmul(
                pl.move(s, target_memory=pl.Mem.Left), pl.move(d, target_memory=pl.Mem.Right)
            )
            pl.tfree_to_aiv(s, id=0)
            pl.tfree_to_aiv(d, id=1)
            return pl.store(r, [0, 0], out)

        @pl.function(type=pl.FunctionType.Group)
        def group(
            self,
            a: pl.Tensor[[N, N], pl.FP32],
            b: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
        ) -> pl.Tensor[[N, N], pl.FP32]:
            r = self.cube(a, b, out)
            self.vector(a, b, out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[N, N], pl.FP32],
            b: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
        ) -> pl.Tensor[[N, N], pl.FP32]:
            r = self.group(a, b, out)
            return r

    return TwoPipes


def test_two_pipes_with_consumer_buffers():
    rng = np.random.default_rng(0)
    a, b = (
        rng.standard_normal((N, N)).astype(np.float32),
        rng.standard_normal((N, N)).astype(np.float32),
    )
    out = np.zeros((N, N), np.float32)
    blockpipe.compile(program(), quiet=True)(a, b, out)
    np.testing.assert_allclose(out, (a + b) @ (a - b), rtol=1e-4, atol=1e-3)


def buffer_too_small():
    return program(buffer_size=SLOT // 2)


def producer_reserves():
    return program(producer_reserves=True)


def buffer_for_a_direction_not_carried():
    return program(c2v_buffer=True)


@pytest.mark.parametrize(
    "factory,message",
    [
        (buffer_too_small, "'v2c_0' holds 512 bytes, less than 1 slot(s) of 1024 bytes"),
        (producer_reserves, "the AIC consumes this direction; import its buffer"),
        (buffer_for_a_direction_not_carried, "does not carry that direction"),
    ],
)
def test_buffer_misuse_is_an_error(factory, message):
    with pytest.raises(
        blockpipe.CompileError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        blockpipe.compile(factory(), quiet=True)


def unknown_peer():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def vector(self, a: pl.Tensor[[N, N], pl.FP32]):
            # error: peer_func 'nobody' is not another function
            p = pl.import_peer_buffer(name="x", peer_func="nobody")
            pl.aiv_initialize_pipe(0, p, dir_mask=2, slot_size=SLOT)

    return P


def local_slots_above_slots():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[N, N], pl.FP32]):
            # error: local_slot_num must be in [1, slot_num]
            pl.aic_initialize_pipe(dir_mask=1, slot_size=SLOT, slot_num=2, local_slot_num=4)

    return P


def run_time_conditional_expression():
    @pl.program
    class P:
        @pl.function
        def kernel(self, a: pl.Tensor[[N, N], pl.FP32], o: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            t = pl.load(a, [0, 0], [N, N])
            # error: a conditional expression needs a condition known at compile time
            u = pl.exp(t) if pl.tile.get_block_idx() == 0 else t
            return pl.store(u, [0, 0], o)

    return P


def use_after_free():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def vector(self, o: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            pl.aiv_initialize_pipe(dir_mask=1, slot_size=SLOT)
            t: pl.Tile[[N, N], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic()
            pl.tfree_to_aic(t)
            return pl.store(t, [0, 0], o)  # error: 't' is used after the pl.tfree at line

    return P


def use_after_free_by_pipe():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def vector(self, o: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            pl.aiv_initialize_pipe(dir_mask=1, slot_size=SLOT)
            t: pl.Tile[[N, N], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic()
            u: pl.Tile[[N, N], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic()
            pl.tfree_to_aic()
            pl.store(u, [0, 0], o)
            pl.tfree_to_aic()
            return pl.store(t, [0, 0], o)  # error: 't' is used after the pl.tfree at line

    return P


def never_freed():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def vector(self, o: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            pl.aiv_initialize_pipe(dir_mask=1, slot_size=SLOT)
            # error: the tile popped here from pipe 0 is never freed
            t: pl.Tile[[N, N], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic()
            return pl.store(t, [0, 0], o)

    return P


def freed_in_one_branch_only_is_enough():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def vector(self, o: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            pl.aiv_initialize_pipe(dir_mask=1, slot_size=SLOT)
            t: pl.Tile[[N, N], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic()
            if pl.tile.get_block_idx() == 0:
                o = pl.store(t, [0, 0], o)
                pl.tfree_to_aic(t)
            else:
                pl.tfree_to_aic(t)
            return pl.store(t, [0, 0], o)  # error: 't' is used after the pl.tfree

    return P


def dual_dispatch_asks_its_lane():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV, attrs={"dual_aiv_dispatch": True})
        def vector(self, a: pl.Tensor[[N, N], pl.FP32], o: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            # error: pl.tile.get_subblock_idx() would always be 0 here
            lane = pl.tile.get_subblock_idx()
            t = pl.load(a, [lane * 8, 0], [8, N])
            return pl.store(t, [lane * 8, 0], o)

    return P


@pytest.mark.parametrize(
    "factory",
    [
        unknown_peer,
        local_slots_above_slots,
        run_time_conditional_expression,
        use_after_free,
        use_after_free_by_pipe,
        never_freed,
        freed_in_one_branch_only_is_enough,
        dual_dispatch_asks_its_lane,
    ],
)
def test_misuse_is_an_error_at_the_line(factory):
    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))


@pl.program
class UnevenPushes:
    """The cube pushes `pushes` tiles, the vector pops `pops` of them: equal
    counts are correct; the compiler cannot tell, so the sanitizer judges."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(
        self,
        a: pl.Tensor[[N, N], pl.FP32],
        out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
        pushes: pl.Scalar[pl.INDEX],
        pops: pl.Scalar[pl.INDEX],
    ):
        pl.aic_initialize_pipe(dir_mask=1, slot_size=SLOT, slot_num=4)
        t = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        l = pl.move(t, target_memory=pl.Mem.Left)  # noqa: E741 - l and r: the Left and Right operands
        r = pl.move(t, target_memory=pl.Mem.Right)
        for i in pl.range(pushes):
            pl.tpush_to_aiv(pl.matmul(l, r))  # pushed here

    @pl.function(type=pl.FunctionType.AIV)
    def vector(
        self,
        a: pl.Tensor[[N, N], pl.FP32],
        out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
        pushes: pl.Scalar[pl.INDEX],
        pops: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[N, N], pl.FP32]:
        pl.aiv_initialize_pipe(dir_mask=1, slot_size=SLOT, slot_num=4)
        acc = pl.full([N, N], pl.FP32, 0.0)
        for i in pl.range(pops):
            t: pl.Tile[[N, N], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic()
            acc = pl.add(acc, t)
            pl.tfree_to_aic(t)
        return pl.store(acc, [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(
        self,
        a: pl.Tensor[[N, N], pl.FP32],
        out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
        pushes: pl.Scalar[pl.INDEX],
        pops: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, out, pushes, pops)
        return self.vector(a, out, pushes, pops)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[N, N], pl.FP32],
        out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
        pushes: pl.Scalar[pl.INDEX],
        pops: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[N, N], pl.FP32]:
        return self.group(a, out, pushes, pops)


def test_the_sanitizer_names_the_line_of_tiles_left_in_a_pipe(monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_SANITIZE", "1")
    a = np.random.default_rng(3).standard_normal((N, N)).astype(np.float32) / 4
    compiled = blockpipe.compile(UnevenPushes, quiet=True)
    out = np.zeros((N, N), np.float32)
    compiled(a, out, 3, 3)
    np.testing.assert_allclose(out, 3 * (a @ a), rtol=1e-4, atol=1e-4)

    out = np.zeros((N, N), np.float32)
    with pytest.raises(Exception) as info:
        compiled(a, out, 3, 1)
    push_line = next(
        n
        for n, text in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1)
        if text.endswith("# pushed here")
    )
    message = str(info.value)
    assert (
        "pipe 0 (C2V): the AIC pushed 2 tile(s) the AIV never popped, the last pushed at "
        f"test_pypto_pipes.py:{push_line}"
    ) in message, message
    assert (out == 0).all()  # the failed call left its output alone
