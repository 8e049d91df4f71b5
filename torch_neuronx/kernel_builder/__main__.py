"""`python -m torch_neuronx.kernel_builder build <repo> [<repo> ...]`."""

import sys

from .builder import main

sys.exit(main(sys.argv[1:]))
