"""The exception every NKI check raises.

A check raises before the plan of a kernel runs, so no device memory is
written by a kernel that fails one. The message names the kernel, the source
line, the tile, the limit and the value."""


class NKIError(Exception):
    """A kernel that the NeuronCore (or the NKI compiler) would refuse."""

    def __init__(self, message: str, *, kernel: str | None = None, line: str | None = None):
        self.kernel = kernel
        self.line = line
        self.detail = message
        where = ""
        if kernel:
            where = f"NKI kernel '{kernel}'"
            if line:
                where += f" at {line}"
            where += ": "
        super().__init__(where + message)


class NKIUnsupported(NKIError, NotImplementedError):
    """A part of the NKI language this emulator does not implement yet."""


def not_yet(qualified_name: str):
    """A callable standing in for an AWS NKI API the emulator does not run
    yet: importing it works (so a kernel module loads), calling it raises
    NKIUnsupported naming `qualified_name` (e.g. "nki.isa.topk")."""

    def call(*args, **kwargs):
        raise NKIUnsupported(f"{qualified_name} is not supported by the NKI emulator yet (docs/nki.md lists what is)")

    call.__name__ = qualified_name.rsplit(".", 1)[-1]
    call.__qualname__ = call.__name__
    return call
