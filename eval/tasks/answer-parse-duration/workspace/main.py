import sys

from timeparse import parse_duration

print(parse_duration(sys.argv[1]))
