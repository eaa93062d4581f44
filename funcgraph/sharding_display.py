"""visualize_array_sharding: which device holds which block of a 1-d or 2-d Array,
drawn as a grid of boxes sized by the blocks' shares of the array (text; an HTML table
in Jupyter): the same characters jax's table prints (with `rich`, no colors), narrowed
and wrapped as it is when wider than max_width."""
import re

from funcgraph.array import Array


def _cells(shape, index_map):
    """{(row, col): (devices, height fraction or None for 1-d, width fraction)} of the
    blocks of a 1-d or 2-d layout."""
    cells = {}
    for device, index in index_map.items():
        bounds = [s.indices(n)[:2] for s, n in zip(index, shape, strict=True)]
        fractions = [(stop - start) / n for (start, stop), n in zip(bounds, shape, strict=True)]
        key = tuple(bounds) if len(shape) == 2 else ((0, 1),) + tuple(bounds)
        height = fractions[0] if len(shape) == 2 else None
        entry = cells.setdefault(key, ([], height, fractions[-1]))
        entry[0].append(device)
    rows = sorted({k[0] for k in cells})
    cols = sorted({k[1] for k in cells})
    return {(rows.index(r), cols.index(c)): v for (r, c), v in cells.items()}


def _cell_text(devices):
    devices = sorted(devices, key=lambda d: d.id)
    platform = devices[0].platform.upper()
    return f"{platform} " + ",".join(str(d.id) for d in devices)


class _Cell:
    """One block's text with the blank lines above and below and the spaces left and
    right that jax gives it (sized by the block's share of the array)."""

    def __init__(self, text, top, bottom, left, right):
        self.text, self.top, self.bottom, self.left, self.right = text, top, bottom, left, right

    @property
    def width(self):
        return self.left + len(self.text) + self.right

    def widest_at(self, width):
        """How wide it draws in a column at most `width` wide (the label wraps)."""
        inner = width - self.left - self.right
        if inner < 1:
            return width
        return min(min(len(self.text), inner) + self.left + self.right, width)

    def lines(self, width):
        """Its lines in a column `width` wide: the label, wrapped to what the padding
        leaves, left-justified there."""
        inner = width - self.left - self.right
        blank = " " * width
        if inner < 1:  # no room left for the label
            body = []
        else:
            body = [" " * self.left + line.ljust(inner) + " " * self.right
                    for line in _wrapped(self.text, inner)]
        return [blank] * self.top + body + [blank] * self.bottom


def _wrapped(text, width):
    """The label's lines at `width`: words moved to the next line when they do not fit,
    a word longer than a line cut short with an ellipsis (as rich's table wraps)."""
    lines, line = [], ""
    for word in re.findall(r"\S+\s*", text):
        if line and len(line) + len(word.rstrip()) > width:
            lines.append(line)
            line = ""
        line += word
    lines.append(line)
    lines = [ln.rstrip() if len(ln) > width else ln for ln in lines]
    return [ln[:width - 1] + "…" if len(ln) > width else ln for ln in lines]


def _column_widths(cells, n_rows, n_cols, max_width):
    """Each column as wide as its widest cell; a table wider than max_width narrows its
    widest columns first, then all evenly, as jax's (rich's) table does."""
    room = max_width - (n_cols + 1)
    widths = [min(max(cells[(r, c)].width for r in range(n_rows)), room)
              for c in range(n_cols)]
    if sum(widths) <= room:
        return widths
    while sum(widths) > room:
        widest = max(widths)
        second = max((w for w in widths if w != widest), default=0)
        excess = sum(widths) - room
        if widest == second:
            break
        widths = _reduce(excess, [int(w == widest) for w in widths],
                         [min(excess, widest - second)] * n_cols, widths)
    if sum(widths) > room:
        widths = _reduce(sum(widths) - room, [1] * n_cols, widths, widths)
    return [max(cells[(r, c)].widest_at(w) for r in range(n_rows))
            for c, w in enumerate(widths)]


