"""Mesh programs interpreted: the orchestration runs once per device of
the mesh, each device on its own thread, and `pl.send`/`pl.recv`/
`pl.collective_permute` move copies of tensors through per-(source,
target, channel) FIFOs, as the compiled run's channels do (the k-th send
meets the k-th recv).

The devices take turns: one runs at a time, the lowest-numbered that can,
until it waits for a recv or ends. Runs are then deterministic and a
breakpoint stops one device while the others stand still. When every
device still running waits for a recv, no send can come: each of them
fails (a deadlock is an error, never a hang)."""

from __future__ import annotations

import threading
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from blockpipe.interpreter.state import failure, running, unsupported

Channel = Tuple[int, int, int]  # (source, target, channel)


class Mesh:
    """The devices of one interpreted mesh call and the channels between them."""

    def __init__(self, devices: int):
        self.devices = devices
        self._cond = threading.Condition()
        self._turn: Optional[int] = None
        self._done = [False] * devices
        self._waiting: Dict[int, Channel] = {}
        self._queues: Dict[Channel, List[np.ndarray]] = {}
        self._stuck = False
        # Ctrl-C in the caller: devices not started stay so, waits end.
        self._cancelled = False

    def run(self, body: Callable[[int], None]) -> List[Optional[BaseException]]:
        """Runs `body(device)` for every device, taking turns; returns each
        device's error (None where it succeeded)."""
        errors: List[Optional[BaseException]] = [None] * self.devices

        def device_main(device: int) -> None:
            with self._cond:
                while self._turn != device and not self._stuck and not self._cancelled:
                    self._cond.wait()
                if self._cancelled:
                    return
            try:
                body(device)
            except BaseException as error:  # noqa: BLE001 - re-raised by the call
                errors[device] = error
            finally:
                with self._cond:
                    self._done[device] = True
                    self._pass_turn()

        threads = [
            threading.Thread(target=device_main, args=(d,), name=f"device {d}", daemon=True)
            for d in range(self.devices)
        ]
        with self._cond:
            self._turn = 0
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                thread.join()
        except KeyboardInterrupt:
            # The device running now ends its Python on its own; the call's
            # outputs are copies, so nothing it writes reaches the caller.
            with self._cond:
                self._cancelled = True
                self._cond.notify_all()
            raise
        return errors

    def _pass_turn(self) -> None:
        """Gives the turn to the lowest-numbered device that can run (the
        condition is held); with none left while some still wait, they are
        stuck for good."""
        ready = [
            d
            for d in range(self.devices)
            if not self._done[d] and (d not in self._waiting or self._queues.get(self._waiting[d]))
        ]
        self._turn = ready[0] if ready else None
        if not ready and not all(self._done):
            self._stuck = True
        self._cond.notify_all()

    def send(self, key: Channel, value) -> None:
        # A copy: what is sent is the tensor as it is now, as the compiled
        # run's send reads it before the sender goes on.
        with self._cond:
            self._queues.setdefault(key, []).append(np.array(value, copy=True))

    def recv(self, device: int, key: Channel) -> np.ndarray:
        with self._cond:
            queue = self._queues.setdefault(key, [])
            if not queue:
                self._waiting[device] = key
                self._pass_turn()
                while self._turn != device and not self._stuck and not self._cancelled:
                    self._cond.wait()
                del self._waiting[device]
                if self._cancelled:
                    raise KeyboardInterrupt
            if not queue:
                source, _, channel = key
                error = failure(
                    f"pl.recv from device {source} on channel {channel} waits for a send "
                    "that never comes (deadlock: every device still running waits to receive)"
                )
                error.deadlock = True
                raise error
            return queue.pop(0)


def root_cause(errors: List[Optional[BaseException]]) -> Optional[BaseException]:
    """The error a failed call raises: the first device's own error rather
    than the waits it left unanswered (its traceback leads to the user's
    line), with the other devices' errors in its notes."""
    failed = [e for e in errors if e is not None]
    if not failed:
        return None
    failed.sort(key=lambda e: getattr(e, "deadlock", False))
    first = failed[0]
    for error in failed[1:]:
        first.add_note(f"also: {error}")
    return first


# ------------------------------------------------------------ operations


def _transfer(what: str) -> Tuple[Mesh, int]:
    now = running()
    if now.mesh is None:
        # The compiler rejects transfers outside a mesh program; a pipeline
        # stage's would need the stages to run side by side.
        raise unsupported(f"pl.{what} in a pipeline stage")
    return now.mesh, now.device


def _pairs(source_target_pairs) -> List[Tuple[int, int]]:
    return [(int(s), int(t)) for s, t in source_target_pairs]


def device_id() -> int:
    now = running()
    return 0 if now.device is None else now.device


def send(tensor, source_target_pairs, channel=0) -> None:
    mesh, device = _transfer("send")
    for source, target in _pairs(source_target_pairs):
        if source == device:
            mesh.send((source, target, int(channel)), tensor)


def recv(tensor, source_target_pairs, channel=0):
    mesh, device = _transfer("recv")
    for source, target in _pairs(source_target_pairs):
        if target == device:
            tensor[...] = mesh.recv(device, (source, target, int(channel)))
    return tensor


def collective_permute(tensor, out, source_target_pairs, channel=0):
    """StableHLO's collective_permute: sources send, targets receive, and a
    device that is no target gets zeros."""
    mesh, device = _transfer("collective_permute")
    pairs = _pairs(source_target_pairs)
    send(tensor, pairs, channel)
    if all(target != device for _, target in pairs):
        out[...] = 0
        return out
    return recv(out, pairs, channel)


P2P_OPS: Dict[str, Callable] = {
    "device_id": device_id,
    "send": send,
    "recv": recv,
    "collective_permute": collective_permute,
}
