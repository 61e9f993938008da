"""Rewrites of whole modules: CHLO legalization (chlo_legalize.py)."""
from .chlo_legalize import legalize_chlo

__all__ = ["legalize_chlo"]
