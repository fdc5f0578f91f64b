from textutils import is_palindrome

with open("words.txt") as f:
    words = [line.strip() for line in f if line.strip()]

for word in words:
    if is_palindrome(word):
        print(word)
