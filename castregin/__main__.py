"""`python -m castregin`: the command line, as the `castregin` script runs it."""

from .cli import run

if __name__ == "__main__":
    run()
