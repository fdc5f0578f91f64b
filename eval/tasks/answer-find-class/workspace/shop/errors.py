class ShopError(Exception):
    pass


class InvoiceError(ShopError):
    """An invoice line could not be read."""
