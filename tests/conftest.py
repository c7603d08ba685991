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


# Files that take long, heaviest first (per-file totals of one --durations/junit run, two processes,
# session 36, with the budgets cut since: every file of 12 s or more under load 10, about 6 s in CI).
# Under pytest-xdist (--dist loadfile) they are handed out first, longest first, so that the many
# small files fill the end of the run and both processes end together. xdist's own order (files by
# their number of tests) left these for last, and test_pipeline's kill -9 / resume (1-2 min) ran
# alone at the end while the other process idled; with only the top 19 listed, test_zero3_export
# (22 s) still came last by name. Files not listed run after these (gen-tests files first), as collected.
LONG_FILES = (
    "test_gen_tests_path.py", "test_pipeline.py", "test_gen_tests_project.py", "test_gen_tests_realmodules2.py",
    "test_gentests26_files.py", "test_distributed.py", "test_served_server.py",
    "test_gpu_throughput_benchmark.py", "test_select_cli.py", "test_gen_tests_realmodules7.py",
    "test_gen_tests_benchmark.py", "test_sandbox_trust.py", "test_assert_semantics.py",
    "test_gen_tests_listings.py", "test_real_outputs3.py", "test_checkpoint_kill.py",
    "test_codes_input_formats.py", "test_cli_output.py", "test_gentests29_spaced.py", "test_gen_tests_model.py",
    "test_gen_tests_realmodules5.py", "test_gentests34_standins.py", "test_gentests28_shorten.py",
    "test_fixer_fixed_starts_benchmark.py", "test_real_outputs2.py", "test_gen_tests_realmodules4.py",
    "test_gentests28_private_lines.py", "test_engine.py", "test_value_semantics.py", "test_engine_properties.py",
    "test_gen_tests_cli.py", "test_served_client.py", "test_redteam26.py", "test_trainer.py",
    "test_zero3_export.py", "test_gen_tests_sequences.py", "test_real_outputs4.py", "test_shared_reply28.py",
    "test_tinyworld_model.py", "test_ml25_fixed_starts.py", "test_gen_tests_realmodules6.py",
    "test_real_outputs5.py", "test_sandbox_hostile.py", "test_real_outputs6.py", "test_own_model.py",
    "test_redteam34.py", "test_matrix_cli.py", "test_redteam17.py", "test_sandbox_process.py",
    "test_gentests29_funcs.py", "test_gen_tests_budget_stop.py", "test_redteam15.py", "test_plot.py",
    "test_gen_tests_realmodules3.py", "test_gentests30_scan.py", "test_gen_tests_realmodules.py",
    "test_gentests25_streams.py", "test_gen_tests_inherited.py", "test_tinyworld.py", "test_redteam29.py",
    "test_redteam30.py", "test_served_quirks.py", "test_right_programs23.py", "test_recursion_room24.py",
    "test_redteam35.py", "test_gen_tests_project_classes.py", "test_recursion_room29.py", "test_advantages.py",
    "test_gentests30_generators.py",
)


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # (pytest-xdist: hand files out in collection order)
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    rank = {name: k for k, name in enumerate(LONG_FILES)}

    def order(item) -> int:
        name = item.path.name
        if name in rank:
            return rank[name]
        # a newer file not measured yet: one that runs gen-tests (seconds per run) before the rest
        return len(rank) + (0 if name.startswith(("test_gen_tests_", "test_gentests")) else 1)

    items.sort(key=order)  # (stable: within a rank, as collected)
