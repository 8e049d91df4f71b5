"""Compile metrics (`torch_neuronx.get_dynamo_metrics()`): what dynamo and
Inductor did since the last reset. Graph and kernel counts for neuron come
from this backend's wrapper code generation (one count per graph Inductor
generated code for, and per C++ kernel it defined); graph breaks, cache hits
and recompilations with their reasons come from dynamo's own counters and
compilation records. Nothing here imports dynamo until it is asked."""

import sys
from collections import Counter

_neuron = {"graphs": 0, "kernels": 0}
_kernels_per_graph: list[int] = []
_fallbacks: list[str] = []
_staged = {"graphs": 0}


def count_graph(kernels: int) -> None:
    """Called by the wrapper once per generated graph."""
    _neuron["graphs"] += 1
    _neuron["kernels"] += kernels
    _kernels_per_graph.append(kernels)


def count_fallback(op: str, reason: str) -> None:
    """Called once per graph that runs eagerly because Inductor failed on it."""
    _fallbacks.append(f"{op}: {reason}")


def count_staged_graph() -> None:
    """Called once per graph that runs op by op on a device the host cannot address."""
    _staged["graphs"] += 1


def get_dynamo_metrics() -> dict:
    """graphs_compiled (Inductor graphs for neuron, forward and backward count
    separately), kernels_generated and kernels_per_graph, frames_compiled
    (dynamo graphs, any device), recompilations and recompile_reasons,
    graph_breaks and graph_break_reasons, cache_hits and cache_misses
    (Inductor's FX graph cache), eager_fallbacks and eager_fallback_reasons
    (graphs run eagerly under the opt-in fallback, each as "op: reason"),
    host_staged_graphs (graphs run op by op with host copies, on a device
    whose memory the host cannot address)."""
    metrics = {
        "graphs_compiled": _neuron["graphs"],
        "kernels_generated": _neuron["kernels"],
        "kernels_per_graph": list(_kernels_per_graph),
        "eager_fallbacks": len(_fallbacks),
        "eager_fallback_reasons": list(_fallbacks),
        "host_staged_graphs": _staged["graphs"],
        "frames_compiled": 0,
        "recompilations": 0,
        "recompile_reasons": [],
        "graph_breaks": 0,
        "graph_break_reasons": {},
        "cache_hits": 0,
        "cache_misses": 0,
    }
    if "torch._dynamo" not in sys.modules:  # nothing was compiled
        return metrics
    from torch._dynamo.utils import counters, get_compilation_metrics

    breaks = Counter(counters["graph_break"])
    reasons = [m.recompile_reason for m in get_compilation_metrics() if m.recompile_reason]
    metrics.update(
        frames_compiled=counters["stats"]["unique_graphs"],
        recompilations=len(reasons),
        recompile_reasons=reasons,
        graph_breaks=sum(breaks.values()),
        graph_break_reasons=dict(breaks),
        cache_hits=counters["inductor"]["fxgraph_cache_hit"],
        cache_misses=counters["inductor"]["fxgraph_cache_miss"],
    )
    return metrics


def current_recompilation() -> str | None:
    """While dynamo compiles a frame (from a backend): dynamo's reason when
    this is a recompilation of the frame (its guards failed), else None."""
    from torch._dynamo.utils import get_metrics_context
    from torch._guards import CompileContext

    compile_id = CompileContext.current_compile_id()
    if compile_id is None or not compile_id.frame_compile_id:
        return None
    return getattr(get_metrics_context(), "_metrics", {}).get("recompile_reason") or "a guard of the frame failed"


def reset_dynamo_metrics() -> None:
    _neuron.update(graphs=0, kernels=0)
    _kernels_per_graph.clear()
    _fallbacks.clear()
    _staged["graphs"] = 0
    if "torch._dynamo" in sys.modules:
        from torch._dynamo.utils import clear_compilation_metrics, counters

        counters.clear()
        clear_compilation_metrics()
