"""`nki.typing`: the annotations of kernel parameters (`nt.tensor`,
`nt.mutable_tensor`), both the type of the tiles and tensors a kernel holds."""

from .trace.tile import Tile

tensor = mutable_tensor = Tile
