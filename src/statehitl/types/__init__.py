"""The wire shapes agents speak: Bedrock Converse messages, tool uses and results, stream events.

They are ``TypedDict``s, not classes, because users (and models) build them as plain dicts and they go
into checkpoints as JSON unchanged; the names match Strands' so type hints written for it still read.
"""
