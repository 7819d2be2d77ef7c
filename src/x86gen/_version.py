"""The version of x86gen (pyproject.toml says the same)."""
__version__ = "0.1.0"