def _reduce(total, ratios, maximums, values):
    """values less `total` shared in proportion to ratios, each less at most its maximum."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums, strict=True)]
    remaining_ratio, remaining = sum(ratios), total
    out = []
    for ratio, maximum, value in zip(ratios, maximums, values, strict=True):
        if ratio and remaining_ratio > 0:
            cut = min(maximum, round(ratio * remaining / remaining_ratio))
            out.append(value - cut)
            remaining -= cut
            remaining_ratio -= ratio
        else:
            out.append(value)
    return out


def _sized_cells(shape, cells, scale, min_width, max_width):
    """jax's sizes: a block's height from its share of the rows (10 lines for the whole
    array at scale 1), its width from its share of the columns (2.5 characters a line,
    in the array's aspect ratio), within [min_width, max_width]."""
    base_height = int(10 * scale)
    aspect = (shape[1] if len(shape) == 2 else 1) / shape[0]
    base_width = int(base_height * aspect)
    sized = {}
    for key, (devices, height_share, width_share) in cells.items():
        text = _cell_text(devices)
        width = min(max(int(width_share * base_width * 2.5), min_width), max_width)
        height = 1 if height_share is None else int(height_share * base_height)
        left, extra = divmod(width - len(text) - 2, 2)
        top, extra_lines = divmod(height - 2, 2)
        sized[key] = _Cell(text, max(top, 0), max(top + extra_lines, 0), max(left, 0),
                           max(left + extra, 0))
    return sized


class ShardingView:
    """The drawing: `str()` is the text grid jax prints (a table of boxes, one per block,
    no colors), `_repr_html_` an HTML table."""

    def __init__(self, cells, n_rows, n_cols, max_width=80):
        self.cells, self.n_rows, self.n_cols = cells, n_rows, n_cols
        self.max_width = max_width

    def __str__(self):
        widths = _column_widths(self.cells, self.n_rows, self.n_cols, self.max_width)

        def rule(left, middle, right):
            return left + middle.join("─" * w for w in widths) + right
        lines = [rule("┌", "┬", "┐")]
        for r in range(self.n_rows):
            if r:
                lines.append(rule("├", "┼", "┤"))
            columns = [self.cells[(r, c)].lines(w) for c, w in enumerate(widths)]
            height = max(1, *(len(col) for col in columns))
            columns = [col + [" " * w] * (height - len(col))
                       for col, w in zip(columns, widths, strict=True)]
            lines.extend("│" + "│".join(parts) + "│" for parts in zip(*columns, strict=True))
        lines.append(rule("└", "┴", "┘"))
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        body = "".join(
            "<tr>" + "".join(f'<td style="border:1px solid;padding:4px 12px;'
                             f'text-align:center">{self.cells[(r, c)].text}</td>'
                             for c in range(self.n_cols)) + "</tr>"
            for r in range(self.n_rows))
        return f'<table style="border-collapse:collapse">{body}</table>'


def sharding_view(shape, sharding, *, scale=1.0, min_width=9, max_width=80):
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_array_sharding can only visualize arrays of rank 1 or 2, "
                         f"got shape {shape}")
    cells = _cells(shape, sharding.devices_indices_map(shape))
    n_rows = 1 + max(r for r, _ in cells)
    n_cols = 1 + max(c for _, c in cells)
    return ShardingView(_sized_cells(shape, cells, scale, min_width, max_width), n_rows, n_cols,
                        max_width)


def visualize_array_sharding(arr, *, use_color=False, scale=1.0, min_width=9, max_width=80):
    """Print (and return) the grid of which device holds which block of arr."""
    if type(arr) is not Array:
        raise TypeError(f"visualize_array_sharding expects a funcgraph Array, got "
                        f"{type(arr).__name__}")
    return visualize_sharding(arr.shape, arr.sharding, use_color=use_color, scale=scale,
                              min_width=min_width, max_width=max_width)


def visualize_sharding(shape, sharding, *, use_color=False, scale=1.0, min_width=9,
                       max_width=80):
    """Print (and return) the grid of which device holds which block of an array of
    this shape laid out by sharding."""
    view = sharding_view(shape, sharding, scale=scale, min_width=min_width,
                         max_width=max_width)
    print(view)
    return view
