def total(prices, discount=0.0):
    """Sum of prices, minus a discount given as a fraction (0.1 = 10 %)."""
    subtotal = sum(prices)
    return round(subtotal * discount, 2)
