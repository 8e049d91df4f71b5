"""`make fuzz`: FUZZ_PROGRAMS random programs (default 10,000) through
op_programs.run_program, each on the CPU and on neuron. A failure prints the
program hypothesis shrank it to; it then becomes a named regression test in
tests/python/ops/test_fuzz_regressions.py (docs/develop.md)."""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_programs import run_program

PROGRAMS = int(os.environ.get("FUZZ_PROGRAMS", "10000"))


# A second per program at most: a quiet 2-core machine runs about 12 a second,
# one beside a CPU hog on every core about 3 (the project's default of 300 s
# per test stopped the default run of 10,000).
@pytest.mark.timeout(max(300, PROGRAMS))
@settings(max_examples=PROGRAMS, deadline=None, database=None, suppress_health_check=list(HealthCheck), print_blob=True)
@given(st.data())
def test_random_programs_run_alike_on_the_cpu_and_on_neuron(data):
    run_program(data)
