"""LangGraph's ``checkpoint.serde`` package: its serializer API (``jsonplus.JsonPlusSerializer``) on statehitl's
value codec, for code that serializes values itself (a custom saver, a value kept outside a graph)."""
