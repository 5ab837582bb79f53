"""S3 checkpoint storage for statehitl."""
