from geometry import calc_area

print(f"area: {calc_area(3, 4)}")
