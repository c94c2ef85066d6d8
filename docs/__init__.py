"""The scripts that make the documentation's generated parts (README samples, screenshots)."""
