"""What the device did and what Trainium would do: op tracking (fallbacks,
host staging), strict mode (findings, memory check, run record, report) and
traces of a script's optimizer steps (step_trace, trace_report)."""
