"""Architecture sweep every architecture in Transformers' causal-LM
auto mapping, shrunk to a tiny random-weight config, generates 8 greedy tokens
on the CPU and on neuron, eagerly and (where the model supports a static
cache) with a static cache and decode compiled by the `neuron` backend.

- eager: neuron's tokens against the CPU's (same kernels: identical expected).
- compiled: neuron compiled (static cache) against the CPU's static-cache eager
  tokens. Fused kernels round differently, so a difference at a step whose CPU
  top-1 margin is below MARGIN counts as a tie, not a miss.
- An architecture that does not build or generate on the CPU (eager, or with a
  static cache), or whose generate does not compile its decode step
  (Transformers' auto-compile criteria), is reported but left out of that
  column's denominator; so are those tiny_configs.CANNOT_RUN names, with its
  reason. The tiny configs and their per-architecture rules: tiny_configs.py.

Run: make sweep   (or .venv/bin/python tests/sweep/architecture_sweep.py
                   [--only a,b] [--no-compile] [--compile-budget MIN] [--out docs/model-coverage.md])
Targets: identical tokens for >= 95% of the architectures that generate on the
CPU eagerly, and >= 90% of those with a static cache in compiled mode.
"""

import argparse
import copy
import signal
import sys
import time
import traceback
import warnings

import torch
from tiny_configs import CANNOT_RUN, MODEL_SETUP, SMALL, tiny_config  # tests/sweep: the script's own folder

import torch_neuronx

NEW_TOKENS, PROMPT = 8, 8
MARGIN = 1e-3


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout("timed out")


def generate(model, ids, **kwargs):
    out = model.generate(
        ids,
        max_new_tokens=NEW_TOKENS,
        min_new_tokens=NEW_TOKENS,
        do_sample=False,
        output_scores=True,
        return_dict_in_generate=True,
        pad_token_id=0,
        **kwargs,
    )
    return out.sequences[0, ids.shape[1] :].cpu(), [s[0].float().cpu() for s in out.scores]


def compare(ref_tokens, ref_scores, tokens) -> tuple[bool, str]:
    for step, (a, b) in enumerate(zip(ref_tokens.tolist(), tokens.tolist())):
        if a != b:
            top = ref_scores[step].topk(2).values
            margin = (top[0] - top[1]).item()
            if margin < MARGIN:
                return True, f"tie at step {step} (CPU top-1 margin {margin:.1e})"
            return False, f"token {step} differs ({b} vs CPU {a}; CPU margin {margin:.2g})"
    return True, ""


def short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ").replace("|", "/")
    return text[:160]


def add_reason(row: dict, text: str) -> None:
    row["reason"] = f"{row['reason']}; {text}" if row["reason"] else text


def run_one(model_type: str, compile_: bool, timeout_s: int) -> dict:
    from transformers import AutoModelForCausalLM, CompileConfig

    row = {"arch": model_type, "eager": "-", "compiled": "-", "reason": ""}
    if model_type in CANNOT_RUN:
        row.update(eager="cannot run", compiled="cannot run", reason=CANNOT_RUN[model_type].replace("|", "/"))
        return row
    signal.alarm(timeout_s)
    try:
        try:
            config = tiny_config(model_type)
            torch.manual_seed(0)
            cpu_model = AutoModelForCausalLM.from_config(config).eval()
            if model_type in MODEL_SETUP:  # before the neuron copy, which inherits it
                MODEL_SETUP[model_type](cpu_model)
            ids = torch.randint(3, SMALL["vocab_size"] - 1, (1, PROMPT), generator=torch.Generator().manual_seed(0))
            ref_tokens, ref_scores = generate(cpu_model, ids)
        except Timeout:
            raise
        except Exception as exc:  # the architecture does not build or generate on the CPU
            row.update(eager="cpu fails", compiled="cpu fails", reason=short(exc))
            return row
        neuron_model = copy.deepcopy(cpu_model).to("neuron")
        try:
            tokens, _ = generate(neuron_model, ids.to("neuron"))
            ok, why = compare(ref_tokens, ref_scores, tokens)
            row["eager"] = "identical" if ok else "differs"
            row["reason"] = why
        except Timeout:
            raise
        except Exception as exc:
            row.update(eager="error", reason=short(exc))
        if not compile_:
            return row
        try:
            static_tokens, static_scores = generate(cpu_model, ids, cache_implementation="static", disable_compile=True)
        except Timeout:
            raise
        except Exception as exc:
            row["compiled"] = "no static cache"
            add_reason(row, "static cache: " + short(exc)[:80])
            return row
        try:
            torch._dynamo.reset()
            torch_neuronx.reset_dynamo_metrics()
            config = CompileConfig(backend="neuron", fullgraph=False, dynamic=False)
            tokens, _ = generate(neuron_model, ids.to("neuron"), cache_implementation="static", compile_config=config)
            m = torch_neuronx.get_dynamo_metrics()
            ok, why = compare(static_tokens, static_scores, tokens)
            if m["graphs_compiled"] + m["cache_hits"] == 0:  # Transformers' auto-compile criteria turned it down
                row["compiled"] = "not compiled by generate"
                return row
            row["compiled"] = "identical" if ok else "differs"
            if why:
                add_reason(row, "compiled: " + why)
        except Timeout:
            raise
        except Exception as exc:
            row["compiled"] = "error"
            add_reason(row, "compiled: " + short(exc))
        return row
    except Timeout:
        add_reason(row, f"timed out after {timeout_s} s")
        if row["eager"] == "-":
            row["eager"] = "timeout"
        elif row["compiled"] == "-":
            row["compiled"] = "timeout"
        return row
    finally:
        signal.alarm(0)


