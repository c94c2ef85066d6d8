"""deepagents' filesystem tools (see README.md)."""
