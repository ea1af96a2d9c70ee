"""`python -m server`: the same program as `truloop-mcp`."""

from server.cli import main

if __name__ == "__main__":
    main()
