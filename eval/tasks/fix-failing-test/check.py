from cart import total

assert total([10, 5]) == 15, total([10, 5])
assert total([100], 0.1) == 90, total([100], 0.1)
assert total([20, 20], 0.5) == 20, total([20, 20], 0.5)
