"""`neuronxcc.nki`, AWS's retired namespace of NKI (before 0.3), as another
name of `nki`, so that tutorials written against it import unchanged:
`import neuronxcc.nki.language as nl` is `nki.language`. Only for the tutorial
yardstick (run.py)."""

import importlib
import importlib.abc
import importlib.util
import sys

_PREFIX = "neuronxcc.nki"


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == _PREFIX or fullname.startswith(_PREFIX + "."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(spec.name[len("neuronxcc.") :])

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Alias())
