with open("words.txt") as f:
    words = [line.strip() for line in f if line.strip()]

for word in words:
    print(word)
