"""The user model (R-USER-1): USER.md as a list of imperative directives."""
