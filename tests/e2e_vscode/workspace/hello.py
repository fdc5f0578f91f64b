def greet(name: str) -> str:
    return f"hello, {name}"


# Run the tests with: python -m pytest -q -p no:cacheprovider
print(greet("world"))
