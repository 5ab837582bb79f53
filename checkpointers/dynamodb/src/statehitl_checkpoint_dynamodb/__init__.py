"""DynamoDB checkpoint storage for statehitl."""
