"""The conformance cases: one module per area of the spec."""
