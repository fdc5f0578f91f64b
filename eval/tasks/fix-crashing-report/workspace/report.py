import csv


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def total_quantity(rows):
    return sum(int(row["qty"]) for row in rows)


print(f"total quantity: {total_quantity(load('orders.csv'))}")
