from billing import with_tax

print(f"total: {with_tax(100)}")
