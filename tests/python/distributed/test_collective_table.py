"""A collective is one entry of one table (csrc/distributed/Collectives.h): a
test-only entry, registered by a library that only this test loads
(tests/cpp/test_collective_entry.cpp), is run by the process group, checked
by the cross-rank signature check and carried by both transports."""

import pathlib

import pytest
from helpers.dist_launch import assert_all_ok, launch

LIBRARY = (
    pathlib.Path(__file__).resolve().parents[3] / "build" / "cmake" / "tests" / "cpp" / "libneuron_test_collective.so"
)


@pytest.fixture(scope="module")
def library():
    assert LIBRARY.exists(), f"{LIBRARY} is built by `make build` (TORCH_NEURONX_BUILD_TESTS=ON)"
    return str(LIBRARY)


@pytest.mark.parametrize("mode", ["ok", "hosts"])
def test_process_group_and_both_transports_run_a_new_entry(library, mode, tmp_path):
    results = launch("collective_table_entry", 2, tmp_path, timeout=120, args=[library, mode])
    assert_all_ok(results)
    assert all(f"table entry ok {mode}" in r.stdout for r in results), [r.stdout for r in results]


def test_signature_check_covers_a_new_entry(library, tmp_path):
    results = launch("collective_table_entry", 2, tmp_path, timeout=120, args=[library, "mismatch"])
    assert_all_ok(results)
    for r in results:
        assert (
            "raised:" in r.stdout
            and "ranks disagree" in r.stdout
            and "test_weighted_sum of 4" in r.stdout
            and "test_weighted_sum of 5" in r.stdout
        ), r.stdout
