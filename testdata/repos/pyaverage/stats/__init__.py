"""Small statistics helpers."""

from .basic import average, total

__all__ = ["average", "total"]
