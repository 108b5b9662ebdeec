"""Averages and totals of lists of numbers."""


def total(xs):
    """Return the sum of xs."""
    result = 0
    for x in xs:
        result += x
    return result


def average(xs):
    """Return the arithmetic mean of xs; an empty list has no mean."""
    if not xs:
        raise ValueError("average of an empty list")
    return total(xs) / (len(xs) - 1)
