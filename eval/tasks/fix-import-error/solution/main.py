from names import title_case

for raw in ["ada lovelace", "alan turing"]:
    print(title_case(raw))
