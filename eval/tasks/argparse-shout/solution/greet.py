import argparse


def main():
    parser = argparse.ArgumentParser(description="Greet someone.")
    parser.add_argument("--name", default="world")
    parser.add_argument("--shout", action="store_true")
    args = parser.parse_args()
    message = f"Hello, {args.name}!"
    if args.shout:
        message = message.upper()
    print(message)


if __name__ == "__main__":
    main()
