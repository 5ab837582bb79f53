"""statehitl."""
