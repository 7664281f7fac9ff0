"""Ways into agent harnesses: Claude Code hooks, installers, importers."""
