"""Project scope (R-SCOPE-1): project keys derived from git, read without spawning git."""
