"""Two "hosts" on this machine for multi-host tests: network namespaces joined
by a veth pair (10.213.0.1 and 10.213.0.2), each with its own loopback, so
ranks in different namespaces can reach each other only over TCP. Needs root
and `ip`; `available()` says why not otherwise."""

import contextlib
import os
import shutil
import subprocess

ADDRESSES = ("10.213.0.1", "10.213.0.2")


def available() -> str:
    """Empty if namespaces can be made here, else the reason."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    probe = f"tnx_probe_{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return ""


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@contextlib.contextmanager
def two_hosts():
    """Yields [(namespace, interface, address)] for the two hosts; removes them after."""
    tag = os.getpid() % 100000
    hosts = [(f"tnx{tag}_{i}", f"tnxv{tag}_{i}", ADDRESSES[i]) for i in range(2)]
    try:
        for ns, _, _ in hosts:
            _ip("netns", "add", ns)
        _ip("link", "add", hosts[0][1], "type", "veth", "peer", "name", hosts[1][1])
        for ns, dev, addr in hosts:
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield hosts
    finally:
        for ns, _, _ in hosts:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)  # takes its end of the veth along
