"""Counts and durations as the command line and the rows take them."""
import argparse


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
