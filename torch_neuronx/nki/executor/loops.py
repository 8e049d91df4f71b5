"""Dynamic loops in a plan (trace/dynamic.py): the steps between a
`loop_begin` and its `loop_end` become the body of one step that runs them
while the loop's register says so: `while` while it holds a non-zero value,
`range` while the counter (start, start + step, ...) is below it. A loop that
runs more than `MAX_ITERATIONS` times fails instead of hanging.
"""

from __future__ import annotations

import torch

from ..errors import NKIError
from ..trace.dynamic import MAX_ITERATIONS


class AtStep(Exception):  # noqa: N818  (carries a failure out of a loop's body)
    """A failure of step `index` inside a loop's body."""

    def __init__(self, index: int, cause: BaseException):
        super().__init__(str(cause))
        self.index, self.cause = index, cause


def fold(instrs, steps, operand) -> set:
    """Replaces each loop_begin's step with the loop and its loop_end's with
    nothing; returns the indices of the steps that run inside loops (the
    caller's top-level run skips them). `operand(access)` binds an access."""
    inside: set = set()
    stack: list = []  # (index of an open loop's begin, its body's top-level step indices)
    for i, ins in enumerate(instrs):
        if stack:
            inside.add(i)
        if ins.name == "loop_begin":
            if stack:
                stack[-1][1].append(i)
            stack.append((i, []))
        elif ins.name == "loop_end":
            begin, body = stack.pop()
            steps[begin] = _loop(instrs[begin], body, steps, operand)
            steps[i] = _nothing
        elif stack:
            stack[-1][1].append(i)
    return inside


def _nothing(env):
    return None


def _value(op, env) -> int:
    return int(op.get(env).reshape(-1)[0])


def _loop(begin, body, steps, operand):
    attrs = begin.attrs
    register = operand(begin.reads[0])
    counter = operand(begin.writes[0]) if begin.writes else None
    start, step = attrs["start"], attrs["step"]

    def run_body(env):
        for j in body:
            try:
                steps[j](env)
            except AtStep:
                raise
            except Exception as e:
                raise AtStep(j, e) from e

    def too_many(n):
        return NKIError(
            f"the dynamic loop at {begin.line} ran {n} iterations without its register ending it: "
            f"update the register in the loop (nisa.register_load)"
        )

    if attrs["kind"] == "while":

        def run(env):
            n = 0
            while _value(register, env) != 0:
                if n == MAX_ITERATIONS:
                    raise too_many(n)
                run_body(env)
                n += 1

        return run

    def run_range(env):
        i = start
        while i < _value(register, env):
            if (i - start) // step == MAX_ITERATIONS:
                raise too_many(MAX_ITERATIONS)
            counter.put(env, torch.full((1, 1), i, dtype=torch.int32))
            run_body(env)
            i += step

    return run_range
