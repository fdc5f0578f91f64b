import json

config = json.load(open("config.json"))
print(f"connecting to {config['database']['host']}")
