from config import TAX_RATE


def with_tax(amount):
    return round(amount * (1 + TAX_RATE), 2)
