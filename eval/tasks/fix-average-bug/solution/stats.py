def average(numbers):
    return sum(numbers) / len(numbers)


def largest(numbers):
    return max(numbers)
