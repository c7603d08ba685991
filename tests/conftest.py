import os

# Before anything imports torch: OpenMP threads that busy-wait make a shared CPU crawl.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest  # noqa: E402


@pytest.fixture(scope="module")
def one_torch_thread():
    """torch on one thread for a module's tests (a tiny model is faster so, and leaves a core to
    the sandbox); the previous setting comes back after the module."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
