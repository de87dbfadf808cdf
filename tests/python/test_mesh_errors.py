"""Bad mesh programs: each raises CompileError at the line marked
`# error: ...`, with that text in its message, before any C++ is built."""

import pytest

import located

import blockpipe
import blockpipe.language as pl

T = pl.Tensor[[16, 16], pl.FP32]
HALF = pl.Tensor[[8, 16], pl.FP32]
TI = pl.Tensor[[16, 16], pl.INT32]


def expect_error(program_factory, devices=4):
    return located.expect_error(
        program_factory, lambda program: blockpipe.compile(program, devices=devices, quiet=True)
    )


def test_duplicate_sources():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: source 0 appears twice in source_target_pairs
                y = pl.collective_permute(x, y, source_target_pairs=[[0, 1], [0, 2]])
                return y

        return P

    expect_error(make)


def test_duplicate_targets():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: target 1 appears twice in source_target_pairs
                y = pl.collective_permute(x, y, source_target_pairs=[[0, 1], [2, 1]])
                return y

        return P

    expect_error(make)


def test_device_outside_the_mesh():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: device id 4 in source_target_pairs is outside [0, 4)
                pl.send(x, source_target_pairs=[[3, 4]])
                y = pl.recv(y, source_target_pairs=[[3, 4]])
                return y

        return P

    expect_error(make)


def test_pairs_for_a_larger_mesh():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: device id 2 in source_target_pairs is outside [0, 2)
                y = pl.collective_permute(x, y, source_target_pairs=[[0, 1], [1, 2]])
                return y

        return P

    expect_error(make, devices=2)


def test_send_without_recv():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: has no matching recv on channel 0 with source_target_pairs [[0, 1]]
                pl.send(x, source_target_pairs=[[0, 1]])
                return y

        return P

    expect_error(make)


def test_recv_without_send():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: has no matching send on channel 2 with source_target_pairs [[0, 1]]
                y = pl.recv(y, source_target_pairs=[[0, 1]], channel=2)
                return y

        return P

    expect_error(make)


def test_send_and_recv_on_different_channels():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: has no matching recv on channel 1
                pl.send(x, source_target_pairs=[[0, 1]], channel=1)
                y = pl.recv(y, source_target_pairs=[[0, 1]], channel=2)
                return y

        return P

    expect_error(make)


def test_send_and_recv_shapes_differ():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[HALF]) -> HALF:
                # error: sends 'Tensor[[16, 16], FP32]' on channel 0 but the matching recv receives 'Tensor[[8, 16], FP32]'
                pl.send(x, source_target_pairs=[[0, 1]])
                y = pl.recv(y, source_target_pairs=[[0, 1]])
                return y

        return P

    err = expect_error(make)
    assert "the matching recv" in str(err)


def test_send_and_recv_dtypes_differ():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[TI]) -> TI:
                # error: sends 'Tensor[[16, 16], FP32]' on channel 0 but the matching recv receives 'Tensor[[16, 16], INT32]'
                pl.send(x, source_target_pairs=[[0, 1]])
                y = pl.recv(y, source_target_pairs=[[0, 1]])
                return y

        return P

    expect_error(make)


def test_recv_before_send_on_a_cycle_deadlocks():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: deadlocks: device 0 waits here to receive from device 1, and the devices wait for each other in a cycle
                y = pl.recv(y, source_target_pairs=[[0, 1], [1, 0]])
                pl.send(x, source_target_pairs=[[0, 1], [1, 0]])
                return y

        return P

    err = expect_error(make)
    assert "device 1 waits here to receive from device 0" in str(err)


def send_in_a_kernel():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: T, y: pl.Out[T]) -> T:
            # error: pl.send is only valid in Orchestration functions, not in InCore function 'k'
            pl.send(x, source_target_pairs=[[0, 1]])
            return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

    return P


def recv_in_a_kernel():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: T, y: pl.Out[T]) -> T:
            # error: pl.recv is only valid in Orchestration functions, not in InCore function 'k'
            y = pl.recv(y, source_target_pairs=[[0, 1]])
            return y

    return P


