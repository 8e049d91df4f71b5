"""Reads a trace written by torch.profiler's export_chrome_trace: the neuron
device's tracks (pid = device index) and the events on them."""

import json

ESTIMATE_TRACK = "estimated Trainium2"


class Trace:
    def __init__(self, path):
        self.events = json.load(open(path))["traceEvents"]
        self.meta = [e for e in self.events if e.get("ph") == "M"]
        self.process_names = {e["pid"]: e["args"]["name"] for e in self.meta if e["name"] == "process_name"}
        self.thread_names = {(e["pid"], e["tid"]): e["args"]["name"] for e in self.meta if e["name"] == "thread_name"}

    def device_pid(self, index: int = 0):
        pids = [pid for pid, name in self.process_names.items() if name == f"neuron {index}"]
        assert pids, f"no 'neuron {index}' process in {self.process_names}"
        return pids[0]

    def tracks(self, pid):
        return {tid: name for (p, tid), name in self.thread_names.items() if p == pid}

    def slices(self, pid, track_name=None):
        tids = {tid for tid, name in self.tracks(pid).items() if track_name is None or name == track_name}
        return [e for e in self.events if e.get("ph") == "X" and e.get("pid") == pid and e.get("tid") in tids]

    def measured(self, pid):
        return [e for e in self.slices(pid) if self.tracks(pid).get(e["tid"]) != ESTIMATE_TRACK]

    def estimated(self, pid):
        return self.slices(pid, ESTIMATE_TRACK)

    def flows(self, phase):
        return {e["id"]: e for e in self.events if e.get("ph") == phase and e.get("cat") == "ac2g"}
