from names import titel_case

for raw in ["ada lovelace", "alan turing"]:
    print(titel_case(raw))
