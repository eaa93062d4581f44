"""The rule tables of `jax.interpreters.*` (primitive_jvps, primitive_transposes,
primitive_batchers, ...) as views of funcgraph's own registries: assigning a rule
written for JAX installs it in funcgraph's table, adapted to funcgraph's signature;
reading gives back the rule as it was assigned (or funcgraph's own for funcgraph's
primitives)."""
import collections.abc


class RuleTable(collections.abc.MutableMapping):
    """A mapping primitive -> JAX-style rule over `table` (funcgraph's registry);
    `adapt(prim, rule)` turns a JAX-style rule into funcgraph's."""

    def __init__(self, table, adapt):
        self._table = table
        self._adapt = adapt
        self._given = {}

    def __setitem__(self, prim, rule):
        self._given[prim] = rule
        self._table[prim] = self._adapt(prim, rule)

    def __getitem__(self, prim):
        if prim in self._given and self._table.get(prim) is not None:
            return self._given[prim]
        return self._table[prim]

    def __delitem__(self, prim):
        self._given.pop(prim, None)
        del self._table[prim]

    def __iter__(self):
        return iter(self._table)

    def __len__(self):
        return len(self._table)

    def __contains__(self, prim):
        return prim in self._table

    def __repr__(self):
        return f"RuleTable({len(self)} primitives)"
