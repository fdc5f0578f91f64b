from cart import total


def test_no_discount():
    assert total([10, 5]) == 15


def test_ten_percent():
    assert total([100], 0.1) == 90
