from geometry import rectangle_area

print(f"area: {rectangle_area(3, 4)}")