def summary(rows) -> list[str]:
    """Each column over every architecture swept (the denominator
    asks for), and over those that generate on the CPU (the targets')."""
    on_cpu = [r for r in rows if r["eager"] not in ("cpu fails", "cannot run", "timeout", "sweep error")]
    share = len(on_cpu) / len(rows) if rows else 0.0
    lines = [
        f"CPU: {len(on_cpu)} of {len(rows)} architectures build and generate on the CPU ({share:.1%}; "
        f"target 95%, {'met' if share >= 0.95 else 'missed'})"
    ]
    for column, target in (("eager", 0.95), ("compiled", 0.90)):
        counted = [
            r
            for r in rows
            if r[column]
            not in ("cpu fails", "cannot run", "no static cache", "-", "not run (budget)", "not compiled by generate")
        ]
        same = [r for r in counted if r[column] == "identical"]
        share = len(same) / len(counted) if counted else 0.0
        lines.append(
            f"{column}: identical for {len(same)} of all {len(rows)} architectures; for {len(same)} of "
            f"the {len(counted)} that run {'on the CPU' if column == 'eager' else 'with a static cache'} "
            f"({share:.1%}; target {target:.0%}, {'met' if share >= target else 'missed'})"
        )
    return lines


def write_table(rows, path, command: str, seconds: float, planned: int) -> None:
    with open(path, "w") as f:
        f.write("# Architecture sweep\n\n")
        f.write("Generated by `tests/sweep/architecture_sweep.py` (see its docstring); do not edit by hand.\n\n")
        f.write(
            f"Command: `{command}`, {time.strftime('%Y-%m-%d')}, {seconds / 60:.0f} min on 2 cores, "
            f"{len(rows)} of {planned} architectures.\n\n"
        )
        for line in summary(rows):
            f.write(f"- {line}\n")
        f.write("\n| architecture | eager | compiled | reason |\n|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['arch']} | {r['eager']} | {r['compiled']} | {r['reason']} |\n")


def main(argv=None) -> list[dict]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    from transformers.utils import logging as hf_logging

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated model types")
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per architecture")
    parser.add_argument(
        "--compile-budget",
        type=float,
        default=0,
        help="minutes after which the compiled column is no longer run (0: no limit)",
    )
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    hf_logging.set_verbosity_error()
    warnings.filterwarnings("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    archs = [a for a in args.only.split(",") if a] or list(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    start = time.time()
    rows = []
    for i, arch in enumerate(archs):
        t = time.time()
        over_budget = args.compile_budget and time.time() - start > args.compile_budget * 60
        try:
            row = run_one(arch, not args.no_compile and not over_budget, args.timeout)
            if over_budget and not args.no_compile and row["compiled"] == "-":
                row["compiled"] = "not run (budget)"
        except Exception:  # a bug in the sweep itself must not hide the rest
            row = {
                "arch": arch,
                "eager": "sweep error",
                "compiled": "-",
                "reason": short(RuntimeError(traceback.format_exc(limit=1))),
            }
        rows.append(row)
        print(
            f"[{i + 1}/{len(archs)}] {arch}: eager {row['eager']}, compiled {row['compiled']} "
            f"({time.time() - t:.0f} s) {row['reason'][:120]}",
            flush=True,
        )
        if args.out:  # after every architecture, so an interrupted sweep leaves its rows
            command = "python tests/sweep/architecture_sweep.py " + " ".join(argv or sys.argv[1:])
            write_table(rows, args.out, command, time.time() - start, len(archs))
    for line in summary(rows):
        print(line)
    return rows


if __name__ == "__main__":
    main()
