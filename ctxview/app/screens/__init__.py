"""Modal screens: open, save, system prompt, help."""
