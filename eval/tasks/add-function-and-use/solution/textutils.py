def word_count(text):
    return len(text.split())


def is_palindrome(word):
    return word == word[::-1]
