"""visualize_array_sharding: which device holds which block of a 1-d or 2-d Array,
drawn as a grid of boxes (text; an HTML table in Jupyter), as jax's rich table does."""
from funcgraph.array import Array


def _block_grid(shape, index_map):
    """(row bounds, column bounds, {(row, col): [devices]}) of a 2-d layout."""
    cells = {}
    for device, index in index_map.items():
        bounds = tuple(s.indices(n)[:2] for s, n in zip(index, shape, strict=True))
        cells.setdefault(bounds, []).append(device)
    rows = sorted({b[0] for b in cells})
    cols = sorted({b[1] for b in cells})
    grid = {(rows.index(r), cols.index(c)): devs for (r, c), devs in cells.items()}
    return rows, cols, grid


def _cell_text(devices):
    devices = sorted(devices, key=lambda d: d.id)
    platform = devices[0].platform.upper()
    return f"{platform} " + ",".join(str(d.id) for d in devices)


class ShardingView:
    """The drawing: `str()` is the text grid, `_repr_html_` an HTML table."""

    def __init__(self, rows, cols, grid):
        self.rows, self.cols, self.grid = rows, cols, grid

    def __str__(self):
        texts = {k: _cell_text(v) for k, v in self.grid.items()}
        width = max(len(t) for t in texts.values()) + 4
        horizontal = "+" + "+".join("-" * width for _ in self.cols) + "+"
        lines = [horizontal]
        for r in range(len(self.rows)):
            lines.append("|" + "|".join(texts[(r, c)].center(width)
                                        for c in range(len(self.cols))) + "|")
            lines.append(horizontal)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        body = "".join(
            "<tr>" + "".join(f'<td style="border:1px solid;padding:4px 12px;'
                             f'text-align:center">{_cell_text(self.grid[(r, c)])}</td>'
                             for c in range(len(self.cols))) + "</tr>"
            for r in range(len(self.rows)))
        return f'<table style="border-collapse:collapse">{body}</table>'


def sharding_view(shape, sharding):
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_array_sharding can only visualize arrays of rank 1 or 2, "
                         f"got shape {shape}")
    index_map = sharding.devices_indices_map(shape)
    if len(shape) == 1:  # drawn as one row
        shape = (1,) + shape
        index_map = {d: (slice(None),) + index for d, index in index_map.items()}
    return ShardingView(*_block_grid(shape, index_map))


def visualize_array_sharding(arr, *, use_color=False, scale=1.0, min_width=9, max_width=80):
    """Print (and return) the grid of which device holds which block of arr."""
    if type(arr) is not Array:
        raise TypeError(f"visualize_array_sharding expects a funcgraph Array, got "
                        f"{type(arr).__name__}")
    view = sharding_view(arr.shape, arr.sharding)
    print(view)
    return view


def visualize_sharding(shape, sharding, **kwargs):
    view = sharding_view(shape, sharding)
    print(view)
    return view
