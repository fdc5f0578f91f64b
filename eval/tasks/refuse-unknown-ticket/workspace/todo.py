import sys

items = []


def add(item):
    items.append(item)


def show():
    for number, item in enumerate(items, 1):
        print(f"{number}. {item}")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        add(arg)
    show()
