import os

# Before anything imports torch: OpenMP threads that busy-wait make a shared CPU crawl.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# Timings stay out of assertions (the machines are shared and noisy): no per-example deadline and
# no "input generation is slow" health check for any property test, unless a test sets its own.
# Seen: a list strategy's first draws took 2.1 s on a freshly started GPU machine and failed
# test_length_chunks_partition_in_order_with_bounded_padding there.
settings.register_profile("coevo", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("coevo")


@pytest.fixture(scope="module")
def one_torch_thread():
    """torch on one thread for a module's tests (a tiny model is faster so, and leaves a core to
    the sandbox); the previous setting comes back after the module."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
