"""Fault: hangs far past any timeout."""
import time


def run(x):
    time.sleep(100000)
