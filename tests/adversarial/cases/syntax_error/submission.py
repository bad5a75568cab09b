"""Fault: does not even import."""


def run(x)
    return x
