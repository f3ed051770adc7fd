"""Samplers: one module per algorithm, each with ``State``, ``Info``, ``init`` and ``step``."""
