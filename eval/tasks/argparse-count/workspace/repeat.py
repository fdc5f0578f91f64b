import argparse

parser = argparse.ArgumentParser(description="Print a message.")
parser.add_argument("message")
args = parser.parse_args()
print(args.message)
