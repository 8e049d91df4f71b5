"""`nl`'s types as kernels name them: `nl.NKIObject`, the base of the
dataclasses and helper objects a kernel passes around; `nl.NkiTensor` /
`nl.tensor` / `nl.tile`, the type of every tensor and tile a kernel holds;
`nl.dtype`, the type of `nl.float32` and the others (chip/dtypes.py).
AWS's compiler traces NKIObject fields; on the emulator a kernel is plain
Python, so an NKIObject is a plain object."""

import dataclasses

from ..chip.dtypes import DType
from ..trace.tile import Tile


class NKIObject:
    """`Sub(*fields, **fields)`: each subclass's constructor sets the fields
    it is given, as AWS's compiler does. Positional arguments bind to the
    fields of a dataclass subclass in order; a field left out takes its
    default, or None where it has none (AWS's compiler accepts such
    constructors); a keyword may also name a plain class attribute (AWS's
    NKI Library decorates classes with @dataclass whose fields have no
    annotations, and constructs them by keyword); a plain subclass takes any
    keyword. A subclass that defines its own __init__ keeps it."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" not in cls.__dict__:  # @dataclass then keeps this one
            cls.__init__ = _init

    def __init__(self, **kwargs):
        for name, value in kwargs.items():
            setattr(self, name, value)


def _init(self, *args, **kwargs):
    cls = type(self)
    fields = [f for f in dataclasses.fields(cls) if f.init] if dataclasses.is_dataclass(cls) else []
    if len(args) > len(fields):
        raise TypeError(f"{cls.__name__}() takes {len(fields)} positional arguments but {len(args)} were given")
    values = dict(zip((f.name for f in fields), args))
    for name in kwargs:
        if name in values:
            raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
    values.update(kwargs)
    for f in fields:
        if f.name in values:
            continue
        if f.default is not dataclasses.MISSING:
            values[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            values[f.name] = f.default_factory()
        else:  # AWS's NKI Library leaves fields out of its constructors (MLP TKG's remainderIFused): None
            values[f.name] = None
    known = {f.name for f in fields}
    for name, value in values.items():
        if fields and name not in known and not hasattr(cls, name):
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {name!r}")
        object.__setattr__(self, name, value)
    post = getattr(self, "__post_init__", None)
    if post is not None:
        post()


NkiTensor = tensor = tile = Tile
dtype = DType
