from shop.errors import InvoiceError


def parse_invoice(lines):
    items = []
    for line in lines:
        name, _, price = line.partition(";")
        if not price:
            raise InvoiceError(f"no price in {line!r}")
        items.append((name, float(price)))
    return items


def invoice_total(items):
    return sum(price for _, price in items)
