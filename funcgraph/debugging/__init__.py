"""Tools for seeing inside transformed code: the NaN/Inf probe (`find_nonfinite`) and
the jaxpr diff (`diff`).  `funcgraph.inspect` re-exports them."""
