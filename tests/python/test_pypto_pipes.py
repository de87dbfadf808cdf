"""pypto's spellings of explicit pipes: consumer buffers (pl.reserve_buffer
in the consumer, pl.import_peer_buffer in the producer) passed positionally
to pl.a*_initialize_pipe with id=, pl.const, split= and id= on pushes and
pops, pl.tfree_to_*(tile), and group halves taking an Out parameter they do
not write; run against numpy, misuse is a CompileError at the line: a
popped tile used after its tfree, or never freed."""

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
        def vector(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                   out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
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
        def cube(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                 out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            b0 = pl.reserve_buffer(name="v2c_0", size=buffer_size, base=pl.AUTO)
            b1 = pl.reserve_buffer(name="v2c_1", size=SLOT * 8)
            pl.aic_initialize_pipe(pl.const(0, pl.INT32), b0, dir_mask=2, slot_size=SLOT, id=0)
            pl.aic_initialize_pipe(0, b1, dir_mask=2, slot_size=SLOT, id=1)
            s: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=0)
            d: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=1)
            r = pl.matmul(pl.move(s, target_memory=pl.Mem.Left), pl.move(d, target_memory=pl.Mem.Right))
            pl.tfree_to_aiv(s, id=0)
            pl.tfree_to_aiv(d, id=1)
            return pl.store(r, [0, 0], out)

        @pl.function(type=pl.FunctionType.Group)
        def group(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                  out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            r = self.cube(a, b, out)
            self.vector(a, b, out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                 out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            r = self.group(a, b, out)
            return r

    return TwoPipes


def test_two_pipes_with_consumer_buffers():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((N, N)).astype(np.float32), rng.standard_normal((N, N)).astype(np.float32)
    out = np.zeros((N, N), np.float32)
    blockpipe.compile(program(), quiet=True)(a, b, out)
    np.testing.assert_allclose(out, (a + b) @ (a - b), rtol=1e-4, atol=1e-3)


def buffer_too_small():
    return program(buffer_size=SLOT // 2)


def producer_reserves():
    return program(producer_reserves=True)


def buffer_for_a_direction_not_carried():
    return program(c2v_buffer=True)


@pytest.mark.parametrize("factory,message", [
    (buffer_too_small, "'v2c_0' holds 512 bytes, less than 1 slot(s) of 1024 bytes"),
    (producer_reserves, "the AIC consumes this direction; import its buffer"),
    (buffer_for_a_direction_not_carried, "does not carry that direction"),
])
def test_buffer_misuse_is_an_error(factory, message):
    with pytest.raises(blockpipe.CompileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        blockpipe.compile(factory(), quiet=True)


def unknown_peer():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def vector(self, a: pl.Tensor[[N, N], pl.FP32]):
            p = pl.import_peer_buffer(name="x", peer_func="nobody")  # error: peer_func 'nobody' is not another function
            pl.aiv_initialize_pipe(0, p, dir_mask=2, slot_size=SLOT)

    return P


def local_slots_above_slots():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[N, N], pl.FP32]):
            pl.aic_initialize_pipe(dir_mask=1, slot_size=SLOT, slot_num=2, local_slot_num=4)  # error: local_slot_num must be in [1, slot_num]

    return P


def run_time_conditional_expression():
    @pl.program
    class P:
        @pl.function
        def kernel(self, a: pl.Tensor[[N, N], pl.FP32], o: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            t = pl.load(a, [0, 0], [N, N])
            u = pl.exp(t) if pl.tile.get_block_idx() == 0 else t  # error: a conditional expression needs a condition known at compile time
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
            t: pl.Tile[[N, N], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic()  # error: the tile popped here from pipe 0 is never freed
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


@pytest.mark.parametrize("factory", [unknown_peer, local_slots_above_slots, run_time_conditional_expression,
                                     use_after_free, use_after_free_by_pipe, never_freed,
                                     freed_in_one_branch_only_is_enough])
def test_misuse_is_an_error_at_the_line(factory):
    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
