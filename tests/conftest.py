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


# Files that take long with few tests, heaviest first (measured with --durations, two processes):
# under pytest-xdist they are handed out first, so that the many small files fill the end of the run.
# xdist's own order (files by their number of tests) left these for last, and test_pipeline's
# kill -9 / resume (1-2 min) ran alone at the end while the other process idled.
LONG_FILES = (
    "test_gen_tests_path.py", "test_gen_tests_project.py", "test_gen_tests_realmodules2.py",
    "test_pipeline.py", "test_gentests30_scan.py", "test_gen_tests_listings.py",
    "test_gen_tests_realmodules7.py", "test_gen_tests_model.py", "test_gentests26_files.py",
    "test_gen_tests_realmodules5.py", "test_distributed.py", "test_gen_tests_benchmark.py",
    "test_gentests28_shorten.py", "test_gentests28_private_lines.py", "test_gentests29_spaced.py",
    "test_fixer_fixed_starts_benchmark.py", "test_served_server.py", "test_checkpoint_kill.py",
    "test_gpu_throughput_benchmark.py",
)


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # (pytest-xdist: hand files out in collection order)
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    rank = {name: k for k, name in enumerate(LONG_FILES)}
    items.sort(key=lambda it: rank.get(it.path.name, len(rank)))  # (stable: the rest as collected)
