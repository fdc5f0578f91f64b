from stats import average, largest

assert average([1, 2, 3, 4]) == 2.5, average([1, 2, 3, 4])
assert average([10]) == 10
assert largest([3, 9, 1]) == 9
