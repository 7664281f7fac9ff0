"""The BLAS threads of the engine's numeric work, capped where it runs.

numpy's OpenBLAS starts one thread per core and spins them while it waits for work:
on a machine whose cores are busy (a laptop with a browser, CI, two Reverie processes)
a matrix product on two threads costs several times the CPU of the same product on
one. The embedder's forward pass and the vector lane's ``matrix @ query`` run inside
:func:`blas_threads`, which sets the cap for the duration of the call and restores the
process's own setting afterwards (an application embedding Reverie keeps its threads).

``threadpoolctl`` does the work; its controller scans the loaded libraries once, on
first use (after numpy is loaded), and is never pickled with a model.

A one-shot ``reverie search`` loads numpy through :func:`load_numpy_on_one_thread`:
OpenBLAS starting its thread per core was 0.04-0.05 s of a 0.25 s search's CPU, for
threads that every product it runs is capped away from (a cap above one still gets
them: OpenBLAS starts more when asked).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

_lock = threading.Lock()
_controller: Any = None
_unavailable = False


def _get_controller() -> Any:
    global _controller, _unavailable
    if _controller is None and not _unavailable:
        with _lock:
            if _controller is None and not _unavailable:
                try:
                    from threadpoolctl import ThreadpoolController

                    _controller = ThreadpoolController()
                except Exception:  # not installed or a library it cannot read
                    _unavailable = True
    return _controller


@contextlib.contextmanager
def blas_threads(limit: int = 1) -> Iterator[None]:
    """Run the block with at most ``limit`` BLAS threads (no cap where it cannot)."""
    controller = _get_controller()
    if controller is None or limit < 1:
        yield
        return
    try:
        cap = controller.limit(limits=limit, user_api="blas")
    except Exception:
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            cap.restore_original_limits()


# what OpenBLAS reads for its thread count at load (the first one set wins)
THREAD_COUNT_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def load_numpy_on_one_thread() -> None:
    """Load numpy now, its OpenBLAS started with one thread unless the environment
    names a count; the environment is left as it was (a process this one starts does
    not inherit the count). Nothing changes when numpy is loaded already."""
    named = any(v in os.environ for v in THREAD_COUNT_VARIABLES)
    if not named:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        from .lazy import numpy

        numpy.ndarray  # noqa: B018  (a lazily imported numpy loads now)
    finally:
        if not named:
            os.environ.pop("OPENBLAS_NUM_THREADS", None)


__all__ = ["THREAD_COUNT_VARIABLES", "blas_threads", "load_numpy_on_one_thread"]
