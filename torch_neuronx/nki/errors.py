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
