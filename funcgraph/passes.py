"""IR-to-IR passes run by jit before lowering; each result is type checked."""
from funcgraph import ir


def optimize(closed):
    ir.check(closed)
    return closed
