import argparse

parser = argparse.ArgumentParser(description="Print a message.")
parser.add_argument("message")
parser.add_argument("--count", type=int, default=1)
args = parser.parse_args()
for _ in range(args.count):
    print(args.message)
