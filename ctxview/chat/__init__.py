"""Chat: the agent loop against Claude (the anthropic SDK, loaded lazily) or the offline demo
model, with built-in tools and autosave."""
