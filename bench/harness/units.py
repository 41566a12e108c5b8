"""Counts and durations as the options take them; sizes and times as the generators print them."""
import argparse

# The units wrk and h2load print sizes and times in; their sizes are binary
# (1.89MB is 1.89 x 2^20 bytes).
SIZE_BYTES = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}
TIME_MS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def positive(text):
    v = int(text)
    if v <= 0:
        raise argparse.ArgumentTypeError("must be a positive whole number")
    return v


def non_negative(text):
    v = int(text)
    if v < 0:
        raise argparse.ArgumentTypeError("must be a whole number")
    return v


def seconds(text):
    v = float(text)
    if not v >= 0:
        raise argparse.ArgumentTypeError("must be a number of seconds, 0 or more")
    return v