def collective_permute_in_a_kernel():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: T, y: pl.Out[T]) -> T:
            # error: pl.collective_permute is only valid in Orchestration functions, not in InCore function 'k'
            y = pl.collective_permute(x, y, source_target_pairs=[[0, 1]])
            return y

    return P


def device_id_in_a_kernel():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: T, y: pl.Out[T]) -> T:
            # error: pl.device_id is only valid in Orchestration functions, not in InCore function 'k'
            d = pl.device_id()
            return pl.store(pl.load(x, [d, 0], [16, 16]), [0, 0], y)

    return P


@pytest.mark.parametrize(
    "make",
    [send_in_a_kernel, recv_in_a_kernel, collective_permute_in_a_kernel, device_id_in_a_kernel],
    ids=lambda f: f.__name__,
)
def test_transfers_only_in_orchestrations(make):
    expect_error(make)


def test_collective_permute_out_of_another_shape():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[HALF]) -> HALF:
                # error: pl.collective_permute's out must be Tensor[[16, 16], FP32] like its tensor, got Tensor[[8, 16], FP32]
                y = pl.collective_permute(x, y, source_target_pairs=[[0, 1]])
                return y

        return P

    expect_error(make)


def test_recv_into_an_input():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                pl.send(y, source_target_pairs=[[0, 1]])
                # error: pl.recv writes into 'x', an input of 'main'; declare it pl.Out[...] or pl.InOut[...] to write it
                x = pl.recv(x, source_target_pairs=[[0, 1]])
                return y

        return P

    expect_error(make)


def test_collective_permute_into_an_input():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, z: T, y: pl.Out[T]) -> T:
                # error: pl.collective_permute writes into 'z', an input of 'main'
                z = pl.collective_permute(x, z, source_target_pairs=[[0, 1]])
                return y

        return P

    expect_error(make)


def test_pairs_not_a_list_of_pairs():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: each of pl.collective_permute's source_target_pairs is a [source, target] pair
                y = pl.collective_permute(x, y, source_target_pairs=[0, 1])
                return y

        return P

    expect_error(make)


def test_pairs_of_three():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: each of pl.send's source_target_pairs is a [source, target] pair
                pl.send(x, source_target_pairs=[[0, 1, 2]])
                return y

        return P

    expect_error(make)


def test_pairs_not_a_list():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: pl.recv's source_target_pairs must be a list of [source, target] device pairs known at compile time
                y = pl.recv(y, source_target_pairs=3)
                return y

        return P

    expect_error(make)


def test_device_id_not_an_integer():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: a device id must be an integer known at compile time, got 'a'
                y = pl.collective_permute(x, y, source_target_pairs=[[0, "a"]])
                return y

        return P

    expect_error(make)


def test_no_pairs():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: a device-to-device transfer needs at least one source-target pair
                y = pl.collective_permute(x, y, source_target_pairs=[])
                return y

        return P

    expect_error(make)


def test_negative_channel():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: pl.collective_permute's channel must be >= 0, got -1
                y = pl.collective_permute(x, y, source_target_pairs=[[0, 1]], channel=-1)
                return y

        return P

    expect_error(make)


def test_transfer_in_a_program_compiled_without_devices():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                # error: compile the program for one with blockpipe.compile(..., devices=N)
                y = pl.collective_permute(x, y, source_target_pairs=[[0, 1]])
                return y

        return P

    expect_error(make, devices=None)


def test_placement_outside_the_mesh():
    def make():
        @pl.program
        class P:
            # error: 'main' is placed on device 3, outside the mesh of 2 devices (compile(..., devices=2))
            @pl.function(type=pl.FunctionType.Orchestration, device=3)
            def main(self, x: T, y: pl.Out[T]) -> T:
                return y

        return P

    expect_error(make, devices=2)


@pytest.mark.parametrize("devices", [0, -1, True, 2.0, "4"])
def test_devices_must_be_a_positive_integer(devices):
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, y: pl.Out[T]) -> T:
            y = pl.collective_permute(x, y, source_target_pairs=[[0, 1]])
            return y

    with pytest.raises(ValueError, match=rf"devices must be a positive integer, got {devices!r}"):
        blockpipe.compile(P, devices=devices, quiet=True)
