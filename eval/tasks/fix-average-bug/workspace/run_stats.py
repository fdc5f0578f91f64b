from stats import average, largest

data = [2, 4, 6]
print(f"average: {average(data)}")
print(f"largest: {largest(data)}")
