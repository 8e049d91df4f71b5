"""Child interpreters forked from a server that has imported torch once.

A fresh interpreter spends about 2.5 CPU-seconds in `import torch` before it
runs a line of the worker; the Python tier starts some two hundred of them.
A fork server is a process that imports torch (with device-backend autoload
off, so torch_neuronx is not yet imported) and then forks on request; the
child takes the caller's pipes, environment, working folder and argv, imports
the device backends as torch's autoload would (unless the environment turns
autoload off), and runs the script as `__main__`. It is a real process with
its own pid, memory and exit status; torch_neuronx, the HAL and the emulator
start in it as in any process.

What the child cannot take from the caller is what torch read while it
imported: every variable outside IMPORT_SAFE. So a server is started per
set of those values (and per rank slot, so that ranks run with different
string-hash seeds, as separate interpreters do), at most MAX_SERVERS per
calling process; beyond that the caller starts a fresh interpreter.
NEURON_TEST_FORKSERVER=0 turns the servers off (every child fresh)."""

import atexit
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

# Variables torch does not read while it imports: the child may set them.
IMPORT_SAFE_PREFIXES = (
    "NEURON_",
    "TORCH_NEURONX_",
    "FUZZ_",
    "HF_",
    "TRANSFORMERS_",
    "TOKENIZERS_",
    "TORCHINDUCTOR_",
    "PYTEST_",
)
IMPORT_SAFE = {
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "PYTHONPATH",  # applied to sys.path by the child
    "TORCH_DEVICE_BACKEND_AUTOLOAD",  # applied by the child
}
_HEADER = struct.Struct("!Q")


def _import_safe(name: str) -> bool:
    return name in IMPORT_SAFE or name.startswith(IMPORT_SAFE_PREFIXES)


# --- the server (runs in its own interpreter: python -m helpers.forkserver <socket>) ---


def _become(request: dict, fds: list[int], base_path: list[str]) -> None:
    """In the forked child: take the caller's pipes, environment, folder and
    argv, then run the script as `__main__`; raises SystemExit with its status."""
    for target, fd in zip((0, 1, 2), fds):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    script = os.path.abspath(request["argv"][0])
    python_path = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [os.path.dirname(script), *python_path, *base_path]
    sys.argv = [request["argv"][0], *request["argv"][1:]]
    import runpy

    import torch

    if torch._is_device_backend_autoload_enabled():
        torch._import_device_backends()
    runpy.run_path(script, run_name="__main__")
    raise SystemExit(0)


def serve(path: str) -> None:
    import torch  # noqa: F401  (the import every child shares)

    python_path = {p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    base_path = [p for p in sys.path[1:] if p not in python_path]
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    children: dict[int, socket.socket] = {}
    while os.getppid() == parent:  # the caller gone: stop
        if select.select([listener], [], [], 0.05)[0]:
            conn, _ = listener.accept()
            header, fds, _, _ = socket.recv_fds(conn, _HEADER.size, 3)
            (size,) = _HEADER.unpack(header)
            payload = b""
            while len(payload) < size:
                payload += conn.recv(size - len(payload))
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                listener.close()
                for other in children.values():
                    other.close()
                conn.close()
                _become(json.loads(payload), fds, base_path)
            for fd in fds:
                os.close(fd)
            conn.sendall(f"{pid}\n".encode())
            children[pid] = conn
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = children.pop(pid)
            try:
                conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            except OSError:
                pass  # the caller stopped waiting
            conn.close()


# --- the caller's side ---


class ForkedProcess:
    """The part of subprocess.Popen the helpers use, for a forked child."""

    def __init__(self, args, conn: socket.socket, pid: int, stdout: int, stderr: int):
        self.args, self.pid, self.returncode = args, pid, None
        self._conn, self._pipes = conn, [stdout, stderr]
        self._chunks = {stdout: [], stderr: []}  # kept across a timed-out communicate(), as Popen does

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        chunks = self._chunks
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._pipes:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            for fd in select.select(self._pipes, [], [], left)[0]:
                data = os.read(fd, 1 << 16)
                chunks[fd].append(data)
                if not data:
                    self._pipes.remove(fd)
                    os.close(fd)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return tuple(b"".join(c).decode(errors="replace") for c in chunks.values())

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._conn], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout)
            line = _read_line(self._conn)
            self.returncode = int(line) if line else -signal.SIGKILL  # the server gone
            self._conn.close()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _read_line(conn: socket.socket) -> str:
    """One line, read a byte at a time: nothing after it is consumed."""
    line = b""
    while not line.endswith(b"\n"):
        byte = conn.recv(1)
        if not byte:
            break
        line += byte
    return line.decode().strip()


class _Server:
    def __init__(self, env: dict[str, str]):
        self.folder = tempfile.mkdtemp(prefix="neuron-forkserver-")
        self.path = os.path.join(self.folder, "socket")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "helpers.forkserver", self.path],
            env=dict(env, TORCH_DEVICE_BACKEND_AUTOLOAD="0"),
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # tests/python: `helpers`
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.ready = self.proc.stdout.readline().strip() == "ready"

    def spawn(self, argv: list[str], env: dict[str, str]) -> ForkedProcess:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        null = os.open(os.devnull, os.O_RDONLY)
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(self.path)
            payload = json.dumps({"argv": argv, "env": env, "cwd": os.getcwd()}).encode()
            socket.send_fds(conn, [_HEADER.pack(len(payload))], [null, out_w, err_w])
            conn.sendall(payload)
            pid = int(_read_line(conn))
        finally:
            for fd in (null, out_w, err_w):
                os.close(fd)
        return ForkedProcess([sys.executable, *argv], conn, pid, out_r, err_r)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)


MAX_SERVERS = 8  # per calling process; beyond, children start fresh
_SERVERS: dict[tuple, _Server] = {}
_LOCK = threading.Lock()
_OWNER = os.getpid()


def spawn(slot: int, argv: list[str], env: dict[str, str]) -> ForkedProcess | None:
    """A child running `python argv...` with `env`, forked from a server of
    rank slot `slot` that imported torch under the same import-time
    environment (started on first use); None when no server can give what a
    fresh interpreter would (the caller then starts one)."""
    if os.environ.get("NEURON_TEST_FORKSERVER", "1") == "0":
        return None
    import_env = {k: v for k, v in env.items() if not _import_safe(k)}
    key = (slot, tuple(sorted(import_env.items())))
    with _LOCK:
        server = _SERVERS.get(key)
        if server is None:
            if len(_SERVERS) >= MAX_SERVERS:
                return None
            server = _SERVERS[key] = _Server(import_env)
    return server.spawn(argv, env) if server.ready else None


@atexit.register
def _stop_all() -> None:
    if os.getpid() == _OWNER:  # not in a forked copy of the caller
        for server in _SERVERS.values():
            server.stop()


if __name__ == "__main__":
    serve(sys.argv[1])
