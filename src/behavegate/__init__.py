"""behavegate: a CI gate for what a running AI agent does."""

__version__ = "0.1.0"
