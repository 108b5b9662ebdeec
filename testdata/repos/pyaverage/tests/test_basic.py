import pytest

from stats import average, total


def test_total():
    assert total([1, 2, 3]) == 6


def test_average():
    assert average([2, 4, 6]) == 4


def test_average_single():
    assert average([5]) == 5


def test_average_empty():
    with pytest.raises(ValueError):
        average([])
