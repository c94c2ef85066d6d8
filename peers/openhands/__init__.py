"""OpenHands' file editor (see README.md)."""
